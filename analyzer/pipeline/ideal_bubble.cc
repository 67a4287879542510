#include "pipeline/ideal_bubble.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "pipeline/sim_schedule.h"
#include "schedule_engine/config.h"
#include "schedule_engine/engine.h"
#include "schedule_engine/records.h"
#include "schedule_engine/truth.h"

namespace bubblescope::pipeline {
namespace {

// Jobs whose own run is simulated: the engine's cost is linear in p·m·v, so this bounds it.
constexpr int64_t kMaxSimulatedOps = int64_t{1} << 17;

TimeNs MeanOverStages(const schedule_inference::Result& shape,
                      double (*of)(const schedule_inference::StageFigures&)) {
  double total = 0.0;
  for (const schedule_inference::StageFigures& stage : shape.stages) total += of(stage);
  return static_cast<TimeNs>(std::llround(total / static_cast<double>(shape.stages.size())));
}

}  // namespace

std::string_view IdealSourceName(IdealSource source) {
  switch (source) {
    case IdealSource::kClosedForm:
      return "closed_form";
    case IdealSource::kSimulated:
      return "simulated";
    case IdealSource::kUpperBound:
      return "upper_bound";
  }
  return "unknown";
}

double ClosedFormBubbleFraction(int32_t p, int32_t v, int32_t m) {
  return sim::ClosedFormIdealBubble(sim::Schedule::k1F1B, p, v, m);
}

double ClosedFormBubbleFraction(const schedule_inference::Result& shape) {
  return sim::ClosedFormIdealBubble(SimScheduleOf(shape.family), shape.p, shape.v, shape.m);
}

IdealBubble IdealBubbleOf(const schedule_inference::Result& shape) {
  IdealBubble ideal;
  ideal.fraction = ClosedFormBubbleFraction(shape);
  const bool zero_bubble = shape.family == schedule_inference::ScheduleFamily::kZeroBubble;
  if (zero_bubble) ideal.source = IdealSource::kUpperBound;
  const bool simulable =
      shape.p > 0 && shape.m > 0 && shape.v > 0 &&
      shape.stages.size() == static_cast<size_t>(shape.p) && shape.stage_counts_fit &&
      int64_t{shape.p} * shape.m * shape.v <= kMaxSimulatedOps && (!zero_bubble || shape.v == 1);
  if (!simulable) return ideal;
  // The schedule's own run: every stage at the mean op times (per rank, over its chunks).
  sim::Config config = ComputeOnlyConfig(shape, SimScheduleOf(shape.family));
  using Stage = schedule_inference::StageFigures;
  const auto chunks = static_cast<TimeNs>(shape.v);
  const bool training = config.schedule != sim::Schedule::kForwardOnly;
  TimeNs forward = MeanOverStages(shape, [](const Stage& s) { return s.forward.mean_ns; });
  TimeNs backward = MeanOverStages(shape, [](const Stage& s) { return s.backward.mean_ns; });
  TimeNs weight_grad = MeanOverStages(shape, [](const Stage& s) { return s.weight_grad.mean_ns; });
  if (!zero_bubble) {
    backward += weight_grad;
    weight_grad = 0;
  }
  config.costs.assign(
      static_cast<size_t>(shape.p),
      sim::StageCost{.forward = std::max<TimeNs>(1, forward * chunks),
                     .backward = training ? std::max<TimeNs>(1, backward * chunks) : 0,
                     .weight_grad = zero_bubble ? std::max<TimeNs>(1, weight_grad * chunks) : 0});
  if (!sim::ValidateConfig(config).ok()) return ideal;
  absl::StatusOr<sim::Records> records = sim::RunSchedule(config);
  if (!records.ok()) return ideal;
  const sim::Truth truth = sim::ComputeTruth(config, *records);
  if (zero_bubble) {
    ideal.fraction = truth.bubble_fraction;
    ideal.source = IdealSource::kSimulated;
  }
  for (const sim::RankIterationTruth& rank : truth.iterations.front().ranks) {
    ideal.stage_stall_ns.push_back(rank.split.stall);  // the run puts stage s on rank s
  }
  TimeNs origin = std::numeric_limits<TimeNs>::max();
  TimeNs last = std::numeric_limits<TimeNs>::min();
  for (const sim::RankRecord& rank : records->ranks) {
    for (const sim::OpRecord& op : rank.ops) {
      origin = std::min(origin, op.start);
      last = std::max(last, op.end);
    }
  }
  for (const sim::RankRecord& rank : records->ranks) {
    for (const sim::OpRecord& op : rank.ops) {
      ideal.schedule.push_back(IdealOp{.stage = rank.stage,
                                       .chunk = op.op.chunk,
                                       .type = OpTypeOf(op.op.type),
                                       .microbatch = op.op.microbatch,
                                       .start = op.start - origin,
                                       .end = op.end - origin});
    }
  }
  if (!ideal.schedule.empty()) ideal.schedule_ns = last - origin;
  return ideal;
}

}  // namespace bubblescope::pipeline
