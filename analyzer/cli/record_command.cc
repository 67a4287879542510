#include "cli/record_command.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <ctime>
#include <filesystem>
#include <random>
#include <string_view>
#include <system_error>

#include "CLI/CLI.hpp"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "cli/digest_command.h"
#include "common/status_macros.h"
#include "record_format/record_run_id.h"
#include "record_process/recorded_job.h"
#include "text/one_line.h"

namespace bubblescope {
namespace {

namespace fs = std::filesystem;

// The last, `queries`, is the only one the default leaves out (collector/api_filter.h).
constexpr std::array<absl::string_view, 9> kKinds = {
    "kernel", "memcpy", "memset", "memory", "nvtx", "runtime", "driver", "nccl", "queries"};
constexpr size_t kDefaultKinds = kKinds.size() - 1;

constexpr int64_t kMaxFlushMs = 86'400'000;  // a day: longer is surely a mistake
constexpr int64_t kMaxKillAfterSeconds = 86'400;
constexpr int64_t kMaxStartAfterSeconds = 7 * 86'400;
constexpr int64_t kMaxCapMib = int64_t{1} << 20;  // a TiB per process
constexpr int64_t kMaxCapSeconds = 7 * 86'400;

// Missing ranks named in the warning before it only counts the rest.
constexpr size_t kMissingRanksShown = 16;

constexpr char kRecordFooter[] = R"(
  bubblescope record [OPTIONS] -- COMMAND [ARGS...]

COMMAND and everything it starts run with the CUPTI collector injected (CUDA_INJECTION64_PATH,
NCCL_PROFILER_PLUGIN) and configured (BUBBLESCOPE_OUTPUT_DIR, BUBBLESCOPE_KINDS,
BUBBLESCOPE_FLUSH_MS, BUBBLESCOPE_RUN_ID, BUBBLESCOPE_START, BUBBLESCOPE_LIMIT, and
BUBBLESCOPE_FLUSH_ON_STEP with --live), with
libbubblescope_cupti_handoff.so first in LD_PRELOAD, so that a torch.profiler the job starts
gets CUPTI from the collector (which then records NCCL transfers only); the rest of the
environment is passed on unchanged.

What is recorded: by default a bounded window, what an analysis needs and no more: training
steps +2 to +6 counted from each process's first ProfilerStep#N NVTX range, or from the start in
a job without such ranges, and at most 256 MiB of trace per process (--max-mb; --max-seconds
caps the time too). --steps, --start-after, --profiler-api or --whole-job choose another
window. record says which when the job starts.

With --live, each process also writes its trace whenever one of its ProfilerStep#N ranges opens,
so that `bubblescope watch DIR` reports each step soon after it ends (GPU work of a step still
running then is written at the next step or the next --flush-ms). --live does not change the
window: give --whole-job or --steps to watch more than the default's five steps.

Every CUDA process writes DIR/bubblescope-<RUN>-rank<R>-world<W>-<host>-<pid>.json, RUN this
run's id, so runs recorded into one directory stay apart (analyze --run RUN picks one). Once
COMMAND ends, record lists the trace files it wrote and warns about ranks that wrote none; with
--digest it also writes their digests to DIR/digests-<RUN> (docs/digest.md), which analyze reads
to the same report.

COMMAND runs in a process group of its own and, at a terminal, gets the terminal as a shell's
foreground job does (Ctrl-C, Ctrl-Z reach it directly). SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1
and SIGUSR2 sent to record are passed on to COMMAND; a second SIGINT/TERM/HUP/QUIT kills
COMMAND's process group (SIGKILL), as does --kill-after once it runs out. If record is killed
outright, COMMAND's process group gets SIGTERM, then SIGKILL 10 s later.

Kinds: kernel, memcpy, memset, memory (device allocations), nvtx (the job's and NCCL's ranges),
runtime, driver (CUDA API calls, which link kernels to their launches), nccl (point-to-point
transfers with peer and bytes), queries (the API calls that only query host state, such as
cudaGetDevice: 80% of a PyTorch job's calls, off by default).

Examples:
  bubblescope record -o traces/ -- torchrun --nproc-per-node 8 train.py
  bubblescope record -o traces/ -- srun -N 2 --ntasks-per-node 4 python train.py
  bubblescope record -o traces/ --kinds kernel,memcpy,nvtx,runtime,nccl -- ./my_job --steps 20
  bubblescope record -o traces/ --profiler-api -- torchrun --nproc-per-node 8 pretrain_gpt.py \
      --profile --profile-step-start 10 --profile-step-end 15 --profile-ranks 0 1 2 3 4 5 6 7 ...
  bubblescope analyze traces/

Exit status: COMMAND's own (128+N when signal N killed it); 127 COMMAND not found, 126 it could
not be executed; 2 a bad option or no collector library.
)";

absl::Status FlagError(absl::string_view flag, absl::string_view message) {
  return absl::InvalidArgumentError(absl::StrCat(flag, ": ", message));
}

// A whole number of `unit` from 1 to `max`, or an error naming the flag.
absl::StatusOr<int64_t> ParseCount(absl::string_view flag, absl::string_view text,
                                   absl::string_view unit, int64_t max) {
  int64_t value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size() || value <= 0 ||
      value > max) {
    return FlagError(
        flag, absl::StrCat("'", text, "' is not a whole number of ", unit, " from 1 to ", max));
  }
  return value;
}

// ParseCount for a flag that may be left out: `*out` is kept when `text` is empty.
absl::Status ParseOptionalCount(absl::string_view flag, absl::string_view text,
                                absl::string_view unit, int64_t max, int64_t* out) {
  if (text.empty()) return absl::OkStatus();
  BUBBLESCOPE_ASSIGN_OR_RETURN(int64_t value, ParseCount(flag, text, unit, max));
  *out = value;
  return absl::OkStatus();
}

// --steps A:B: two step numbers (from 0), A <= B, into `window`.
absl::Status ParseSteps(std::string_view steps, RecordWindow* window) {
  const size_t colon = steps.find(':');
  int64_t first = -1;
  int64_t last = -1;
  auto number = [](std::string_view part, int64_t* out) {
    auto [end, error] = std::from_chars(part.data(), part.data() + part.size(), *out);
    return !part.empty() && error == std::errc() && end == part.data() + part.size() && *out >= 0 &&
           *out <= (int64_t{1} << 31);
  };
  if (colon == std::string_view::npos || !number(steps.substr(0, colon), &first) ||
      !number(steps.substr(colon + 1), &last) || last < first) {
    return FlagError("--steps", absl::StrCat("'", text::OneLine(steps),
                                             "' is not A:B, two step numbers with A <= B"));
  }
  window->kind = WindowKind::kSteps;
  window->first_step = first;
  window->last_step = last;
  return absl::OkStatus();
}

// The window flags: at most one of --steps, --start-after, --profiler-api and --whole-job, and
// the caps (the default and --start-after have them unless told otherwise; --steps and
// --profiler-api are bounded by the job's own steps or calls; --whole-job has none).
absl::StatusOr<RecordWindow> ParseWindow(const RecordFlags& flags) {
  RecordWindow window;
  const int chosen =
      !flags.steps.empty() + !flags.start_after.empty() + flags.profiler_api + flags.whole_job;
  if (chosen > 1) {
    return absl::InvalidArgumentError(
        "--steps, --start-after, --profiler-api and --whole-job each choose the window: give one");
  }
  if (!flags.steps.empty()) {
    BUBBLESCOPE_RETURN_IF_ERROR(ParseSteps(flags.steps, &window));
  } else if (!flags.start_after.empty()) {
    window.kind = WindowKind::kAfterDelay;
    window.max_seconds = kDefaultAfterDelayMaxSeconds;
    if (absl::Status status = ParseOptionalCount("--start-after", flags.start_after, "seconds",
                                                 kMaxStartAfterSeconds, &window.delay_seconds);
        !status.ok()) {
      return status;
    }
  } else if (flags.profiler_api) {
    window.kind = WindowKind::kProfilerApi;
  } else if (flags.whole_job) {
    if (!flags.max_mb.empty() || !flags.max_seconds.empty()) {
      return FlagError("--whole-job", "records everything: give no --max-mb or --max-seconds");
    }
    window.kind = WindowKind::kWholeJob;
    return window;
  }
  if (window.kind == WindowKind::kSteps || window.kind == WindowKind::kProfilerApi) {
    window.max_mib = 0;
    window.max_seconds = 0;
  }
  for (absl::Status status :
       {ParseOptionalCount("--max-mb", flags.max_mb, "MiB", kMaxCapMib, &window.max_mib),
        ParseOptionalCount("--max-seconds", flags.max_seconds, "seconds", kMaxCapSeconds,
                           &window.max_seconds)}) {
    BUBBLESCOPE_RETURN_IF_ERROR(status);
  }
  return window;
}

// Absolute, normalised, without a trailing '/'.
std::string Absolute(const std::string& path) {
  std::error_code error;
  fs::path absolute = fs::absolute(path, error);
  if (error) return path;
  absolute = absolute.lexically_normal();
  if (!absolute.has_filename()) absolute = absolute.parent_path();
  return absolute.string();
}

std::string ExecutablePath() {
  std::error_code error;
  fs::path path = fs::read_symlink("/proc/self/exe", error);
  return error ? std::string() : path.string();
}

// A new run id: the UTC time and 16 random bits, so that two runs started in the same second
// (several nodes each running record into one shared directory) still differ.
std::string NewRunId() {
  std::random_device random;
  return record_format::MakeRecordRunId(static_cast<long long>(std::time(nullptr)), random());
}

// The trace files this run wrote, then what looks wrong about them, then how to analyze them.
void ReportWrittenFiles(const RecordSettings& settings, const RecordedJob& job, std::ostream& err) {
  const std::string& directory = settings.output_dir;
  if (!job.listing.ok()) {
    err << "bubblescope: record: warning: cannot list the traces: " << job.listing.message()
        << "\n";
    return;
  }
  if (job.written.empty()) {
    err << "bubblescope: record: warning: no trace file written to " << directory
        << ": no CUDA activity recorded: was the job using the GPU? (a collector that could "
           "not start says why above)\n";
    return;
  }
  err << "bubblescope: record: " << job.written.size() << " trace file"
      << (job.written.size() == 1 ? "" : "s") << " of run " << settings.run_id << " in "
      << directory << ":\n";
  for (const RecordedFile& file : job.written) {
    err << "  " << file.name << "  " << HumanBytes(file.size) << "\n";
  }
  const MissingRanks& missing = job.missing;
  if (!missing.ranks.empty()) {
    const size_t count = missing.ranks.size();
    std::vector<int32_t> shown(
        missing.ranks.begin(),
        missing.ranks.begin() + static_cast<std::ptrdiff_t>(std::min(count, kMissingRanksShown)));
    err << "bubblescope: record: warning: " << count << " of " << missing.world_size
        << " ranks wrote no trace: rank" << (count == 1 ? " " : "s ") << absl::StrJoin(shown, ", ")
        << (shown.size() < count ? ", ..." : "") << "\n";
  }
  // With traces of other runs beside this one's, `analyze DIR` would refuse to mix them: say
  // how to pick this run (possible only when every file of it carries the run id).
  err << "bubblescope: record: analyze with: bubblescope analyze " << directory;
  if (job.other_files > 0 && job.all_named) {
    err << " --run " << settings.run_id << "   (" << job.other_files << " trace file"
        << (job.other_files == 1 ? "" : "s") << " of other runs there too)";
  }
  err << "\n";
}

}  // namespace

