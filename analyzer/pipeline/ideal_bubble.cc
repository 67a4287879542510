#include "pipeline/ideal_bubble.h"

namespace bubblescope::pipeline {

std::string_view IdealSourceName(IdealSource source) {
  switch (source) {
    case IdealSource::kClosedForm:
      return "closed_form";
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
  if (shape.family == schedule_inference::ScheduleFamily::kZeroBubble) {
    ideal.source = IdealSource::kUpperBound;
  }
  return ideal;
}

}  // namespace bubblescope::pipeline
