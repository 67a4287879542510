#include "cli/gate_command.h"

#include <iterator>
#include <optional>
#include <string>

#include "CLI/CLI.hpp"
#include "absl/strings/str_cat.h"
#include "compare/diff.h"
#include "compare/gate.h"
#include "report/gate_report.h"
#include "text/one_line.h"

namespace bubblescope {
namespace {

constexpr char kGateFooter[] = R"(
BASE and CURRENT are each a JSON report of `bubblescope analyze --format json` (a baseline is
usually one kept from an earlier run) or traces analysed on the fly. Bubble and latency are
checked per pipeline, peak memory (allocated) per stage; pipelines pair as in `bubblescope
diff`. A threshold given as a flag overrides the same key in --config FILE, a text file of
'key = value' lines ('#' starts a comment), keys as the flags without '--':

  # .bubblescope-gate
  max-bubble = 0.30
  max-bubble-increase = 2%      # percentage points
  max-latency-increase = 5%
  max-memory-increase = 5%

Examples:
  bubblescope gate --baseline baseline.json traces/ --max-bubble-increase 0.02
  bubblescope gate --baseline baseline.json current.json --config .bubblescope-gate \
      --markdown gate.md --junit gate.xml

Exit status: 0 every check passed; 1 a regression (a check failed); 2 usage error, no
threshold, every check skipped (nothing checked), unreadable or malformed input, a report of
another schema major version, a side without any pipeline, a check whose figure cannot be
computed (no complete iteration), or an output file that could not be written. See
docs/diff-and-gate.md.
)";

struct FlagSpec {
  compare::CheckKind kind;
  std::string_view type_name;
  std::string_view help;
};

constexpr FlagSpec kThresholdFlags[] = {
    {compare::CheckKind::kMaxBubble, "F",
     "Largest measured bubble fraction of a pipeline (0.25 or 25%)"},
    {compare::CheckKind::kMaxBubbleIncrease, "F",
     "Largest rise of a pipeline's bubble over the baseline, in fraction points (0.02 or 2%)"},
    {compare::CheckKind::kMaxStageBubbleIncrease, "F",
     "Largest rise of each stage's bubble over the baseline's, in fraction points (0.05 or 5%)"},
    {compare::CheckKind::kMaxLatency, "T",
     "Largest iteration latency of a pipeline, with its unit (120ms, 0.12s, 120000us)"},
    {compare::CheckKind::kMaxLatencyIncrease, "P",
     "Largest relative rise of a pipeline's iteration latency over the baseline (5% or 0.05)"},
    {compare::CheckKind::kMaxMemory, "BYTES",
     "Largest peak allocated memory of a stage (40GiB, 512MiB, or bytes)"},
    {compare::CheckKind::kMaxMemoryIncrease, "P",
     "Largest relative rise of a stage's peak allocated memory over the baseline (5% or 0.05)"},
};

constexpr std::string_view kLatencyKey = "latency";

}  // namespace

CLI::App* GateCommand::Define(CLI::App& app) {
  CLI::App* command = app.add_subcommand(
      "gate",
      "Check a run against a baseline: fail (exit 1) when the bubble, latency or memory "
      "crosses a threshold; text, Markdown and JUnit verdicts for CI");
  command->footer(kGateFooter);
  command->add_option("--baseline", baseline_, "The baseline run: an analyze JSON report or traces")
      ->type_name("BASE")
      ->required();
  command->add_option("CURRENT", current_, "The run to check: a report or traces")->required();
  command->add_option("--config", config_path_, "Thresholds file ('key = value' lines)")
      ->type_name("FILE");
  threshold_flags_.reserve(std::size(kThresholdFlags) + 1);
  for (const FlagSpec& spec : kThresholdFlags) {
    threshold_flags_.push_back({std::string(compare::ThresholdKey(spec.kind)), "", nullptr});
    ThresholdFlag& flag = threshold_flags_.back();
    flag.option = command->add_option("--" + flag.key, flag.value, std::string(spec.help))
                      ->type_name(std::string(spec.type_name));
  }
  threshold_flags_.push_back({std::string(kLatencyKey), "", nullptr});
  threshold_flags_.back().option =
      command
          ->add_option("--latency", threshold_flags_.back().value,
                       "Which latency the latency limits apply to: p50 (default), p90 or max")
          ->type_name("p50|p90|max");
  command
      ->add_option("--markdown", markdown_path_,
                   "Also write the verdict as Markdown (a pull-request comment) to FILE")
      ->type_name("FILE");
  command
      ->add_option("--junit", junit_path_,
                   "Also write the verdict as JUnit XML (one test case per check) to FILE")
      ->type_name("FILE");
  DefineTraceOptions(command);
  return command;
}

int GateCommand::Run(std::ostream& out, std::ostream& err) {
  // The gate's exit status 1 means a regression: an output it cannot write is 2, as below.
  if (CheckCommandOutputs({{"--markdown", markdown_path_}, {"--junit", junit_path_}}, err) !=
      kExitOk) {
    return kExitBadInput;
  }
  compare::GateThresholds thresholds;
  if (!config_path_.empty()) {
    absl::StatusOr<compare::GateThresholds> parsed = ReadGateConfigFile(config_path_);
    if (!parsed.ok()) {
      err << "bubblescope: --config: " << MessageLine(parsed.status()) << "\n";
      return kExitBadInput;
    }
    thresholds = *parsed;
  }
  for (const ThresholdFlag& flag : threshold_flags_) {
    if (flag.option->count() == 0) continue;
    if (absl::Status set = compare::SetThreshold(flag.key, flag.value, &thresholds); !set.ok()) {
      err << "bubblescope: --" << MessageLine(set) << "\n";
      return kExitBadInput;
    }
  }
  if (thresholds.Empty()) {
    err << "bubblescope: gate: no threshold given (--max-bubble, --max-bubble-increase, "
           "--max-stage-bubble-increase, --max-latency, --max-latency-increase, --max-memory, "
           "--max-memory-increase or --config FILE)\n";
    return kExitBadInput;
  }

  std::optional<compare::RunFigures> baseline = ReadSide(baseline_, err);
  if (!baseline.has_value()) return kExitBadInput;
  std::optional<compare::RunFigures> current = ReadSide(current_, err);
  if (!current.has_value()) return kExitBadInput;
  if (!RankOverridesUsed(err)) return kExitBadInput;
  const compare::GateResult result = compare::Gate(compare::Diff(*baseline, *current), thresholds);

  if (!markdown_path_.empty() && !WriteOutput(markdown_path_, GateMarkdown(result), err)) {
    return kExitBadInput;
  }
  if (!junit_path_.empty() && !WriteOutput(junit_path_, GateJunit(result), err)) {
    return kExitBadInput;
  }
  // The verdict is in the exit status; a closed stdout loses only its text.
  PrintReport(GateText(result), out, err);
  if (result.NothingChecked()) {
    err << "bubblescope: gate: nothing was checked: "
        << (result.checks.empty()
                ? std::string("no check applies to these runs")
                : absl::StrCat("all ", result.checks.size(), " checks were skipped (",
                               result.checks.front().note, ")"))
        << "\n";
    return kExitBadInput;
  }
  if (result.Undecided()) {
    err << "bubblescope: gate: " << result.Count(compare::CheckOutcome::kError)
        << " checks cannot be judged (a figure that cannot be computed is no pass)\n";
    return kExitBadInput;
  }
  return result.Passed() ? kExitOk : kExitFailure;
}

}  // namespace bubblescope
