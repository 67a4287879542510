#include "cli/job_input.h"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cli/progress_line.h"
#include "common/output_file.h"
#include "report/job_report.h"
#include "synth/simulated_set.h"
#include "text/one_line.h"

namespace bubblescope {
namespace {

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
    // Where the first one lies: a byte of a text file, a table's row of a database, or
    // nothing where neither is known.
    std::string part = !stats.first_where(counter).empty()
                           ? absl::StrCat(OneLine(stats.first_where(counter)), ": ")
                       : stats.first_offset(counter) >= 0
                           ? absl::StrCat("byte ", stats.first_offset(counter), ": ")
                           : std::string();
    if (counter == ImportCounter::kTruncated && !stats.truncation_detail().empty()) {
      // A file is cut once: say where and what was kept rather than "1 file cut short".
      absl::StrAppend(&part, "file cut short: ", stats.truncation_detail());
    } else {
      absl::StrAppend(&part, stats.count(counter), " ", std::string(spec.description));
    }
    parts.push_back(std::move(part));
  }
  return absl::StrJoin(parts, "; ");
}

// One note per file passed over, except the files of record runs --run left out: a directory
// recorded into many times would bury the report under them, so they are summed up.
void NoteSkippedFiles(const std::vector<SkippedFile>& skipped_files, std::ostream& err) {
  std::set<std::string> other_runs;
  size_t other_run_files = 0;
  for (const SkippedFile& skipped : skipped_files) {
    if (skipped.other_profiler_cycle) continue;  // said with the cycles (NoteProfilerCycles)
    // The truth `bubblescope simulate` writes beside its traces, in every folder it makes: a
    // note each time would only be noise. Any other JSON is named.
    if (skipped.other_json &&
        std::filesystem::path(skipped.path).filename() == sim::kTruthFileName) {
      continue;
    }
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
      << " of other record runs (" << absl::StrJoin(other_runs, ", ") << ")\n";
}

// The cycles found when the inputs hold several, and the one read: one line.
void NoteProfilerCycles(const Trace& trace, std::ostream& err) {
  const ProfilerCycles& cycles = trace.profiler_cycles;
  if (cycles.found.empty()) return;
  size_t left_out = 0;
  for (const SkippedFile& skipped : trace.skipped_files) {
    left_out += skipped.other_profiler_cycle.has_value() ? 1 : 0;
  }
  err << "note: the traces hold " << cycles.found.size()
      << " profiler cycles: " << ListProfilerCycles(cycles.found) << "; reading cycle "
      << cycles.chosen << (cycles.by_flag ? " (--cycle)" : " (the newest complete one)")
      << ", leaving out " << left_out << (left_out == 1 ? " file" : " files")
      << "; --cycle N reads another\n";
}

}  // namespace

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

CLI::Validator FiniteNumberBetween(double low, double high) {
  return CLI::Validator(
      [low, high](std::string& value) {
        double number = 0.0;
        const char* last = value.data() + value.size();
        auto [end, error] = std::from_chars(value.data(), last, number);
        // from_chars reads "nan" and "inf", which compare false with every bound.
        return error == std::errc() && end == last && std::isfinite(number) && number >= low &&
                       number <= high
                   ? std::string()
                   : absl::StrCat("'", value, "' is not a number from ", low, " to ", high);
      },
      "");
}

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

void DefineStrict(CLI::App* command, bool* strict, const std::string& scope) {
  command->add_flag("--strict", *strict,
                    scope +
                        "Exit with status 2, printing no report, if any file has an import "
                        "warning or error (damaged events, truncation), the job is "
                        "incomplete (ranks it declares, or its pipelines send to, are not in "
                        "the trace), its files cannot be one run's (docs/analyze.md, \"One "
                        "run\") or a pipeline has no complete iteration");
}

