#include "cli/analyze_command.h"

#include <algorithm>
#include <charconv>
#include <csignal>
#include <cstdint>
#include <set>
#include <string>
#include <vector>
#include <utility>

#include "CLI/CLI.hpp"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "common/output_file.h"
#include "report/job_report.h"
#include "report/pipeline_report.h"
#include "report/summary_report.h"
#include "text/one_line.h"

namespace bubblescope {
namespace {

constexpr char kAnalyzeFooter[] = R"(
Each PATH is a trace file (*.json or *.json.gz, as written by torch.profiler / Kineto) or a
directory whose *.json and *.json.gz files are read (one file per rank). Rank ids come from each
file's distributedInfo, else from the file name (rank3, worker3, ...), else 0 for a single
file; --rank PATH=N overrides all of these. In a directory, JSON files with no traceEvents at
all (a truth.json, a config) are passed over with a note. Traces of several `bubblescope record`
runs (a directory recorded into twice) are never paired by accident: choose one with --run ID,
or combine them with --mix-runs.

Examples:
  bubblescope analyze traces/
  bubblescope analyze rank0.json.gz rank1.json.gz --format json -o summary.json
  bubblescope analyze run/ --rank run/host-a.json.gz=0 --rank run/host-b.json.gz=1
  bubblescope analyze traces/ --strict     # refuse traces with damaged events or cut short
  bubblescope analyze traces/ --run 20261125-1328   # one record run of several in traces/
  bubblescope analyze traces/ --iteration-marker '^train_step$'
  bubblescope analyze traces/ --layers-per-stage 8,8,8,8   # where to move layers

Pipelines are found in the point-to-point traffic between ranks (several in a DP x PP job);
each is aligned to one clock from its matched sends and receives before it is measured; ranks
without p2p traffic belong to no pipeline, and a job without any reports its collectives
instead (docs/cross-rank.md). Iterations are the ProfilerStep#N ranges, or with
--iteration-marker the CPU annotations whose name matches REGEX (RE2 syntax, searched anywhere
in the name); without either, the periods of the op sequence every rank repeats; else the
whole trace is one iteration. docs/bubble.md defines every figure; docs/json-report.md every
JSON key.

Exit status: 0 success; 1 the report could not be written; 2 usage error, unreadable input, or
(--strict) import warnings or errors, or a job missing ranks it declares or its pipelines reach.
)";

using text::OneLine;

// "byte <N>: <count> <description>" for every counter of `rank` at or above `severity`, joined
// with "; " (empty when there are none).
std::string ImportProblems(const Rank& rank, Severity severity) {
  std::vector<std::string> parts;
  const ImportStats& stats = rank.stats;
  for (size_t i = 0; i < kImportCounterCount; ++i) {
    auto counter = static_cast<ImportCounter>(i);
    const ImportCounterSpec& spec = CounterSpec(counter);
    if (stats.count(counter) == 0 || spec.severity < severity) continue;
    std::string part;
    if (counter == ImportCounter::kTruncated && !stats.truncation_detail().empty()) {
      // A file is cut once: say where and what was kept rather than "1 file cut short".
      part = absl::StrCat("byte ", stats.first_offset(counter),
                          ": file cut short: ", stats.truncation_detail());
    } else {
      part = absl::StrCat("byte ", stats.first_offset(counter), ": ", stats.count(counter), " ",
                          std::string(spec.description));
    }
    parts.push_back(std::move(part));
  }
  return absl::StrJoin(parts, "; ");
}

// Accepts a decimal int32 >= `minimum`; CLI11's own range checks print unreadable bounds.
CLI::Validator WholeNumberAtLeast(int32_t minimum) {
  return CLI::Validator(
      [minimum](std::string& value) {
        int32_t number = 0;
        const char* last = value.data() + value.size();
        auto [end, error] = std::from_chars(value.data(), last, number);
        return error == std::errc() && end == last && number >= minimum
                   ? std::string()
                   : absl::StrCat("'", value, "' is not a whole number >= ", minimum);
      },
      "");
}

// One note per file passed over, except the files of record runs --run left out: a directory
// recorded into many times would bury the report under them, so they are summed up.
void NoteSkippedFiles(const std::vector<SkippedFile>& skipped_files, std::ostream& err) {
  std::set<std::string> other_runs;
  size_t other_run_files = 0;
  for (const SkippedFile& skipped : skipped_files) {
    if (skipped.other_record_run) {
      other_runs.insert(skipped.other_record_run->empty() ? "files without a run id"
                                                          : *skipped.other_record_run);
      ++other_run_files;
      continue;
    }
    err << "note: skipped " << OneLine(skipped.path) << ": " << OneLine(skipped.reason) << "\n";
  }
  if (other_run_files == 0) return;
  err << "note: left out " << other_run_files << (other_run_files == 1 ? " file" : " files")
      << " of other record runs ("
      << absl::StrJoin(other_runs, ", ") << ")\n";
}

}  // namespace

