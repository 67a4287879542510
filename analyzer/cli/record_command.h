// `bubblescope record [-o DIR] [--kinds K,...] [--steps A:B | --start-after S | --profiler-api |
// --whole-job] [--max-mb MB] [--max-seconds S] [--flush-ms N] [--live] [--kill-after S]
// [--collector LIB] -- COMMAND ARGS...`: runs an unmodified CUDA/NCCL job with the CUPTI collector
// injected into it and every process it spawns (docs/record.md), then lists the per-process traces
// the job wrote.
//
// The injection is nothing but environment variables, which the collector library reads in each
// process: CUDA_INJECTION64_PATH and NCCL_PROFILER_PLUGIN name the library,
// BUBBLESCOPE_OUTPUT_DIR, BUBBLESCOPE_KINDS, BUBBLESCOPE_FLUSH_MS, BUBBLESCOPE_FLUSH_ON_STEP,
// BUBBLESCOPE_RUN_ID, BUBBLESCOPE_START and BUBBLESCOPE_LIMIT configure it. The job runs as a shell
// would run it (record_process/recorded_job.h); record exits with the job's status.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "cli/command.h"
#include "record_process/recorded_job.h"

namespace bubblescope {

inline constexpr char kCollectorLibraryName[] = "libbubblescope_collector.so";
inline constexpr char kHandoffLibraryName[] = "libbubblescope_cupti_handoff.so";

// The command line as typed; ParseRecordFlags checks it.
struct RecordFlags {
  std::string output_dir = "bubblescope_traces";
  std::string kinds;  // empty: every kind
  std::string flush_ms = "1000";
  std::string collector;   // empty: found beside the bubblescope executable
  std::string kill_after;  // empty: wait for the job until a second signal
  std::string run_id;      // empty: a new one (MakeRecordRunId)
  bool digest = false;     // --digest
  bool live = false;       // --live: the collector also flushes at each step boundary
  // The window (at most one of these; none: the bounded default, record_process/record_window.h).
  std::string steps;        // "A:B"
  std::string start_after;  // SECONDS
  bool profiler_api = false;
  bool whole_job = false;
  // Caps per process; empty: the window's default.
  std::string max_mb;
  std::string max_seconds;
  std::vector<std::string> command;
};

// "kernel,nvtx" -> the same names, deduplicated, in the canonical order kernel, memcpy, memset,
// memory, nvtx, runtime, driver, nccl; empty text -> all of them. An unknown or empty name is
// an error naming it.
absl::StatusOr<std::string> ParseKinds(absl::string_view text);

// Where `cmake --install` puts the collector, relative to the installed bin/bubblescope
// (collector/CMakeLists.txt installs it there).
inline constexpr char kInstalledCollectorDir[] = "../lib/bubblescope";

// What the build this bubblescope came from did with the collector, for the error when the
// library is not found: the build directory it was built in, or why CMake left it out.
struct CollectorBuild {
  std::string build_dir;  // empty: this build has no collector
  std::string left_out_because;
};

// This executable's: compiled in from CMake (analyzer/cli/CMakeLists.txt).
CollectorBuild ThisCollectorBuild();

// The library to inject: `explicit_path` when given (it must be a file), else
// libbubblescope_collector.so in the directory of `executable_path` (the build tree), in
// kInstalledCollectorDir beside it (`cmake --install`) or in ../lib (a hand-made layout). The
// error says where it looked and, from `build`, what builds or installs the library.
absl::StatusOr<std::string> FindCollectorLibrary(const std::string& explicit_path,
                                                 const std::string& executable_path,
                                                 const CollectorBuild& build);

// Checks every flag; errors start with the flag ("--kinds: ..."). `executable_path` is where
// the running bubblescope is and `build` what its build did with the collector, for
// FindCollectorLibrary; `new_run_id` is the run id to use when --run-id is not given.
absl::StatusOr<RecordSettings> ParseRecordFlags(const RecordFlags& flags,
                                                const std::string& executable_path,
                                                const std::string& new_run_id,
                                                const CollectorBuild& build = ThisCollectorBuild());

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
