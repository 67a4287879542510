// What `bubblescope diff` and `bubblescope gate` share: reading one side of a comparison (an
// analyze JSON report, or traces analysed on the fly whose figures are read from the job result
// through the rows the report's writer and reader use, compare/report_schema.h), the flags for
// reading traces, and writing output files without ever replacing a file that was read.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "cli/command.h"
#include "cli/job_input.h"
#include "compare/gate.h"
#include "compare/run_figures.h"

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace bubblescope {

// Whether `path` is a file whose JSON opens a bubblescope report (not a directory, not a trace);
// an error naming the file when it cannot be opened.
absl::StatusOr<bool> IsReportFile(const std::string& path);

// Reads analyze's JSON report at `path` (compare/report_reader.h) through the one file reader
// (loader/file_source.h) within the automatic reading budget: one line naming the file on error
// (out of memory, over the budget, malformed, a figure out of range).
absl::StatusOr<compare::RunFigures> ReadReportFile(const std::string& path);

// The reading budget of a gate config (docs/input-errors.md, "Memory"): /dev/zero or a huge
// file stops at 1 MiB.
inline constexpr int64_t kMaxGateConfigBytes = int64_t{1} << 20;

// Reads the gate config at `path` (compare::ParseGateConfig) through the one file reader within
// kMaxGateConfigBytes. Errors start with the path: "<path>: <strerror>" (a directory is one),
// "<path>: byte <N>: more than 1 MiB ...", "<path>:<line>: <why>".
absl::StatusOr<compare::GateThresholds> ReadGateConfigFile(const std::string& path);

class CompareCommand : public Command {
 protected:
  explicit CompareCommand(std::string tool_version) : tool_version_(std::move(tool_version)) {}

  // Declares -j/--jobs, --iteration-marker, --quiet and analyze's --strict, --rank, --run,
  // --mix-runs and --cycle (used for sides that are traces).
  void DefineTraceOptions(CLI::App* command);

  // Reads `path`: a file whose JSON opens with a bubblescope "schema" member is read as analyze's
  // report; anything else (a directory, trace files, gzip) is loaded and analysed as by
  // `bubblescope analyze`. nullopt after printing one line naming the file to `err`: unreadable
  // or malformed input, a schema of another major version, or no pipeline at all.
  std::optional<compare::RunFigures> ReadSide(const std::string& path, std::ostream& err);

  // After both sides are read: false, after printing which, when a --rank argument named no
  // file of either side (a side that is a report takes none).
  bool RankOverridesUsed(std::ostream& err) const;

  // Writes `contents` to `path` (common/output_file.h), refusing every file a side read.
  // Prints why and returns false when it could not.
  bool WriteOutput(const std::string& path, const std::string& contents, std::ostream& err) const;

  const std::string& tool_version() const { return tool_version_; }

 private:
  std::optional<compare::RunFigures> ReadReport(const std::string& path, std::ostream& err);
  std::optional<compare::RunFigures> AnalyseTraces(const std::string& path, std::ostream& err);

  std::string tool_version_;
  TraceSelection selection_;
  int jobs_ = 0;
  bool quiet_ = false;
  std::string iteration_marker_;
  CLI::Option* iteration_marker_option_ = nullptr;
  std::vector<std::string> files_read_;  // never overwritten by an output
  std::set<size_t> overrides_used_;      // the --rank arguments some side's files took
};

}  // namespace bubblescope
