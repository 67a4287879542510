// Fuzz target for the comparison of runs (`bubblescope diff` and `gate`, docs/diff-and-gate.md):
// the bytes as a baseline file, read by compare::ReadAnalyzeReport (the one reader both kinds of
// side go through), then, when they read, compared with themselves by compare::Diff and
// compare::Gate and rendered by every diff and gate report; the same bytes as a gate config
// file, read by compare::ParseGateConfig.
//
// Input: the whole contents, with no choice bytes: seeds are analyze reports, whose members
// libFuzzer's mutations reach through the dictionary (tests/fuzz/compare.dict).
//
// Each what-if model the report holds (`bubblescope whatif REPORT.json` reads it through the same
// reader) is predicted with the default candidates, its layer move included, when p·m·v is at
// most 4,096 (the defaults simulate m x4: one input stays fast).
//
// Checks: a report that does not read is refused with "<file>: byte <N>: <what>"; one that reads
// compared with itself changes nothing (no shape change, every delta of the pipeline figures 0,
// no finding appeared or disappeared) and passes every increase limit at 0; the diff's JSON is
// always written and is JSON; the text, Markdown and JUnit verdicts are never empty; every model
// read passes whatif::ValidateModel and its predictions return; a config that does not read says
// "<file>:<line>: " first.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "compare/diff.h"
#include "compare/gate.h"
#include "compare/report_reader.h"
#include "fuzz_checks.h"
#include "report/diff_report.h"
#include "report/gate_report.h"
#include "simdjson.h"
#include "whatif/whatif.h"

namespace {

using namespace bubblescope;  // NOLINT(build/namespaces): a fuzz target's private helpers

constexpr std::string_view kFile = "baseline.json";
constexpr std::string_view kConfig = "gate.conf";

void CheckSelfDiff(const compare::RunFigures& run) {
  const compare::DiffResult diff = compare::Diff(run, run);
  if (diff.pipelines.size() != run.pipelines.size())
    fuzz::Fail("a run paired with itself lost a pipeline");
  for (const compare::PipelineDiff& pipeline : diff.pipelines) {
    if (!pipeline.shape_changes.empty()) fuzz::Fail("a run compared with itself changed shape");
    for (const compare::Change* change :
         {&pipeline.bubble_fraction, &pipeline.latency_p50_us, &pipeline.latency_max_us}) {
      if (change->Delta() != 0.0) fuzz::Fail("a run compared with itself has a non-zero delta");
    }
    for (const compare::FindingDiff& finding : pipeline.findings) {
      if (finding.change != compare::FindingChange::kPersisting) {
        fuzz::Fail("a run compared with itself has a finding that appeared or disappeared");
      }
    }
  }
  compare::GateThresholds thresholds;
  thresholds.max_bubble_increase = 0.0;
  thresholds.max_latency_increase = 0.0;
  thresholds.max_memory_increase = 0.0;
  thresholds.max_bubble = 0.5;
  const compare::GateResult gate = compare::Gate(diff, thresholds);
  for (const compare::Check& check : gate.checks) {
    if (check.kind != compare::CheckKind::kMaxBubble &&
        check.outcome == compare::CheckOutcome::kFail) {
      fuzz::Fail("a run gated against itself failed an increase limit of 0");
    }
  }

  for (const compare::PipelineFigures& pipeline : run.pipelines) {
    if (!pipeline.whatif_model.has_value()) continue;
    const whatif::Model& model = *pipeline.whatif_model;
    fuzz::RequireOk(whatif::ValidateModel(model), "a what-if model the reader accepted");
    if (int64_t{model.p} * model.m * model.v > 4096) continue;
    absl::StatusOr<whatif::Result> predicted =
        whatif::Analyze(model, whatif::DefaultCandidates(model, pipeline.rebalance_layers_after));
    (void)predicted;  // a model the simulator refuses says so; it must only return
  }

  absl::StatusOr<std::string> json = DiffJson(diff, "fuzz");
  fuzz::RequireOk(json.status(), "the diff's JSON report");
  simdjson::dom::parser parser;
  simdjson::dom::element document;
  if (parser.parse(*json).get(document) != simdjson::SUCCESS)
    fuzz::Fail("the diff's JSON is not JSON");
  if (DiffText(diff).empty() || GateText(gate).empty() || GateMarkdown(gate).empty() ||
      GateJunit(gate).empty()) {
    fuzz::Fail("an empty diff or gate report");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  compare::LooksLikeBubblescopeReport(bytes);  // how a side is told apart: any bytes, no crash
  absl::StatusOr<compare::RunFigures> run = compare::ReadAnalyzeReport(kFile, bytes);
  if (run.ok()) {
    CheckSelfDiff(*run);
  } else {
    fuzz::CheckFileError(run.status(), kFile);
  }
  absl::StatusOr<compare::GateThresholds> config = compare::ParseGateConfig(bytes, kConfig);
  if (!config.ok()) {
    const std::string_view message(config.status().message().data(),
                                   config.status().message().size());
    if (message.substr(0, kConfig.size() + 1) != std::string(kConfig) + ":") {
      fuzz::Fail("a config error without \"<file>:<line>: \"");
    }
  }
  return 0;
}
