// The timeline model every reader fills and every analysis reads.
//
// A Trace is a set of Ranks (one per process of the job). A Rank owns its timelines: one per GPU
// stream and one per CPU thread, each an ordered list of typed Intervals in int64 nanoseconds on
// that rank's own clock. Names are interned once per rank (NamePool). Readers only fill this;
// they never decide what a bubble is. Analyses only read it; they never parse a file.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "bubblescope/import_stats.h"
#include "bubblescope/name_pool.h"

namespace bubblescope {

using TimeNs = int64_t;  // nanoseconds on the owning rank's clock

// Every time the model holds lies within ±kMaxTimeNs: about ±146 years around the clock's zero
// (the Unix epoch, for traces with absolute times). Readers skip and count an event outside it
// (ImportCounter::kTimeOutOfRange), so the difference of any two times fits in an int64, and so
// does a time moved by any clock offset that ClampTime keeps in range.
inline constexpr TimeNs kMaxTimeNs = (TimeNs{1} << 62) - 1;

inline constexpr bool InTimeRange(TimeNs time) { return time >= -kMaxTimeNs && time <= kMaxTimeNs; }

// `time` brought back into ±kMaxTimeNs.
inline constexpr TimeNs ClampTime(TimeNs time) {
  return time < -kMaxTimeNs ? -kMaxTimeNs : (time > kMaxTimeNs ? kMaxTimeNs : time);
}

// a + b and a * b for sums of durations over many ranks and iterations: the int64 bound instead
// of wrapping. Real jobs never come near it; damaged inputs may, and must not make garbage.
inline int64_t SaturatingAdd(int64_t a, int64_t b) {
  using Limits = std::numeric_limits<int64_t>;
  int64_t sum = 0;
  if (!__builtin_add_overflow(a, b, &sum)) return sum;
  return b > 0 ? Limits::max() : Limits::min();
}
inline int64_t SaturatingMul(int64_t a, int64_t b) {
  using Limits = std::numeric_limits<int64_t>;
  int64_t product = 0;
  if (!__builtin_mul_overflow(a, b, &product)) return product;
  return (a < 0) != (b < 0) ? Limits::min() : Limits::max();
}

// A computed figure (a mean, a share of a window, a predicted byte count) rounded to a whole
// number, halves away from zero; NaN is 0 and values beyond the int64 range are its bound (a
// plain conversion, or std::llround, would be undefined there). The one double-to-integer path.
inline int64_t SaturatingRound(double value) {
  using Limits = std::numeric_limits<int64_t>;
  if (!(value == value)) return 0;
  if (value >= 9.2233720368547748e18) return Limits::max();  // 2^63, the first double past it
  if (value <= -9.2233720368547748e18) return Limits::min();
  // llround's builtin, which std::llround calls: <cmath> is not worth its size in every file.
  return static_cast<int64_t>(__builtin_llround(value));
}
inline int64_t RoundToNs(double ns) { return SaturatingRound(ns); }

enum class IntervalKind : uint8_t {
  kComputeKernel,  // a GPU kernel that is not communication
  kCommKernel,     // an NCCL/RCCL/HCCL kernel
  kMemcpy,
  kMemset,
  kCpuOp,      // a CPU operator (aten::*, autograd nodes, ...)
  kCpuCommOp,  // a CPU-side communication op (gloo:*, c10d::send, c10d::recv_, ...)
  kRuntime,    // a CUDA runtime or driver API call; launches carry the correlation id
};

std::string_view IntervalKindName(IntervalKind kind);

inline bool IsDeviceKind(IntervalKind kind) {
  return kind == IntervalKind::kComputeKernel || kind == IntervalKind::kCommKernel ||
         kind == IntervalKind::kMemcpy || kind == IntervalKind::kMemset;
}

// What a communication op does. p2p ops carry a peer; collectives a process group.
enum class CommKind : uint8_t {
  kUnknown,
  kSend,
  kRecv,
  kSendRecv,  // a fused NCCL SendRecv kernel (both directions, or direction unknown)
  kAllReduce,
  kAllGather,
  kReduceScatter,
  kBroadcast,
  kReduce,
  kAllToAll,
  kBarrier,
};

std::string_view CommKindName(CommKind kind);

// One collective of a process group (every member runs it), not point-to-point.
bool IsCollective(CommKind kind);

inline constexpr uint32_t kNoIndex = UINT32_MAX;

// Communication metadata of one interval, kept in a side table so Interval stays small.
struct CommInfo {
  int64_t bytes = -1;                 // payload bytes, -1 when unknown
  int32_t peer = -1;                  // global rank of the p2p peer, -1 when unknown
  int32_t group_size = -1;            // size of the process group, -1 when unknown
  uint32_t process_group = kNoIndex;  // index into Rank::process_groups, kNoIndex when unknown
  NameId collective = kNoName;  // the collective name as the trace wrote it ("send", "allreduce")
  NameId dtype = kNoName;
  CommKind kind = CommKind::kUnknown;
  // The group's sequence number of this operation (Kineto's "Seq", 2026): the same on every
  // member for a collective; -1 when unknown.
  int64_t seq = -1;
};

struct Interval {
  TimeNs start = 0;
  TimeNs end = 0;           // end >= start
  int64_t correlation = 0;  // CUDA correlation id linking a launch to its GPU op; 0 = unknown
  NameId name = kNoName;
  uint32_t comm = kNoIndex;  // index into Rank::comms for communication intervals
  IntervalKind kind = IntervalKind::kComputeKernel;