absl::StatusOr<std::string> ParseKinds(absl::string_view text) {
  if (text.empty()) return absl::StrJoin(kKinds.begin(), kKinds.begin() + kDefaultKinds, ",");
  std::array<bool, kKinds.size()> chosen{};
  for (absl::string_view name : absl::StrSplit(text, ',')) {
    auto found = std::find(kKinds.begin(), kKinds.end(), name);
    if (found == kKinds.end()) {
      return FlagError("--kinds",
                       absl::StrCat("'", name, "' is not one of ", absl::StrJoin(kKinds, ", ")));
    }
    chosen[static_cast<size_t>(found - kKinds.begin())] = true;
  }
  std::vector<absl::string_view> names;
  for (size_t i = 0; i < kKinds.size(); ++i) {
    if (chosen[i]) names.push_back(kKinds[i]);
  }
  return absl::StrJoin(names, ",");
}

CollectorBuild ThisCollectorBuild() {
#if defined(BUBBLESCOPE_COLLECTOR_BUILD_DIR)
  return {BUBBLESCOPE_COLLECTOR_BUILD_DIR, ""};
#elif defined(BUBBLESCOPE_COLLECTOR_LEFT_OUT)
  return {"", BUBBLESCOPE_COLLECTOR_LEFT_OUT};
#else
  return {"", "its build did not say why"};
#endif
}