absl::StatusOr<RankOverride> ParseRankOverride(const std::string& text) {
  size_t equals = text.rfind('=');
  if (equals == std::string::npos || equals == 0 || equals + 1 == text.size()) {
    return absl::InvalidArgumentError(absl::StrCat("expected PATH=N, got '", text, "'"));
  }
  RankOverride parsed;
  parsed.path = text.substr(0, equals);
  const char* first = text.data() + equals + 1;
  const char* last = text.data() + text.size();
  auto [end, error] = std::from_chars(first, last, parsed.rank);
  if (error != std::errc() || end != last || parsed.rank < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", text, "': N must be a whole number from 0 to 2147483647"));
  }
  return parsed;
}

AnalyzeCommand::AnalyzeCommand(std::string tool_version)
    : tool_version_(std::move(tool_version)) {}

CLI::App* AnalyzeCommand::Define(CLI::App& app) {
  CLI::App* analyze = app.add_subcommand(
      "analyze", "Summarise every rank (device span, compute / communication / memcpy time, idle "
                 "time, op counts, profiler steps, peak memory), measure the pipeline bubble, "
                 "infer the schedule and list findings");
  analyze->footer(kAnalyzeFooter);
  analyze->add_option("PATH", paths_, "Trace files or directories of per-rank traces")
      ->required();
  analyze->add_option("--format", format_, "Report format")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  analyze->add_option("-o,--output", output_path_,
                      "Write the report to FILE instead of stdout (a regular file is replaced "
                      "atomically; a device or FIFO is written into; an input is never "
                      "overwritten)")
      ->type_name("FILE");
  analyze->add_option("-j,--jobs", jobs_, "Files read in parallel; 0 = one per core")
      ->check(WholeNumberAtLeast(0))
      ->capture_default_str();
  analyze
      ->add_option("--max-file-mb", max_file_mb_,
                   "The most trace text (after gzip) one file may hold, in MiB (default: the "
                   "memory this process may use, divided by 3 per file read at once)")
      ->type_name("MB")
      ->check(WholeNumberAtLeast(1));
  analyze
      ->add_option("--rank", rank_args_,
                   "Give the file PATH rank id N (repeatable); overrides what the file says")
      ->type_name("PATH=N")
      ->allow_extra_args(false)
      ->check(CLI::Validator(
          [](std::string& value) {
            absl::StatusOr<RankOverride> parsed = ParseRankOverride(value);
            return parsed.ok() ? std::string() : std::string(parsed.status().message());
          },
          ""));
  CLI::Option* run_option =
      analyze
          ->add_option("--run", record_run_,
                       "Of inputs from several `bubblescope record` runs, analyze the run with "
                       "this id (or a unique prefix of it); the others' files are left out")
          ->type_name("ID");
  analyze
      ->add_flag("--mix-runs", mix_record_runs_,
                 "Analyze the files of several record runs together (by default that is an "
                 "error: their ranks would be paired as if from one job)")
      ->excludes(run_option);
  analyze->add_flag("--strict", strict_,
                    "Exit with status 2, printing no report, if any file has an import warning "
                    "or error (damaged events, truncation) or the job is incomplete (ranks it "
                    "declares, or its pipelines send to, are not in the trace)");
  iteration_marker_option_ =
      analyze
          ->add_option("--iteration-marker", iteration_marker_,
                       "Regular expression naming the CPU annotations that mark iterations "
                       "(default: the ProfilerStep#N ranges)")
          ->type_name("REGEX");
  analyze
      ->add_option("--layers-per-stage", layers_per_stage_,
                   "Model layers on each pipeline stage, first stage first (e.g. 8,8,8,8): "
                   "suggests the layer move that most shortens the simulated iteration "
                   "(default: the ranks' own 'bubblescope:layers=N' annotations, if any)")
      ->type_name("N,N,...")
      ->delimiter(',')
      ->check(WholeNumberAtLeast(1));
  analyze
      ->add_option("--slow-link-threshold", slow_link_threshold_,
                   "Flag a link as slow when its median bandwidth is below this fraction of the "
                   "job's median link bandwidth for messages of similar size")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  return analyze;
}