  TimeNs duration() const { return end - start; }
};
static_assert(sizeof(Interval) <= 40, "keep kept intervals compact");

enum class TimelineKind : uint8_t { kGpuStream, kCpuThread };

struct Timeline {
  TimelineKind kind = TimelineKind::kGpuStream;
  int32_t device = -1;  // GPU device index for streams; -1 for CPU threads
  int64_t pid = 0;      // process id for CPU threads (synthetic negative id when it was a string)
  int64_t id = 0;       // stream id for GPU streams, thread id for CPU threads
  std::vector<Interval> intervals;  // sorted by start, then by longer first
};

enum class AnnotationScope : uint8_t { kCpu, kGpu };

// A user range: torch.profiler.record_function, ProfilerStep#N, NVTX ranges, PP:1F3 markers.
struct Annotation {
  TimeNs start = 0;
  TimeNs end = 0;
  NameId name = kNoName;
  AnnotationScope scope = AnnotationScope::kCpu;
  int32_t device = -1;  // for GPU annotations
  int64_t thread_or_stream = 0;
};

// A `ProfilerStep#N` range found on the CPU.
struct ProfilerStep {
  int64_t number = 0;
  TimeNs start = 0;
  TimeNs end = 0;
};

// The largest byte count a memory figure may hold: 2^53 bytes (8 PiB), far above any device,
// and the largest integer a JSON reader's double holds exactly. A `[memory]` sample above it (or
// below 0) is no usable sample (ImportCounter::kBadMemorySample), and a report or what-if model
// holding one is refused, so sums and predictions of memory never overflow.
inline constexpr int64_t kMaxMemoryBytes = int64_t{1} << 53;

// One device-memory sample (Kineto's `[memory]` instant events, the collector's MEMORY2 records).
struct MemorySample {
  TimeNs time = 0;
  int64_t allocated_bytes = 0;  // Total Allocated
  int64_t reserved_bytes = 0;   // Total Reserved
  int32_t device = -1;
  // Host (CPU allocator) memory rather than an accelerator's: the memory of a CPU-only rank.
  bool host = false;
};

struct DeviceInfo {
  int32_t id = -1;
  std::string name;
  int64_t total_memory_bytes = 0;
  int32_t compute_major = 0;
  int32_t compute_minor = 0;
  int32_t multiprocessors = 0;
};

// A torch.distributed process group as the trace declares it (distributedInfo.pg_config, and
// the `Process Group Name` / `Process Group Description` / `Process Group Ranks` args of NCCL
// ops). torch names every group with a number ("0" is the default group) and describes it with
// what its creator passed as group_desc: Megatron-Core's "TENSOR_MODEL_PARALLEL_GROUP", a
// DeviceMesh's "mesh_tp", "default_pg", or "undefined" when nothing was passed.
struct ProcessGroup {
  std::string name;              // pg_name; empty when the trace gives none
  std::vector<int32_t> ranks;    // global ranks in group order
  std::string description = {};  // pg_desc; empty when the trace gives none
};

struct Rank {
  int32_t rank = -1;
  int32_t world_size = -1;
  std::string source_path;  // the file it was read from
  // The reader that read it (TraceReader::format_name: "kineto", "digest", ...); empty for a rank
  // made in memory (the simulator's). Set by the loader, as source_path is.
  std::string source_format;
  std::string host;
  int64_t pid = 0;
  std::string backend;  // "nccl", "gloo", ... from distributedInfo
  // The `bubblescope record` run that wrote the file (the collector's run id); empty for
  // traces from anything else. Files of different runs are never paired (loader/record_runs.h).
  std::string record_run_id;
  // What the rank's id and its clock rest on, where the reader or the loader records it (Nsight
  // exports, docs/nsight-systems.md): rank_source "environment:RANK", "nccl_world",
  // "gpu_index", "file_name", "only_file", "override"; time_base "session_start",
  // "system_clock", "utc_epoch", "as_recorded", with time_evidence in words. Empty otherwise.
  std::string rank_source;
  std::string time_base;
  std::string time_evidence;
  std::vector<DeviceInfo> devices;
  std::vector<Timeline> timelines;
  std::vector<Annotation> annotations;  // sorted by start
  std::vector<ProfilerStep> steps;      // sorted by start
  std::vector<MemorySample> memory;     // sorted by time
  std::vector<CommInfo> comms;
  std::vector<ProcessGroup> process_groups;
  NamePool names;
  ImportStats stats;