absl::StatusOr<std::string> FindCollectorLibrary(const std::string& explicit_path,
                                                 const std::string& executable_path,
                                                 const CollectorBuild& build) {
  std::error_code error;
  if (!explicit_path.empty()) {
    if (!fs::is_regular_file(explicit_path, error)) {
      return FlagError("--collector", absl::StrCat("'", explicit_path, "' is not a file"));
    }
    return Absolute(explicit_path);
  }
  const fs::path directory = fs::path(executable_path).parent_path();
  const std::array<fs::path, 3> candidates = {
      (directory / kCollectorLibraryName).lexically_normal(),
      (directory / kInstalledCollectorDir / kCollectorLibraryName).lexically_normal(),
      (directory / ".." / "lib" / kCollectorLibraryName).lexically_normal()};
  for (const fs::path& candidate : candidates) {
    if (fs::is_regular_file(candidate, error)) return candidate.string();
  }
  const std::string looked_for =
      absl::StrCat("looked for ", candidates[0].string(), ", ", candidates[1].string(), " and ",
                   candidates[2].string());
  if (build.build_dir.empty()) {
    return absl::NotFoundError(
        absl::StrCat("collector library not found: this bubblescope was built without it (",
                     build.left_out_because, "; ", looked_for,
                     "); give --collector PATH to use one built elsewhere"));
  }
  return absl::NotFoundError(
      absl::StrCat("collector library not found (", looked_for,
                   "): build it beside bubblescope with `cmake "
                   "--build ",
                   build.build_dir,
                   " --target bubblescope_collector`, or install both with `cmake "
                   "--install ",
                   build.build_dir, " --prefix DIR`; or give --collector PATH"));
}

