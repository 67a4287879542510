// Builders for hand-made ranks in the analysis tests: intervals, GPU streams, CPU threads.
#pragma once

#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

#include "bubblescope/trace.h"

namespace bubblescope::testing {

inline constexpr IntervalKind kCompute = IntervalKind::kComputeKernel;
inline constexpr IntervalKind kComm = IntervalKind::kCommKernel;
inline constexpr IntervalKind kCpu = IntervalKind::kCpuOp;
inline constexpr IntervalKind kCpuComm = IntervalKind::kCpuCommOp;
inline constexpr IntervalKind kRuntime = IntervalKind::kRuntime;

inline Interval Op(IntervalKind kind, TimeNs start, TimeNs end, int64_t correlation = 0) {
  Interval interval;
  interval.kind = kind;
  interval.start = start;
  interval.end = end;
  interval.correlation = correlation;
  return interval;
}

inline Timeline Stream(int64_t id, std::vector<Interval> intervals) {
  Timeline timeline;
  timeline.kind = TimelineKind::kGpuStream;
  timeline.device = 0;
  timeline.id = id;
  timeline.intervals = std::move(intervals);
  return timeline;
}

inline Timeline Thread(int64_t id, std::vector<Interval> intervals) {
  Timeline timeline;
  timeline.kind = TimelineKind::kCpuThread;
  timeline.pid = 1234;
  timeline.id = id;
  timeline.intervals = std::move(intervals);
  return timeline;
}

// A CPU annotation whose name is interned in `rank`.
inline Annotation CpuRange(Rank* rank, std::string_view name, TimeNs start, TimeNs end) {
  Annotation annotation;
  annotation.name = rank->names.Intern(name);
  annotation.start = start;
  annotation.end = end;
  annotation.scope = AnnotationScope::kCpu;
  return annotation;
}

}  // namespace bubblescope::testing