void DefineTraceSelection(CLI::App* command, TraceSelection* selection, const std::string& scope) {
  command
      ->add_option("--rank", selection->rank_args,
                   scope +
                       "Give the file PATH rank id N (repeatable); overrides what the file "
                       "says")
      ->type_name("PATH=N")
      ->allow_extra_args(false)
      ->check(CLI::Validator(
          [](std::string& value) {
            absl::StatusOr<RankOverride> parsed = ParseRankOverride(value);
            return parsed.ok() ? std::string() : std::string(parsed.status().message());
          },
          ""));
  CLI::Option* run_option =
      command
          ->add_option("--run", selection->record_run,
                       scope +
                           "Of inputs from several `bubblescope record` runs, read the run "
                           "with this id (or a unique prefix of it); the others' files are "
                           "left out")
          ->type_name("ID");
  command
      ->add_flag("--mix-runs", selection->mix_record_runs,
                 scope +
                     "Read the files of several record runs together (by default that is "
                     "an error: their ranks would be paired as if from one job)")
      ->excludes(run_option);
  command
      ->add_option("--cycle", selection->profiler_cycle,
                   scope +
                       "Of a folder holding several torch.profiler cycles (one file per rank "
                       "per cycle), read cycle N as the report numbers them (default: the "
                       "newest complete one; docs/getting-traces.md)")
      ->type_name("N")
      ->check(WholeNumberAtLeast(1));
}

bool ApplyTraceSelection(const TraceSelection& selection, JobSource* source, std::ostream& err) {
  source->load.record_run = RecordRunChoice{selection.record_run, selection.mix_record_runs};
  source->load.profiler_cycle = selection.profiler_cycle;
  source->strict = selection.strict;
  for (const std::string& arg : selection.rank_args) {
    absl::StatusOr<RankOverride> parsed = ParseRankOverride(arg);
    if (!parsed.ok()) {  // already rejected while parsing; kept so no path skips the check
      err << "bubblescope: --rank: " << MessageLine(parsed.status()) << "\n";
      return false;
    }
    source->load.rank_overrides.push_back(*std::move(parsed));
  }
  return true;
}

void JobInputCommand::DefineInputs(CLI::App* command) {
  DefineLoadInputs(command);
  DefineStrict(command, &selection_.strict, "");
  iteration_marker_option_ =
      command
          ->add_option("--iteration-marker", iteration_marker_,
                       "Regular expression naming the CPU annotations that mark iterations "
                       "(default: the ProfilerStep#N ranges)")
          ->type_name("REGEX");
}

void JobInputCommand::DefineLoadInputs(CLI::App* command) {
  command
      ->add_option("PATH", paths_,
                   "Trace files (Kineto .json / .json.gz, Nsight Systems .sqlite exports, "
                   ".bsdigest digests) or directories of per-rank traces")
      ->required();
  command
      ->add_option("-j,--jobs", jobs_,
                   "Threads that read the files and analyse the ranks and pipelines; 0 = one "
                   "per core (the report is the same for any number)")
      ->check(WholeNumberAtLeast(0))
      ->capture_default_str();
  command
      ->add_option("--max-file-mb", max_file_mb_,
                   "The most trace text (after gzip) one file may hold, in MiB (default: the "
                   "memory this process may use, divided by 3 per file read at once)")
      ->type_name("MB")
      ->check(WholeNumberAtLeast(1));
  DefineTraceSelection(command, &selection_, "");
  DefineQuiet(command, &quiet_);
}

void DefineQuiet(CLI::App* command, bool* quiet) {
  command->add_flag("-q,--quiet", *quiet,
                    "No progress line while traces are read (it is shown only on a terminal, "
                    "for loads of more than a few seconds) and no \"wrote FILE\" line for each "
                    "output file written; warnings and errors are still printed");
}

void JobInputCommand::DefineOutput(CLI::App* command) {
  command->add_option("--format", format_, "Report format")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  command
      ->add_option("-o,--output", output_path_,
                   "Write the report to FILE instead of stdout (a regular file is replaced "
                   "atomically; a device or FIFO is written into; an input is never "
                   "overwritten)")
      ->type_name("FILE");
}

void JobInputCommand::DefineHtml(CLI::App* command, const std::string& what) {
  command
      ->add_option("--html", html_path_,
                   absl::StrCat("Also write a self-contained HTML report to FILE: ", what,
                                " (docs/html-report.md; never over an input)"))
      ->type_name("FILE");
}

int JobInputCommand::CheckOutputFiles(std::vector<NamedOutput> more, std::ostream& err) const {
  std::vector<NamedOutput> outputs = {{"-o", output_path_}, {"--html", html_path_}};
  outputs.insert(outputs.end(), more.begin(), more.end());
  return CheckCommandOutputs(outputs, err);
}

