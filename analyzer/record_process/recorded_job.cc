#include "record_process/recorded_job.h"

#include <signal.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace bubblescope {

namespace fs = std::filesystem;

std::string DigestDirectory(const RecordSettings& settings) {
  return (fs::path(settings.output_dir) / ("digests-" + settings.run_id)).string();
}

std::vector<std::pair<std::string, std::string>> CollectorEnvironment(
    const RecordSettings& settings, std::string_view inherited_preload) {
  std::vector<std::pair<std::string, std::string>> variables = {
      {"CUDA_INJECTION64_PATH", settings.collector_path},
      {"NCCL_PROFILER_PLUGIN", settings.collector_path},
      {"BUBBLESCOPE_OUTPUT_DIR", settings.output_dir},
      {"BUBBLESCOPE_KINDS", settings.kinds},
      {"BUBBLESCOPE_FLUSH_MS", absl::StrCat(settings.flush_ms)},
      {"BUBBLESCOPE_RUN_ID", settings.run_id}};
  if (settings.flush_on_step) variables.emplace_back("BUBBLESCOPE_FLUSH_ON_STEP", "1");
  if (std::string start = CollectorStartValue(settings.window); !start.empty()) {
    variables.emplace_back("BUBBLESCOPE_START", std::move(start));
  }
  if (std::string limit = CollectorLimitValue(settings.window); !limit.empty()) {
    variables.emplace_back("BUBBLESCOPE_LIMIT", std::move(limit));
  }
  if (!settings.handoff_path.empty()) {
    std::string preload = settings.handoff_path;
    if (!inherited_preload.empty()) {
      preload.push_back(':');
      preload.append(inherited_preload.data(), inherited_preload.size());
    }
    variables.emplace_back("LD_PRELOAD", std::move(preload));
  }
  return variables;
}

const std::vector<int>& RecordForwardedSignals() {
  static const auto* signals =
      new std::vector<int>{SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};
  return *signals;
}

const std::vector<int>& RecordEndingSignals() {
  static const auto* signals = new std::vector<int>{SIGINT, SIGTERM, SIGHUP, SIGQUIT};
  return *signals;
}

absl::StatusOr<TraceFileStamps> PrepareOutputDirectory(const RecordSettings& settings) {
  std::error_code error;
  fs::create_directories(settings.output_dir, error);
  if (error || !fs::is_directory(settings.output_dir)) {
    return absl::FailedPreconditionError(absl::StrCat("cannot create ", settings.output_dir, ": ",
                                                      error ? error.message() : "not a directory"));
  }
  return StampCollectorFiles(settings.output_dir);
}

absl::StatusOr<RecordedJob> RunRecordedJob(const RecordSettings& settings,
                                           const TraceFileStamps& before,
                                           std::function<void(const std::string&)> notice) {
  ChildProcessOptions child;
  child.argv = settings.command;
  const char* inherited_preload = std::getenv("LD_PRELOAD");
  child.extra_environment =
      CollectorEnvironment(settings, inherited_preload == nullptr ? "" : inherited_preload);
  child.forwarded_signals = RecordForwardedSignals();
  child.ending_signals = RecordEndingSignals();
  child.kill_after_ms = settings.kill_after_ms;
  child.notice = std::move(notice);
  absl::StatusOr<ChildExit> exit = RunChildProcess(child);
  BUBBLESCOPE_RETURN_IF_ERROR(exit.status());
  RecordedJob job;
  job.exit = *exit;
  absl::StatusOr<TraceFileStamps> after = StampCollectorFiles(settings.output_dir);
  if (!after.ok()) {
    job.listing = after.status();
    return job;
  }
  job.written = WrittenBetween(before, *after, settings.run_id);
  job.missing = FindMissingRanks(job.written);
  job.other_files = after->size() - job.written.size();
  job.all_named =
      std::all_of(job.written.begin(), job.written.end(),
                  [&](const RecordedFile& file) { return file.id.run_id == settings.run_id; });
  return job;
}

}  // namespace bubblescope
