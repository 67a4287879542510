// `bubblescope record [-o DIR] [--kinds K,...] [--steps A:B] [--flush-ms N] [--kill-after S]
// [--collector LIB]
// -- COMMAND ARGS...`: runs an unmodified CUDA/NCCL job with the CUPTI collector injected into it
// and every process it spawns (docs/record.md), then lists the per-process traces the job wrote.
//
// The injection is nothing but environment variables, which the collector library reads in each
// process: CUDA_INJECTION64_PATH and NCCL_PROFILER_PLUGIN name the library,
// BUBBLESCOPE_OUTPUT_DIR, BUBBLESCOPE_KINDS, BUBBLESCOPE_FLUSH_MS, BUBBLESCOPE_RUN_ID and
// (with --steps) BUBBLESCOPE_START configure it. The job runs
// as a shell would run it; record exits with the job's status.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "cli/command.h"

namespace bubblescope {

inline constexpr char kCollectorLibraryName[] = "libbubblescope_collector.so";
inline constexpr char kHandoffLibraryName[] = "libbubblescope_cupti_handoff.so";

// The command line as typed; ParseRecordFlags checks it.
struct RecordFlags {
  std::string output_dir = "bubblescope_traces";
  std::string kinds;  // empty: every kind
  std::string flush_ms = "1000";
  std::string collector;  // empty: found beside the bubblescope executable
  std::string kill_after;  // empty: wait for the job until a second signal
  std::string run_id;      // empty: a new one (MakeRecordRunId)
  bool digest = false;     // --digest
  std::string steps;       // "A:B", empty: record from the start
  std::vector<std::string> command;
};

struct RecordSettings {
  std::string collector_path;  // absolute
  // libbubblescope_cupti_handoff.so beside the collector, preloaded into the job so that the
  // user's own profiler can take CUPTI over (collector/cupti_handoff.cc); empty when absent.
  std::string handoff_path;
  std::string output_dir;      // absolute; created by the command, not by the parser
  std::string kinds;           // canonical comma list
  int64_t flush_ms = 1000;
  // After a signal asking the job to end has been passed on, kill the job's process group if
  // it still runs this much later; 0: only at a second such signal.
  int64_t kill_after_ms = 0;
  // This run's id: in every trace's name and metadata, so that `analyze` tells this run's files
  // from those an earlier run left in the same directory.
  std::string run_id;
  // After the job: one digest per rank of this run's traces into DigestDirectory (docs/digest.md).
  bool digest = false;
  // BUBBLESCOPE_START for the collector ("steps:A:B" from --steps); empty: not set, the
  // collector records from the start.
  std::string start;
  std::vector<std::string> command;
};

// Where --digest writes: <output_dir>/digests-<run id>, so runs recorded into one directory
// never mix their digests, nor `analyze DIR` the digests with the traces.
std::string DigestDirectory(const RecordSettings& settings);

// "kernel,nvtx" -> the same names, deduplicated, in the canonical order kernel, memcpy, memset,
// memory, nvtx, runtime, driver, nccl; empty text -> all of them. An unknown or empty name is
// an error naming it.
absl::StatusOr<std::string> ParseKinds(absl::string_view text);

// The library to inject: `explicit_path` when given (it must be a file), else
// libbubblescope_collector.so in the directory of `executable_path` or in ../lib beside it (the
// build tree and an installed layout). The error says where it looked.
absl::StatusOr<std::string> FindCollectorLibrary(const std::string& explicit_path,
                                                 const std::string& executable_path);

// Checks every flag; errors start with the flag ("--kinds: ..."). `executable_path` is where
// the running bubblescope is, for FindCollectorLibrary; `new_run_id` is the run id to use when
// --run-id is not given.
absl::StatusOr<RecordSettings> ParseRecordFlags(const RecordFlags& flags,
                                                const std::string& executable_path,
                                                const std::string& new_run_id);

// The variables the job runs with, in the contract's order.
// The variables the job gets; `inherited_preload` is the LD_PRELOAD the job would have had,
// which stays, after the hand-over library.
std::vector<std::pair<std::string, std::string>> CollectorEnvironment(
    const RecordSettings& settings, std::string_view inherited_preload = {});

class RecordCommand : public Command {
 public:
  // Record's own messages go to `err`; `out` is the job's, which record never writes to.
  int Run(std::ostream& out, std::ostream& err) override;

 protected:
  CLI::App* Define(CLI::App& app) override;

 private:
  RecordFlags flags_;
};

}  // namespace bubblescope