absl::StatusOr<RecordSettings> ParseRecordFlags(const RecordFlags& flags,
                                                const std::string& executable_path,
                                                const std::string& new_run_id,
                                                const CollectorBuild& build) {
  RecordSettings settings;
  if (flags.command.empty()) {
    return absl::InvalidArgumentError("no COMMAND to run (give it after --)");
  }
  settings.command = flags.command;
  settings.digest = flags.digest;
  settings.flush_on_step = flags.live;
  if (flags.output_dir.empty()) return FlagError("--output", "is empty");
  settings.output_dir = Absolute(flags.output_dir);
  BUBBLESCOPE_ASSIGN_OR_RETURN(std::string kinds, ParseKinds(flags.kinds));
  settings.kinds = std::move(kinds);
  BUBBLESCOPE_ASSIGN_OR_RETURN(
      int64_t flush_ms, ParseCount("--flush-ms", flags.flush_ms, "milliseconds", kMaxFlushMs));
  settings.flush_ms = flush_ms;
  int64_t kill_after_seconds = 0;
  if (absl::Status status = ParseOptionalCount("--kill-after", flags.kill_after, "seconds",
                                               kMaxKillAfterSeconds, &kill_after_seconds);
      !status.ok()) {
    return status;
  }
  settings.kill_after_ms = kill_after_seconds * 1000;
  BUBBLESCOPE_ASSIGN_OR_RETURN(RecordWindow window, ParseWindow(flags));
  settings.window = window;
  settings.run_id = flags.run_id.empty() ? new_run_id : flags.run_id;
  if (!record_format::IsValidRecordRunId(settings.run_id)) {
    return FlagError("--run-id", absl::StrCat("'", text::OneLine(settings.run_id),
                                              "' is not 1 to 64 letters, digits, '.', '_' or "
                                              "'-', beginning with a letter or digit, without "
                                              "\"rank\""));
  }
  BUBBLESCOPE_ASSIGN_OR_RETURN(std::string collector,
                               FindCollectorLibrary(flags.collector, executable_path, build));
  settings.collector_path = std::move(collector);
  const fs::path handoff = fs::path(settings.collector_path).parent_path() / kHandoffLibraryName;
  std::error_code error;
  if (fs::is_regular_file(handoff, error)) settings.handoff_path = handoff.string();
  return settings;
}

