// The "device" of each rank: the intervals every bubble analysis measures.
//
// A rank with GPU activity is measured on its GPU streams: every kernel, communication kernel,
// memcpy and memset on any stream. A rank without GPU activity (a gloo pipeline on the CPU) has
// no device, so the CPU thread that runs the model stands in for it: the thread whose top-level
// CPU ops (kCpuOp and kCpuCommOp not nested inside another op of the thread) cover the most time.
// Only top-level ops count there, so a nested aten::addmm inside aten::linear is not counted
// twice; kCpuOp is compute and kCpuCommOp is communication. This is the only place that decides
// what a rank's device is, so the summary and the bubble figures always agree on it.
#pragma once

#include <cstdint>
#include <vector>

#include "bubblescope/trace.h"

namespace bubblescope::device_activity {

enum class DeviceKind : uint8_t {
  kGpu,  // GPU streams
  kCpu,  // the CPU model thread of a rank without GPU activity
};

enum class ActivityClass : uint8_t {
  kCompute,  // compute kernels; top-level kCpuOp on a CPU rank
  kComm,     // communication kernels; top-level kCpuCommOp on a CPU rank
  kCopy,     // memcpy and memset
};

struct DeviceInterval {
  TimeNs start = 0;
  TimeNs end = 0;
  int64_t correlation = 0;  // CUDA correlation id shared with the launch; 0 when unknown or CPU
  uint32_t timeline = 0;    // index into Rank::timelines
  uint32_t interval = 0;    // index into that timeline's intervals
  ActivityClass activity = ActivityClass::kCompute;
};

struct RankActivity {
  int32_t rank = -1;
  DeviceKind kind = DeviceKind::kGpu;
  // CPU ranks: index into Rank::timelines of the model thread; -1 for GPU ranks and for CPU
  // ranks without any CPU op.
  int32_t model_thread = -1;
  // Sorted by start, then longer first; zero-length intervals are kept (they still bound a
  // span even though they cover no time).
  std::vector<DeviceInterval> intervals;
};

struct Options {};

struct Result {
  std::vector<RankActivity> ranks;  // in trace order
};

// The device intervals of one rank.
RankActivity ForRank(const Rank& rank);

Result Analyze(const Trace& trace, const Options& options);

}  // namespace bubblescope::device_activity
