// The flags and steps shared by the verbs that read one job's traces (analyze, whatif): the
// trace paths and how they are loaded, the import checks (--strict), the job driver, and the
// report written to stdout or -o FILE (and the HTML page to --html FILE) without ever replacing
// an input.
#pragma once

#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "cli/command.h"
#include "common/output_file.h"
#include "job/job.h"
#include "loader/trace_loader.h"

namespace CLI {
class App;
class Option;
class Validator;
}  // namespace CLI

namespace bubblescope {

// Parses one --rank argument "PATH=N" (split at the last '='; N a decimal rank id >= 0).
absl::StatusOr<RankOverride> ParseRankOverride(const std::string& text);

struct LoadedJob {
  Trace trace;
  job::Result job;
};

// How a job's files become a Trace: LoadTrace, or under --mpi the reading spread over processes.
using TraceLoader =
    std::function<absl::StatusOr<Trace>(const std::vector<std::string>&, const LoadOptions&)>;

// How a loaded Trace becomes the job's result: job::Analyze, or under --mpi the analysis of the
// job a part at a time (distributed/distributed_analysis.h).
using JobAnalyzer = std::function<absl::StatusOr<job::Result>(const Trace&, const job::Options&)>;

// Where a job's traces are and how they are read: the input flags' values.
struct JobSource {
  std::vector<std::string> paths;
  LoadOptions load;
  TraceLoader load_trace;   // empty: LoadTrace
  JobAnalyzer analyze_job;  // empty: job::Analyze
  bool strict = false;      // import warnings or an incomplete job are an error
  std::optional<std::string> iteration_marker;
  bool quiet = false;  // --quiet: no progress line, even on a terminal
};

// Prints why the traces could not be loaded: one line, naming --max-file-mb where the reading
// budget ran out.
void PrintLoadError(const absl::Status& status, std::ostream& err);

// Prints a note per file passed over and a line per rank with import warnings or errors
// ("warning: " first, or nothing under --strict); true when `strict` rejects the trace.
bool NoteLoadProblems(const Trace& trace, bool strict, std::ostream& err);

// The source's traces, read with `load` (the source's load options, or more): with a progress line
// on `err` while a long load runs, when `err` is this process's terminal and there is no --quiet
// (cli/progress_line.h).
absl::StatusOr<Trace> LoadShowingProgress(const JobSource& source, LoadOptions load,
                                          std::ostream& err);

// Loads the traces (LoadShowingProgress) and runs the job driver with `options` (the source's
// iteration marker and --jobs added), printing notes and warnings to `err`. nullopt after
// printing why, with *exit_status set.
std::optional<LoadedJob> LoadAndAnalyzeJob(const JobSource& source, job::Options options,
                                           std::ostream& err, int* exit_status);

// Which files of the inputs are read, and how strictly: --rank, --run, --mix-runs, --cycle and
// (where the verb analyses) --strict. analyze, whatif, digest, diff and gate declare them through
// DefineTraceSelection, so they mean the same on every verb.
struct TraceSelection {
  std::vector<std::string> rank_args;  // --rank PATH=N
  std::string record_run;              // --run: one record run's files of several
  bool mix_record_runs = false;
  int32_t profiler_cycle = 0;  // --cycle N; 0: the newest complete one
  bool strict = false;
};

// Declares --rank, --run, --mix-runs and --cycle into `selection` on `command`, each help text
// led by `scope` (empty, or "For a side that is traces. ").
void DefineTraceSelection(CLI::App* command, TraceSelection* selection, const std::string& scope);
// Declares --strict into `strict`, its help led by `scope`.
void DefineStrict(CLI::App* command, bool* strict, const std::string& scope);

// Sets what `selection` says into `source` (its load options and strictness); false after
// printing why a --rank argument is wrong.
bool ApplyTraceSelection(const TraceSelection& selection, JobSource* source, std::ostream& err);

class JobInputCommand : public Command {
 public:
  // The job is too large for this process: spread it (docs/scale.md).
  std::string_view OutOfMemoryAdvice() const override;