  std::string_view name(NameId id) const { return names.Get(id); }
  const CommInfo* comm(const Interval& interval) const {
    return interval.comm == kNoIndex ? nullptr : &comms[interval.comm];
  }
  // True if any GPU stream holds at least one interval.
  bool HasGpuActivity() const;
};

// The rank without its events (timelines, annotations, memory samples, communication records,
// names): its ids, source (path and format), host, backend, run, devices, process groups, import
// counters and profiler steps (a few per rank; they tell profiler cycles apart, as LoadTrace does
// with whole ranks). What `analyze --mpi`'s process 0 holds of every rank (job/job_parts.h).
Rank RankHeader(const Rank& rank);

// A JSON file found in a directory that is not a trace at all (an object with no traceEvents,
// such as a truth.json or config.json kept beside the ranks). Named files are never skipped.
struct SkippedFile {
  std::string path;
  std::string reason;
  // Set when the file was left out as another `bubblescope record` run's (analyze --run): its
  // run id ("" for a file from no record run). Such files are summed up, not listed one by one.
  std::optional<std::string> other_record_run;
  // Set when the file was left out as another profiler cycle's (analyze --cycle): that cycle's
  // number. Such files are summed up too.
  std::optional<int32_t> other_profiler_cycle = std::nullopt;
  // Set when the file is JSON without traceEvents found in a directory (the reason says so).
  bool other_json = false;
};

// One profiler cycle among the inputs: torch.profiler's schedule(repeat=0) writes a file per
// rank at the end of every active period, so one folder can hold several cycles of one job,
// told apart by the ProfilerStep numbers their files hold (loader/profiler_cycles.h).
struct ProfilerCycle {
  int32_t number = 0;  // 1 for the cycle with the lowest steps
  int64_t first_step = 0;
  int64_t last_step = 0;
  int32_t files = 0;
  // Every rank of the inputs has one file in it, each file holds all of its steps, and it spans
  // as many steps as the longest cycle (a cycle cut short when the job stopped spans fewer).
  bool complete = false;
};

// The profiler cycles found, when the inputs hold more than one, and the one analysed.
struct ProfilerCycles {
  std::vector<ProfilerCycle> found;  // by number; empty: one cycle (or files without steps)
  int32_t chosen = 0;                // the number analysed; 0 when `found` is empty
  bool by_flag = false;              // chosen by --cycle, not as the newest complete one
};

struct Trace {
  std::vector<Rank> ranks;  // sorted by rank id, ids unique
  std::vector<SkippedFile> skipped_files;
  ProfilerCycles profiler_cycles;
};

}  // namespace bubblescope
