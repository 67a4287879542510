// The simulator's view of an inferred shape: its schedule (zero-bubble families run as ZB-H1)
// and a config that holds nothing but compute, for the analyses that simulate a measured
// pipeline (rebalance, the schedule's own run, what-if).
#pragma once

#include <limits>

#include "pipeline/pipeline_op.h"
#include "pipeline/schedule_inference.h"
#include "simulator/config.h"
#include "simulator/program.h"

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

// The simulator's op type as the pipeline's.
inline OpType OpTypeOf(sim::OpType type) {
  switch (type) {
    case sim::OpType::kForward:
      return OpType::kForward;
    case sim::OpType::kBackward:
      return OpType::kBackward;
    case sim::OpType::kWeightGrad:
      return OpType::kWeightGrad;
  }
  return OpType::kForward;
}

// `schedule` at p, m and v, one iteration of one kernel per op on free links, no launch gaps,
// optimizer, barrier or jitter; the stage costs are the caller's to fill.
inline sim::Config ComputeOnlyConfig(int32_t p, int32_t m, int32_t v, sim::Schedule schedule) {
  sim::Config config;
  config.stages = p;
  config.microbatches = m;
  config.virtual_stages = v;
  config.schedule = schedule;
  config.iterations = 1;
  config.kernels_per_op = 1;
  config.activation_bytes = 0;
  config.link = sim::Link{.gbps = std::numeric_limits<double>::infinity(), .latency_ns = 0};
  config.iteration_barrier = false;
  return config;
}

// The same with the shape's p, m and v.
inline sim::Config ComputeOnlyConfig(const schedule_inference::Result& shape,
                                     sim::Schedule schedule) {
  return ComputeOnlyConfig(shape.p, shape.m, shape.v, schedule);
}

}  // namespace bubblescope::pipeline
