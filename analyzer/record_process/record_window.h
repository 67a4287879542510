// Which part of a job `bubblescope record` records: the window the collector follows
// (BUBBLESCOPE_START) and the caps that stop it (BUBBLESCOPE_LIMIT), and the one line that says
// so when recording starts (docs/record.md, "What is recorded").
//
// Without a choice, record takes a bounded window: what a pipeline analysis needs is a few
// complete iterations after the warm-up, not the whole job, whose traces would grow by hundreds
// of MiB per rank and minute. So the default records training steps +2 to +6 counted from each
// process's first ProfilerStep#N NVTX range (steps 0 and 1 are the warm-up: allocator growth,
// autotuning, lazily created communicators, the optimizer's state; five steps leave four whole
// ones when the last is cut), and where the job has no such ranges, from the start until the
// trace holds 256 MiB. Not a time cap: it would count from CUDA's initialisation, which in a large
// job can come many minutes (a checkpoint loaded) before the first iteration, while a trace grows
// only with the work recorded. --start-after, a time window, also stops 600 s after it began.
#pragma once

#include <cstdint>
#include <string>

namespace bubblescope {

enum class WindowKind : uint8_t {
  kDefault,      // steps +first..+last from the first step range seen; from the start without
  kSteps,        // steps first..last (ProfilerStep#N, N from 0)
  kAfterDelay,   // from delay_seconds after the process initialises CUDA
  kProfilerApi,  // between the job's cudaProfilerStart and cudaProfilerStop
  kWholeJob,     // everything, no cap
};

inline constexpr int64_t kDefaultWindowFirstStep = 2;
inline constexpr int64_t kDefaultWindowLastStep = 6;
inline constexpr int64_t kDefaultMaxMib = 256;
inline constexpr int64_t kDefaultAfterDelayMaxSeconds = 600;  // --start-after's own time cap

struct RecordWindow {
  WindowKind kind = WindowKind::kDefault;
  int64_t first_step = kDefaultWindowFirstStep;  // kDefault, kSteps: both ends included
  int64_t last_step = kDefaultWindowLastStep;
  int64_t delay_seconds = 0;  // kAfterDelay
  // Caps per process; 0: none. Not for kWholeJob, which has none.
  int64_t max_mib = kDefaultMaxMib;
  int64_t max_seconds = 0;
};

// BUBBLESCOPE_START's value ("steps:+2:+6", "steps:3:7", "after:30", "profiler-api"); empty for
// the whole job (the collector's default, immediate).
std::string CollectorStartValue(const RecordWindow& window);

// BUBBLESCOPE_LIMIT's value ("256:0", "256:600"); empty without caps (the whole job has none).
std::string CollectorLimitValue(const RecordWindow& window);

// The line record prints when the job starts, without a prefix: the window, its caps, and for
// the default how to choose another.
std::string DescribeRecordWindow(const RecordWindow& window);

}  // namespace bubblescope
