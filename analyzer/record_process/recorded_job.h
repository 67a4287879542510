// One `bubblescope record` run, without flags or printing: the collector's settings become the
// variables injected into the job (the contract of docs/record.md, "What the job gets"), the job
// runs as a shell's foreground job (child_process.h), and what it left in the output directory is
// read back (record_outputs.h). The CLI turns flags into RecordSettings and prints the outcome.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "record_process/child_process.h"
#include "record_process/record_outputs.h"
#include "record_process/record_window.h"

namespace bubblescope {

struct RecordSettings {
  std::string collector_path;  // absolute
  // libbubblescope_cupti_handoff.so beside the collector, first in the job's LD_PRELOAD so that
  // the user's own profiler can take CUPTI over (collector/cupti_handoff.cc); empty when absent.
  std::string handoff_path;
  std::string output_dir;  // absolute; created by RunRecordedJob
  std::string kinds;       // canonical comma list
  int64_t flush_ms = 1000;
  // `record --live`: each process also writes its trace whenever a training step begins
  // (BUBBLESCOPE_FLUSH_ON_STEP=1), so that `bubblescope watch` sees each step soon after it ends.
  bool flush_on_step = false;
  // After a signal asking the job to end has been passed on, kill the job's process group if
  // it still runs this much later; 0: only at a second such signal.
  int64_t kill_after_ms = 0;
  // This run's id: in every trace's name and metadata, so that `analyze` tells this run's files
  // from those an earlier run left in the same directory.
  std::string run_id;
  // After the job: one digest per rank of this run's traces into DigestDirectory (docs/digest.md).
  bool digest = false;
  // What part of the job is recorded (BUBBLESCOPE_START, BUBBLESCOPE_LIMIT).
  RecordWindow window;
  std::vector<std::string> command;
};

// Where --digest writes: <output_dir>/digests-<run id>, so runs recorded into one directory
// never mix their digests, nor `analyze DIR` the digests with the traces.
std::string DigestDirectory(const RecordSettings& settings);

// The variables the job runs with, in the contract's order. `inherited_preload` is the
// LD_PRELOAD the job would have had; it stays, after the hand-over library.
std::vector<std::pair<std::string, std::string>> CollectorEnvironment(
    const RecordSettings& settings, std::string_view inherited_preload = {});

// Signals a job launcher is expected to pass on (docs/record.md), and those of them that ask
// the job to end: a second of these kills the job's process group.
const std::vector<int>& RecordForwardedSignals();
const std::vector<int>& RecordEndingSignals();

// How a recorded job went: how it ended, and what this run wrote.
struct RecordedJob {
  ChildExit exit;
  // The output directory could not be listed after the job (the files are then unknown);
  // OK otherwise.
  absl::Status listing;
  std::vector<RecordedFile> written;  // this run's trace files, in name order
  MissingRanks missing;               // ranks of the run's world size without a file
  // Collector files of other runs in the output directory (`analyze DIR` then needs --run).
  size_t other_files = 0;
  // Every file of this run carries its run id in its name (--run can pick them out).
  bool all_named = true;
};

// Creates the output directory and stamps the collector files already there, so that what the
// job writes can be told from them. The error (one line) names the directory.
absl::StatusOr<TraceFileStamps> PrepareOutputDirectory(const RecordSettings& settings);

// Runs the job with the collector injected and reads back what it wrote since `before`.
// `notice` is told what is done to the job on the user's behalf, as it happens (may be empty).
// Errors: the job could not be started (child_process.h: NotFound, PermissionDenied, Internal;
// ExitStatusForStartError gives a shell's status). Call from a process with no other threads
// (child_process.h says why).
absl::StatusOr<RecordedJob> RunRecordedJob(const RecordSettings& settings,
                                           const TraceFileStamps& before,
                                           std::function<void(const std::string&)> notice);

}  // namespace bubblescope
