// The simulator's view of an inferred shape: its schedule (zero-bubble families run as ZB-H1)
// and a config that holds nothing but compute, for the analyses that simulate a measured
// pipeline (rebalance, the schedule's own run, what-if).
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

#include "pipeline/pipeline_op.h"
#include "pipeline/schedule_inference.h"
#include "schedule_engine/config.h"
#include "schedule_engine/program.h"

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

// The order of ops `shape`'s schedule runs on each stage (sim::StageProgram at its p, v, m and
// family), one program per stage; nothing when the simulator does not model the shape, or when
// it holds more ops than `op_limit`, which a damaged trace could claim: callers pass a bound
// linear in what they measured.
inline std::optional<std::vector<std::vector<sim::Op>>> StagePrograms(
    const schedule_inference::Result& shape, int64_t op_limit) {
  const int64_t program_ops = int64_t{shape.p} * shape.m * shape.v * 3;
  if (shape.p < 1 || shape.m < 1 || shape.v < 1 || program_ops > op_limit) return std::nullopt;
  sim::Config config = ComputeOnlyConfig(shape, SimScheduleOf(shape.family));
  // Costs only need to be valid: a program is the order of ops, not their times.
  const bool training = config.schedule != sim::Schedule::kForwardOnly;
  const bool split = config.schedule == sim::Schedule::kZeroBubbleH1;
  config.costs.assign(static_cast<size_t>(shape.p),
                      sim::StageCost{.forward = shape.v,
                                     .backward = training ? shape.v : 0,
                                     .weight_grad = split ? shape.v : 0});
  if (!sim::ValidateConfig(config).ok()) return std::nullopt;
  std::vector<std::vector<sim::Op>> programs;
  for (int32_t stage = 0; stage < shape.p; ++stage) {
    programs.push_back(sim::StageProgram(config, stage));
  }
  return programs;
}

}  // namespace bubblescope::pipeline
