// Fuzz target for report files given to `bubblescope diff`, `gate --baseline` and `whatif`
// (docs/diff-and-gate.md, docs/whatif.md): the bytes as a file, read through the one file reader
// (loader/file_source.h: the reading budget, gzip) into compare::ReadPaddedAnalyzeReport, as
// cli::ReadReportFile does; then, when they read, compared with themselves, gated, and their
// what-if models predicted and written.
//
// Input: the file's contents, then one choice byte off the end (fuzz_input.h): 0 reads with the
// automatic reading budget (cli::ReadReportFile itself); 1..255 with a budget of that many
// times 64 bytes, so budgets are met mid-file and mid-gzip.
//
// Checks: an error is one line naming the file first; every figure read lies in the range of
// what it measures (0..1 for fractions, 0..2^62 ns for times, 0..2^53 for bytes); a run gated
// against itself never fails an increase limit of 0, and a check on a pipeline without a
// complete iteration is an error, never a pass; diff's and whatif's JSON reports are written
// and every number in them reads back with bubblescope's own number reader.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "cli/compare_input.h"
#include "compare/diff.h"
#include "compare/figure_range.h"
#include "compare/gate.h"
#include "compare/report_reader.h"
#include "file_fuzz_util.h"
#include "fuzz_checks.h"
#include "fuzz_input.h"
#include "loader/file_source.h"
#include "report/diff_report.h"
#include "report/gate_report.h"
#include "report/whatif_model_json.h"
#include "report/whatif_report.h"
#include "whatif/whatif.h"

namespace {

using namespace bubblescope;  // NOLINT(build/namespaces): a fuzz target's private helpers

void InRange(double value, compare::Figure figure, std::string_view what) {
  if (!compare::FigureInRange(value, figure)) {
    fuzz::Fail(std::string(what) + " read outside the range of what it measures");
  }
}

void CheckFigures(const compare::RunFigures& run) {
  using compare::Figure;
  for (const compare::PipelineFigures& pipeline : run.pipelines) {
    InRange(pipeline.bubble_fraction, Figure::kFraction, "a bubble");
    for (double latency :
         {pipeline.latency_p50_us, pipeline.latency_p90_us, pipeline.latency_max_us}) {
      InRange(latency, Figure::kMicros, "a latency");
    }
    if (pipeline.complete_iterations < 0) fuzz::Fail("a negative count of iterations");
    for (const compare::IterationFigures& iteration : pipeline.iterations) {
      InRange(iteration.window_us, Figure::kMicros, "an iteration window");
      InRange(iteration.bubble_fraction, Figure::kFraction, "an iteration's bubble");
    }
    for (const compare::StageFigures& stage : pipeline.stage_figures) {
      InRange(stage.bubble_fraction, Figure::kFraction, "a stage's bubble");
      if (stage.peak_allocated_bytes) {
        InRange(*stage.peak_allocated_bytes, Figure::kBytes, "a stage's peak memory");
      }
    }
  }
}

void Compare(const compare::RunFigures& run) {
  const compare::DiffResult diff = compare::Diff(run, run);
  compare::GateThresholds thresholds;
  thresholds.max_bubble = 0.5;
  thresholds.max_bubble_increase = 0.0;
  thresholds.max_latency_increase = 0.0;
  thresholds.max_stage_bubble_increase = 0.0;
  thresholds.max_memory_increase = 0.0;
  const compare::GateResult gate = compare::Gate(diff, thresholds);
  for (const compare::Check& check : gate.checks) {
    if (check.kind != compare::CheckKind::kMaxBubble &&
        check.outcome == compare::CheckOutcome::kFail) {
      fuzz::Fail("a run gated against itself failed an increase limit of 0");
    }
  }
  for (size_t i = 0; i < diff.pipelines.size(); ++i) {
    if (diff.pipelines[i].no_complete_iteration_b.empty()) continue;
    if (gate.Passed()) fuzz::Fail("a gate passed a pipeline without a complete iteration");
  }
  absl::StatusOr<std::string> json = DiffJson(diff, "fuzz");
  fuzz::RequireOk(json.status(), "the diff's JSON report");
  fuzz::CheckNumbersReadBack(*json, "the diff's JSON report");
  if (GateText(gate).empty() || GateJunit(gate).empty()) fuzz::Fail("an empty gate report");
}

// `bubblescope whatif REPORT.json`: each model predicted with the default candidates (when
// p·m·v is at most 4,096, so one input stays fast) and written as JSON.
void PredictWhatIf(const compare::RunFigures& run) {
  std::vector<PipelineWhatIf> pipelines;
  for (const ReportedPipeline& pipeline : ReportedPipelinesOf(run)) {
    PipelineWhatIf entry{pipeline.pipeline, pipeline.ranks, absl::UnknownError("not predicted"),
                         std::nullopt};
    if (!pipeline.model.ok()) {
      entry.result = pipeline.model.status();
    } else if (int64_t{pipeline.model->p} * pipeline.model->m * pipeline.model->v <= 4096) {
      entry.result = whatif::Analyze(
          *pipeline.model,
          whatif::DefaultCandidates(*pipeline.model, pipeline.rebalance_layers_after));
    }
    pipelines.push_back(std::move(entry));
  }
  absl::StatusOr<std::string> json = WhatIfJson(pipelines, "fuzz");
  fuzz::RequireOk(json.status(), "whatif's JSON report");
  fuzz::CheckNumbersReadBack(*json, "whatif's JSON report");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::FuzzInput input(data, size);
  const uint8_t budget = input.TakeByte();
  const std::string path = fuzz::WriteWorkFile("report.json", input.rest());
  absl::StatusOr<compare::RunFigures> run = absl::UnknownError("not read");
  if (budget == 0) {
    run = ReadReportFile(path);
  } else {
    absl::StatusOr<FileContents> contents = ReadFileSource(path, int64_t{budget} * 64);
    run = contents.ok() ? compare::ReadPaddedAnalyzeReport(path, contents->text)
                        : absl::StatusOr<compare::RunFigures>(contents.status());
  }
  if (!run.ok()) {
    fuzz::CheckOneLineAbout(run.status(), path);
    return 0;
  }
  CheckFigures(*run);
  Compare(*run);
  PredictWhatIf(*run);
  return 0;
}
