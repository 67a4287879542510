#include "pipeline/ideal_bubble.h"

#include <cmath>

#include "simulator/config.h"
#include "simulator/truth.h"

namespace bubblescope::pipeline {
namespace {

// Jobs whose ideal is simulated: the engine's cost is linear in p·m, so this bounds the work.
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
  if (p <= 0 || v <= 0 || m <= 0) return 0.0;
  const double idle_slots = static_cast<double>(p - 1);
  return idle_slots / (static_cast<double>(v) * static_cast<double>(m) + idle_slots);
}

IdealBubble IdealBubbleOf(const schedule_inference::Result& shape) {
  IdealBubble ideal{ClosedFormBubbleFraction(shape.p, shape.v, shape.m), IdealSource::kClosedForm};
  if (shape.family != schedule_inference::ScheduleFamily::kZeroBubble) return ideal;
  ideal.source = IdealSource::kUpperBound;
  const bool simulable = shape.v == 1 && shape.p > 0 && shape.m > 0 &&
                         shape.stages.size() == static_cast<size_t>(shape.p) &&
                         shape.stage_counts_fit &&
                         int64_t{shape.p} * shape.m <= kMaxSimulatedOps;
  if (!simulable) return ideal;
  sim::Config config;
  config.schedule = sim::Schedule::kZeroBubbleH1;
  config.stages = shape.p;
  config.microbatches = shape.m;
  using Stage = schedule_inference::StageFigures;
  const sim::StageCost mean{
      .forward = MeanOverStages(shape, [](const Stage& s) { return s.forward.mean_ns; }),
      .backward = MeanOverStages(shape, [](const Stage& s) { return s.backward.mean_ns; }),
      .weight_grad = MeanOverStages(shape, [](const Stage& s) { return s.weight_grad.mean_ns; })};
  config.costs.assign(static_cast<size_t>(shape.p), mean);
  if (!sim::ValidateConfig(config).ok()) return ideal;
  return IdealBubble{sim::ScheduleIdealBubble(config), IdealSource::kSimulated};
}

}  // namespace bubblescope::pipeline