 protected:
  // Declares DefineLoadInputs' flags, --strict and --iteration-marker on `command`.
  void DefineInputs(CLI::App* command);
  // Declares what reads the traces (PATH..., -j, --max-file-mb, --rank, --run, --mix-runs,
  // --cycle, --quiet) and nothing of the analysis: `bubblescope digest`'s inputs.
  void DefineLoadInputs(CLI::App* command);
  // The paths and load options those flags give; nullopt after printing why.
  std::optional<JobSource> Source(std::ostream& err) const;
  // Declares --format text|json and -o FILE.
  void DefineOutput(CLI::App* command);
  // Declares --html FILE, described by `what` (the page's contents).
  void DefineHtml(CLI::App* command, const std::string& what);
  // Checks -o, --html and `more` outputs together before any work (common/output_file.h,
  // CheckOutputs): kExitOk, or after printing why, kExitBadInput for two naming one file and
  // kExitFailure for one that cannot be written.
  int CheckOutputFiles(std::vector<NamedOutput> more, std::ostream& err) const;
  // Writes `page` to the --html file, never over one of `inputs`; kExitOk, or kExitFailure
  // after printing why. Nothing to do without --html.
  int WriteHtml(const std::string& page, std::vector<std::string> inputs, std::ostream& err) const;
  bool html_requested() const { return !html_path_.empty(); }
  const std::string& html_path() const { return html_path_; }

  // Declares --layers-per-stage N,N,...: the measured job's layers on each stage, which the
  // rebalance suggestion and layer-move predictions need.
  void DefineLayers(CLI::App* command);

  // Loads the traces (with `load_trace` when given) and runs the job driver (`analyze_job` when
  // given) with `options` (the iteration marker and layer counts added), printing notes and
  // warnings to `err`. nullopt after printing why, with *exit_status set.
  std::optional<LoadedJob> LoadJob(job::Options options, std::ostream& err, int* exit_status,
                                   TraceLoader load_trace = nullptr,
                                   JobAnalyzer analyze_job = nullptr);

  // Writes `report` to stdout or the -o file, never over one of `inputs`; returns the exit
  // status.
  int WriteReport(const std::string& report, std::vector<std::string> inputs, std::ostream& out,
                  std::ostream& err) const;
  // The files a trace was read from or passed over: what -o must never replace.
  static std::vector<std::string> InputFiles(const Trace& trace);

  const std::vector<std::string>& paths() const { return paths_; }
  const std::string& output_path() const { return output_path_; }
  bool quiet() const { return quiet_; }  // --quiet: no progress line, no "wrote FILE" lines

  std::string format_ = "text";
  std::vector<int32_t> layers_per_stage_;

 private:
  std::vector<std::string> paths_;
  std::string output_path_;
  std::string html_path_;  // --html; empty: none
  int jobs_ = 0;
  int32_t max_file_mb_ = 0;  // 0: the automatic reading budget
  TraceSelection selection_;
  bool quiet_ = false;
  std::string iteration_marker_;
  CLI::Option* iteration_marker_option_ = nullptr;  // tells an empty REGEX from none
};

// The files a trace was read from or passed over: what no output may replace.
std::vector<std::string> TraceInputFiles(const Trace& trace);

// What a user whose job ran out of memory can do instead (the verbs that analyse a job, and the
// Python module's analyze).
std::string_view JobOutOfMemoryAdvice();

// Declares -q/--quiet, bound to `quiet`: the one wording of every verb that reads traces.
void DefineQuiet(CLI::App* command, bool* quiet);

// Accepts a decimal int32 >= `minimum` (CLI11's own range checks print unreadable bounds).
CLI::Validator WholeNumberAtLeast(int32_t minimum);
// Accepts a finite decimal number from `low` to `high` (CLI::Range lets NaN through).
CLI::Validator FiniteNumberBetween(double low, double high);

}  // namespace bubblescope
