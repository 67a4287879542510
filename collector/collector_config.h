// The collector's settings and the identity of the process it runs in, both read from the
// environment the launcher gives the job. This is the one place where environment text becomes a
// config struct: everything else in the collector takes these structs.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace bubblescope::collector {

// Activity kinds the user can switch on and off (BUBBLESCOPE_KINDS), as bits.
enum KindBit : uint32_t {
  kKindKernel = 1u << 0,
  kKindMemcpy = 1u << 1,
  kKindMemset = 1u << 2,
  kKindMemory = 1u << 3,
  kKindNvtx = 1u << 4,
  kKindRuntime = 1u << 5,
  kKindDriver = 1u << 6,
  kKindNccl = 1u << 7,
  // The runtime and driver calls that only query host-side state (api_filter.h); off unless
  // named, and only with `runtime` or `driver` on.
  kKindQueries = 1u << 8,
};
// Every kind but `queries`: the default.
inline constexpr uint32_t kAllKinds = (1u << 8) - 1;

enum class StartMode : uint8_t {
  kImmediate,    // record from injection on
  kProfilerApi,  // record between cudaProfilerStart and cudaProfilerStop
  kAfterDelay,   // record from `start_delay_ms` after injection on
  kSteps,        // record the training steps `first_step` to `last_step` (ProfilerStep#N ranges)
};

// Caps on one process's recording (BUBBLESCOPE_LIMIT); 0: no cap. Once either is reached,
// recording stops for the rest of the process.
struct RecordingLimit {
  int64_t max_bytes = 0;         // the trace file's size
  int64_t max_recording_ms = 0;  // time since recording first turned on
};

struct CollectorConfig {
  std::string output_dir = "bubblescope_traces";
  uint32_t kinds = kAllKinds;
  int64_t flush_ms = 1000;
  // BUBBLESCOPE_FLUSH_ON_STEP=1 (`record --live`): besides every `flush_ms`, flush whenever a
  // ProfilerStep#N range opens, so that a step's records reach the file as soon as the next step
  // begins (what `bubblescope watch` follows) rather than up to `flush_ms` later.
  bool flush_on_step = false;
  StartMode start = StartMode::kImmediate;
  int64_t start_delay_ms = 0;
  int64_t first_step = 0;  // kSteps: the window, both ends included
  int64_t last_step = 0;
  // kSteps from "steps:+A:+B": the window counts from the first ProfilerStep#N the process opens
  // (N is +0) instead of from step 0, and recording runs from the start until that range opens,
  // so a job without such ranges is still recorded (bounded by `limit`).
  bool steps_relative = false;
  RecordingLimit limit;
  int64_t buffer_cap_bytes = int64_t{64} << 20;  // all CUPTI buffers in flight together
  // The `bubblescope record` run this process belongs to (BUBBLESCOPE_RUN_ID); empty when the
  // collector was injected by other means. It goes into the file name and the process metadata,
  // so that `analyze` never pairs one run's ranks with another's.
  std::string run_id;
};

// Returns the value of an environment variable, or nullptr when it is unset.
using EnvLookup = std::function<const char*(const char*)>;

// Reads BUBBLESCOPE_OUTPUT_DIR, BUBBLESCOPE_KINDS (comma list of kernel, memcpy, memset, memory,
// nvtx, runtime, driver, nccl, queries), BUBBLESCOPE_FLUSH_MS (> 0), BUBBLESCOPE_FLUSH_ON_STEP
// (0 or 1), BUBBLESCOPE_START (immediate,
// profiler-api, after:SECONDS, steps:A:B, steps:+A:+B), BUBBLESCOPE_LIMIT (MIB:SECONDS, each 0 for
// no cap), BUBBLESCOPE_BUFFER_MB (> 0) and BUBBLESCOPE_RUN_ID (of the form
// record_format::IsValidRecordRunId accepts). Unset or empty variables keep their defaults. False
// with a one-line `*error` naming the variable on a bad value.
bool ParseCollectorConfig(const EnvLookup& env, CollectorConfig* config, std::string* error);

// Whether recording is on from the collector's start: immediate, and relative step windows
// (which record until the first step range tells them where they are).
bool RecordsFromStart(const CollectorConfig& config);

// N of an NVTX range named `ProfilerStep#N` (N a whole number); nullopt for any other name.
std::optional<int64_t> ProfilerStepNumber(std::string_view name);

// Whether the collector needs to see the NVTX ranges the job opens (CUPTI's NVTX callbacks,
// CollectorRuntime::OnRangeStart): for a step window, and to flush at each step.
bool FollowsStepRanges(const CollectorConfig& config);

// Whether the NVTX range `name` just opened turns kSteps recording on (true) or off (false): a
// `ProfilerStep#N` range with N in the window turns it on, one after the window turns it off,
// and (relative windows, which record from the start) one before the window turns it off.
// `*first_step` is the first step number this process opened, set by the first step range seen
// (relative windows count from it). Anything else, or another start mode: no change.
std::optional<bool> StepWindowChange(const CollectorConfig& config, std::string_view name,
                                     std::optional<int64_t>* first_step);

// The kinds of a KindBit mask as BUBBLESCOPE_KINDS names them, comma-separated ("kernel,nvtx").
std::string KindNames(uint32_t kinds);

// Who this process is in the job, from the launcher's variables; -1 when unknown.
struct ProcessIdentity {
  int32_t rank = -1;        // RANK, SLURM_PROCID, OMPI_COMM_WORLD_RANK, PMI_RANK (first set)
  int32_t world_size = -1;  // WORLD_SIZE, SLURM_NTASKS, OMPI_COMM_WORLD_SIZE, PMI_SIZE
  int32_t local_rank = -1;  // LOCAL_RANK, SLURM_LOCALID, OMPI_COMM_WORLD_LOCAL_RANK
  std::string host;
  int64_t pid = 0;
};

// Rank variables that are set but not a non-negative integer count as unknown.
ProcessIdentity ReadProcessIdentity(const EnvLookup& env, std::string host, int64_t pid);

// "bubblescope-{run}-rank{R}-world{W}-{host}-{pid}.json"; no "{run}-" without a run id, "norank"
// for an unknown rank, no "-world{W}" for an unknown world size. Characters of the host outside
// [A-Za-z0-9._-] become '_'.
std::string TraceFileName(const ProcessIdentity& identity, const std::string& run_id);

}  // namespace bubblescope::collector