CLI::App* RecordCommand::Define(CLI::App& app) {
  CLI::App* record = app.add_subcommand(
      "record",
      "Run a CUDA/NCCL job with the CUPTI collector injected into every process it "
      "starts, writing one trace per process");
  record->footer(kRecordFooter);
  // Everything from COMMAND on is the job's, options included; `--` may mark where it starts.
  record->positionals_at_end();
  RecordFlags& f = flags_;
  record->add_option("-o,--output", f.output_dir, "Directory for the traces (created)")
      ->type_name("DIR")
      ->capture_default_str();
  record->add_option("--kinds", f.kinds, "What to record, a comma list (default: all but queries)")
      ->type_name("KIND,...");
  record
      ->add_option("--steps", f.steps,
                   "Record only training steps A to B (the job's ProfilerStep#N NVTX ranges, "
                   "from 0): recording starts when step A begins and stops when step B+1 does "
                   "(default: steps +2 to +6 from the first one, or from the start without "
                   "such ranges, capped)")
      ->type_name("A:B");
  record
      ->add_option("--start-after", f.start_after,
                   "Record from this long after each process initialises CUDA (capped)")
      ->type_name("SECONDS");
  record->add_flag("--profiler-api", f.profiler_api,
                   "Record between the job's own cudaProfilerStart and cudaProfilerStop calls");
  record->add_flag("--whole-job", f.whole_job, "Record the whole job, without a window or cap");
  record
      ->add_option("--max-mb", f.max_mb,
                   "Stop a process's recording once its trace holds this many MiB (default: 256 "
                   "for the default window and --start-after, none otherwise)")
      ->type_name("MB");
  record
      ->add_option("--max-seconds", f.max_seconds,
                   "Stop a process's recording this long after it began (default: 600 for "
                   "--start-after, none otherwise)")
      ->type_name("SECONDS");
  record->add_option("--flush-ms", f.flush_ms, "How often each process writes its records")
      ->type_name("MS")
      ->capture_default_str();
  record->add_flag("--live", f.live,
                   "Also write each process's records whenever a training step (ProfilerStep#N "
                   "NVTX range) begins, for `bubblescope watch DIR`");
  record
      ->add_option("--collector", f.collector,
                   "The collector library (default: libbubblescope_collector.so beside "
                   "bubblescope, in ../lib/bubblescope or in ../lib)")
      ->type_name("PATH");
  record
      ->add_option("--run-id", f.run_id,
                   "This run's id, in every trace's name and metadata; give every node of a "
                   "multi-node job the same one (default: the UTC date and time and 4 random "
                   "hex digits, YYYYMMDD-HHMMSS-xxxx)")
      ->type_name("ID");
  record
      ->add_option("--kill-after", f.kill_after,
                   "Kill the job this long after passing on a signal that asks it to end "
                   "(default: only at a second such signal)")
      ->type_name("SECONDS");
  record->add_flag("--digest", f.digest,
                   "After the job, also write one digest per rank of its traces (what analyze "
                   "reads, 50x or more smaller) to DIR/digests-<run id>");
  record->add_option("COMMAND", f.command, "The job to run, with its arguments")->type_name("");
  return record;
}

int RecordCommand::Run(std::ostream& /*out*/, std::ostream& err) {
  absl::StatusOr<RecordSettings> settings = ParseRecordFlags(flags_, ExecutablePath(), NewRunId());
  if (!settings.ok()) {
    err << "bubblescope: record: " << settings.status().message() << "\n";
    return kExitBadInput;
  }
  absl::StatusOr<TraceFileStamps> before = PrepareOutputDirectory(*settings);
  if (!before.ok()) {
    err << "bubblescope: record: " << before.status().message() << "\n";
    return kExitBadInput;
  }
  err << "bubblescope: record: " << DescribeRecordWindow(settings->window) << "\n";
  if (settings->flush_on_step) {
    err << "bubblescope: record: live: each process writes its trace as each training step "
           "begins; follow it with: bubblescope watch "
        << settings->output_dir << "\n";
  }
  err.flush();
  absl::StatusOr<RecordedJob> job =
      RunRecordedJob(*settings, *before, [&err](const std::string& line) {
        err << "bubblescope: record: " << line << "\n";
        err.flush();
      });
  if (!job.ok()) {
    err << "bubblescope: record: " << job.status().message() << "\n";
    return ExitStatusForStartError(job.status());
  }
  ReportWrittenFiles(*settings, *job, err);
  if (settings->digest && !job->written.empty()) {
    // The job's own status stands; a digest that could not be written is said, not fatal.
    JobSource source;
    for (const RecordedFile& file : job->written) {
      source.paths.push_back((fs::path(settings->output_dir) / file.name).string());
    }
    err << "bubblescope: record: digests in " << DigestDirectory(*settings) << ":\n";
    if (WriteDigests(source, DigestDirectory(*settings), /*force=*/false, err, err) != kExitOk) {
      err << "bubblescope: record: warning: the digests were not all written\n";
    }
  }
  err.flush();
  return job->exit.exit_status;
}

}  // namespace bubblescope
