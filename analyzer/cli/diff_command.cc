#include "cli/diff_command.h"

#include <optional>
#include <string>
#include <utility>

#include "CLI/CLI.hpp"
#include "compare/diff.h"
#include "report/diff_report.h"

namespace bubblescope {
namespace {

constexpr char kDiffFooter[] = R"(
A and B are each a JSON report of `bubblescope analyze --format json`, or a trace directory or
trace file, analysed on the fly exactly as `analyze` would. Pipelines are paired by their
stage structure: the same ranks in the same order, else the same rank set, else the same
number of stages, else by position. Where a side has several complete iterations, a
difference no larger than the iteration-to-iteration spread is marked as within it.

Examples:
  bubblescope diff before.json after.json
  bubblescope diff before.json traces_after/ --format json -o diff.json

Exit status: 0 success; 1 the report could not be written; 2 usage error, unreadable or
malformed input, a report of another schema major version, or a side without any pipeline.
See docs/diff-and-gate.md.
)";

}  // namespace

CLI::App* DiffCommand::Define(CLI::App& app) {
  CLI::App* command = app.add_subcommand(
      "diff",
      "Compare two runs (analyze JSON reports or traces): shape, bubble, latency, "
      "memory, per-stage times, links and findings, pipeline by pipeline");
  command->footer(kDiffFooter);
  command->add_option("A", side_a_, "The first run: a report or traces")->required();
  command->add_option("B", side_b_, "The second run: a report or traces")->required();
  command->add_option("--format", format_, "Report format")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  command
      ->add_option("-o,--output", output_path_,
                   "Write the report to FILE instead of stdout (a regular file is replaced "
                   "atomically; an input is never overwritten)")
      ->type_name("FILE");
  DefineTraceOptions(command);
  return command;
}

int DiffCommand::Run(std::ostream& out, std::ostream& err) {
  if (const int checked = CheckCommandOutputs({{"-o", output_path_}}, err); checked != kExitOk) {
    return checked;
  }
  std::optional<compare::RunFigures> a = ReadSide(side_a_, err);
  if (!a.has_value()) return kExitBadInput;
  std::optional<compare::RunFigures> b = ReadSide(side_b_, err);
  if (!b.has_value()) return kExitBadInput;
  if (!RankOverridesUsed(err)) return kExitBadInput;
  const compare::DiffResult diff = compare::Diff(*a, *b);
  std::string report;
  if (format_ == "json") {
    absl::StatusOr<std::string> json = DiffJson(diff, tool_version());
    if (!json.ok()) {
      err << "bubblescope: internal error: " << MessageLine(json.status()) << "\n";
      return kExitFailure;
    }
    report = *std::move(json);
  } else {
    report = DiffText(diff);
  }
  if (!output_path_.empty()) return WriteOutput(output_path_, report, err) ? kExitOk : kExitFailure;
  return PrintReport(report, out, err);
}

}  // namespace bubblescope