int JobInputCommand::WriteHtml(const std::string& page, std::vector<std::string> inputs,
                               std::ostream& err) const {
  if (html_path_.empty()) return kExitOk;
  OutputFileOptions options;
  options.protected_files = std::move(inputs);
  if (absl::Status written = WriteOutputFile(html_path_, page, options); !written.ok()) {
    err << "bubblescope: --html: " << MessageLine(written) << "\n";
    return kExitFailure;
  }
  SayWritten(html_path_, "the HTML report", quiet_, err);
  return kExitOk;
}

void JobInputCommand::DefineLayers(CLI::App* command) {
  command
      ->add_option("--layers-per-stage", layers_per_stage_,
                   "Model layers on each pipeline stage as measured, first stage first (e.g. "
                   "8,8,8,8): suggests the layer move that most shortens the simulated "
                   "iteration (default: the ranks' own 'bubblescope:layers=N' annotations, if "
                   "any)")
      ->type_name("N,N,...")
      ->delimiter(',')
      ->check(WholeNumberAtLeast(1));
}

void PrintLoadError(const absl::Status& status, std::ostream& err) {
  err << "bubblescope: " << MessageLine(status)
      << (absl::IsResourceExhausted(status) ? " (--max-file-mb sets it)" : "") << "\n";
}

bool NoteLoadProblems(const Trace& trace, bool strict, std::ostream& err) {
  NoteSkippedFiles(trace.skipped_files, err);
  NoteProfilerCycles(trace, err);
  bool rejected = false;
  for (const Rank& rank : trace.ranks) {
    std::string problems = ImportProblems(rank, Severity::kWarning);
    if (problems.empty()) continue;
    err << (strict ? "" : "warning: ") << OneLine(rank.source_path) << ": " << OneLine(problems)
        << "\n";
    rejected = rejected || strict;
  }
  return rejected;
}

namespace {

// The source's traces read with `load`, told on `progress` when there is one; the line is cleared
// before anything else is printed.
absl::StatusOr<Trace> LoadTelling(const JobSource& source, LoadOptions load,
                                  ProgressLine* progress) {
  if (progress != nullptr) {
    load.progress = [progress](const LoadProgress& done) { progress->Update(done); };
  }
  absl::StatusOr<Trace> trace =
      source.load_trace ? source.load_trace(source.paths, load) : LoadTrace(source.paths, load);
  if (progress != nullptr) progress->Clear();
  return trace;
}

}  // namespace

absl::StatusOr<Trace> LoadShowingProgress(const JobSource& source, LoadOptions load,
                                          std::ostream& err) {
  const std::unique_ptr<ProgressLine> progress = ProgressLineFor(err, source.quiet);
  return LoadTelling(source, std::move(load), progress.get());
}

