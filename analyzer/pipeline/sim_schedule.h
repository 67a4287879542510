// The simulator's schedule for an inferred schedule family (zero-bubble families run as ZB-H1).
#pragma once

#include "pipeline/schedule_inference.h"
#include "simulator/config.h"

namespace bubblescope::pipeline {

inline sim::Schedule SimScheduleOf(schedule_inference::ScheduleFamily family) {
  using schedule_inference::ScheduleFamily;
  switch (family) {
    case ScheduleFamily::kGpipe:
      return sim::Schedule::kGpipe;
    case ScheduleFamily::k1F1B:
      return sim::Schedule::k1F1B;
    case ScheduleFamily::kInterleaved:
      return sim::Schedule::kInterleaved1F1B;
    case ScheduleFamily::kZeroBubble:
      return sim::Schedule::kZeroBubbleH1;
    case ScheduleFamily::kForwardOnly:
      return sim::Schedule::kForwardOnly;
  }
  return sim::Schedule::kGpipe;
}

}  // namespace bubblescope::pipeline