job::Options AnalyzeCommand::JobOptions() const {
  job::Options options;
  if (iteration_marker_option_ != nullptr && iteration_marker_option_->count() > 0) {
    options.iterations.iteration_marker = iteration_marker_;
  }
  options.slow.threshold = slow_link_threshold_;
  options.layers_per_stage = layers_per_stage_;
  return options;
}

int AnalyzeCommand::Run(std::ostream& out, std::ostream& err) {
  LoadOptions load_options;
  load_options.jobs = jobs_;
  load_options.max_file_bytes = int64_t{max_file_mb_} << 20;
  load_options.record_run = RecordRunChoice{record_run_, mix_record_runs_};
  for (const std::string& arg : rank_args_) {
    absl::StatusOr<RankOverride> parsed = ParseRankOverride(arg);
    if (!parsed.ok()) {  // already rejected while parsing; kept so no path skips the check
      err << "bubblescope: --rank: " << MessageLine(parsed.status()) << "\n";
      return kExitBadInput;
    }
    load_options.rank_overrides.push_back(*std::move(parsed));
  }

  absl::StatusOr<Trace> trace = LoadTrace(paths_, load_options);
  if (!trace.ok()) {
    err << "bubblescope: " << MessageLine(trace.status())
        << (absl::IsResourceExhausted(trace.status()) ? " (--max-file-mb sets it)" : "") << "\n";
    return kExitBadInput;
  }
  NoteSkippedFiles(trace->skipped_files, err);
  bool rejected = false;
  for (const Rank& rank : trace->ranks) {
    std::string problems = ImportProblems(rank, Severity::kWarning);
    if (problems.empty()) continue;
    err << (strict_ ? "" : "warning: ") << OneLine(rank.source_path) << ": " << OneLine(problems)
        << "\n";
    rejected = rejected || strict_;
  }
  if (rejected) return kExitBadInput;

  absl::StatusOr<job::Result> job = job::Analyze(*trace, JobOptions());
  if (!job.ok()) {
    err << "bubblescope: " << MessageLine(job.status()) << "\n";
    return kExitBadInput;
  }
  if (job->Incomplete()) {
    // The report says so under its headline too; on stderr it reaches a user piping the JSON.
    std::string why = IncompleteJobText(*job);
    while (!why.empty() && why.back() == '\n') why.pop_back();
    err << (strict_ ? "bubblescope: --strict: " : "warning: ") << why << "\n";
    if (strict_) return kExitBadInput;
  }

  SummaryReportOptions report_options;
  report_options.tool_version = tool_version_;
  std::string report;
  if (format_ == "json") {
    absl::StatusOr<std::string> json = AnalyzeJson(*job, report_options);
    if (!json.ok()) {
      err << "bubblescope: internal error: " << MessageLine(json.status()) << "\n";
      return kExitFailure;
    }
    report = *std::move(json);
  } else {
    report = AnalyzeText(*job, report_options);
  }

  if (output_path_.empty()) {
    // A reader that stops early (`| head`) must not kill bubblescope with SIGPIPE: the failed
    // write is reported instead. analyze starts no process that could inherit the setting.
    std::signal(SIGPIPE, SIG_IGN);
    out << report << std::flush;
    if (!out) {
      err << "bubblescope: cannot write the report to standard output\n";
      return kExitFailure;
    }
    return kExitOk;
  }
  // Never over a trace this run read, nor over a file it passed over in a directory.
  OutputFileOptions output_options;
  for (const Rank& rank : trace->ranks) output_options.protected_files.push_back(rank.source_path);
  for (const SkippedFile& skipped : trace->skipped_files) {
    output_options.protected_files.push_back(skipped.path);
  }
  if (absl::Status written = WriteOutputFile(output_path_, report, output_options);
      !written.ok()) {
    err << "bubblescope: " << MessageLine(written) << "\n";
    return kExitFailure;
  }
  return kExitOk;
}

}  // namespace bubblescope