std::optional<LoadedJob> LoadAndAnalyzeJob(const JobSource& source, job::Options options,
                                           std::ostream& err, int* exit_status) {
  *exit_status = kExitBadInput;
  // One line for the reading and the analysis: a long job's wait is told through both.
  const std::unique_ptr<ProgressLine> progress = ProgressLineFor(err, source.quiet);
  absl::StatusOr<Trace> trace = LoadTelling(source, source.load, progress.get());
  if (!trace.ok()) {
    PrintLoadError(trace.status(), err);
    return std::nullopt;
  }
  if (NoteLoadProblems(*trace, source.strict, err)) return std::nullopt;

  if (source.iteration_marker.has_value()) {
    options.iterations.iteration_marker = *source.iteration_marker;
  }
  options.jobs = source.load.jobs;
  if (progress != nullptr) {
    options.progress = [&progress](const job::Progress& done) { progress->Update(done); };
  }
  absl::StatusOr<job::Result> job =
      source.analyze_job ? source.analyze_job(*trace, options) : job::Analyze(*trace, options);
  if (progress != nullptr) progress->Clear();
  if (!job.ok()) {
    err << "bubblescope: " << MessageLine(job.status()) << "\n";
    return std::nullopt;
  }
  if (job->Incomplete()) {
    // The report says so under its headline too; on stderr it reaches a user piping the JSON.
    std::string why = IncompleteJobText(*job);
    while (!why.empty() && why.back() == '\n') why.pop_back();
    err << (source.strict ? "bubblescope: --strict: " : "warning: ") << why << "\n";
    if (source.strict) return std::nullopt;
  }
  // Files of different runs paired by rank id measure a job that never ran: said on stderr too,
  // and refused under --strict. Weaker signs are the report's only.
  if (job->job.one_run.CannotBeOneRun()) {
    for (const one_run::Sign& sign : job->job.one_run.signs) {
      if (!sign.conclusive) continue;
      err << (source.strict ? "bubblescope: --strict: " : "warning: ") << "ranks " << sign.rank_a
          << " and " << sign.rank_b << " are files of different runs: " << OneLine(sign.detail)
          << "\n";
    }
    if (source.strict) return std::nullopt;
  }
  // A pipeline without a complete iteration has no bubble or latency: said on stderr too (a
  // user piping the JSON sees it), and refused under --strict like any figure not to be trusted.
  bool unmeasured = false;
  for (size_t i = 0; i < job->pipelines.size(); ++i) {
    if (job->pipelines[i].no_complete_iteration.empty()) continue;
    err << (source.strict ? "bubblescope: --strict: " : "warning: ") << "pipeline " << i
        << ": no complete iteration: " << OneLine(job->pipelines[i].no_complete_iteration) << "\n";
    unmeasured = true;
  }
  if (unmeasured && source.strict) return std::nullopt;
  *exit_status = kExitOk;
  return LoadedJob{*std::move(trace), *std::move(job)};
}

std::vector<std::string> JobInputCommand::InputFiles(const Trace& trace) {
  return TraceInputFiles(trace);
}

std::vector<std::string> TraceInputFiles(const Trace& trace) {
  std::vector<std::string> files;
  for (const Rank& rank : trace.ranks) files.push_back(rank.source_path);
  for (const SkippedFile& skipped : trace.skipped_files) files.push_back(skipped.path);
  return files;
}

std::optional<JobSource> JobInputCommand::Source(std::ostream& err) const {
  JobSource source;
  source.paths = paths_;
  source.load.jobs = jobs_;
  source.load.max_file_bytes = int64_t{max_file_mb_} << 20;
  source.quiet = quiet_;
  if (!ApplyTraceSelection(selection_, &source, err)) return std::nullopt;
  if (iteration_marker_option_ != nullptr && iteration_marker_option_->count() > 0) {
    source.iteration_marker = iteration_marker_;
  }
  return source;
}

std::optional<LoadedJob> JobInputCommand::LoadJob(job::Options options, std::ostream& err,
                                                  int* exit_status, TraceLoader load_trace,
                                                  JobAnalyzer analyze_job) {
  *exit_status = kExitBadInput;
  options.layers_per_stage = layers_per_stage_;
  std::optional<JobSource> source = Source(err);
  if (!source.has_value()) return std::nullopt;
  source->load_trace = std::move(load_trace);
  source->analyze_job = std::move(analyze_job);
  return LoadAndAnalyzeJob(*source, std::move(options), err, exit_status);
}

int JobInputCommand::WriteReport(const std::string& report, std::vector<std::string> inputs,
                                 std::ostream& out, std::ostream& err) const {
  if (output_path_.empty()) return PrintReport(report, out, err);
  // Never over a trace this run read, nor over a file it passed over in a directory.
  OutputFileOptions output_options;
  output_options.protected_files = std::move(inputs);
  if (absl::Status written = WriteOutputFile(output_path_, report, output_options); !written.ok()) {
    err << "bubblescope: " << MessageLine(written) << "\n";
    return kExitFailure;
  }
  SayWritten(output_path_, "the report", quiet_, err);
  return kExitOk;
}

std::string_view JobInputCommand::OutOfMemoryAdvice() const { return JobOutOfMemoryAdvice(); }

std::string_view JobOutOfMemoryAdvice() {
  return "analyze the job across processes with analyze --mpi, which holds one pipeline per "
         "thread at a time, or with fewer --jobs; digests (bubblescope digest) are read in less "
         "(docs/scale.md)";
}

}  // namespace bubblescope
