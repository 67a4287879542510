// The bubble a schedule leaves by itself: the same p, v, m and schedule with equal stage costs,
// free transfers and no host delays. For gpipe, 1F1B and interleaved 1F1B (and forward-only passes)
// that is the closed form (p-1)/(v·m+p-1) (looped GPipe with m < p: see below). Zero-bubble
// schedules fill part of it with weight-gradient work, so their own ideal is lower and depends on
// the W costs: for one chunk per rank (ZB-H1) it is simulated with the measured mean F, B and W
// times of the stages (sim::ScheduleIdealBubble; equal F, B and W give (p-1)/(3m+p-1)). Where that
// cannot be done (several chunks per rank, whose zero-bubble placements the simulator does not
// model, or per-stage times that are unknown or unreliable) the closed form is reported as an upper
// bound, marked as such, rather than a figure the tool cannot stand behind. Each stage's own stall
// comes from the same run (the schedule itself for every family, ZB-H1 for zero bubble).
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "bubblescope/trace.h"
#include "pipeline/pipeline_op.h"
#include "pipeline/schedule_inference.h"

namespace bubblescope::pipeline {

enum class IdealSource : uint8_t {
  kClosedForm,  // (p-1)/(v·m+p-1), the schedule's own ideal
  kSimulated,   // the schedule simulated on the measured mean op times and free links
  kUpperBound,  // the closed form where the schedule's own ideal is lower and not modelled
};

// "closed_form", "simulated", "upper_bound"
std::string_view IdealSourceName(IdealSource source);

// One op of the schedule's own run.
struct IdealOp {
  int32_t stage = 0;  // pipeline position
  int32_t chunk = 0;  // virtual stage = chunk * p + stage
  OpType type = OpType::kForward;
  int32_t microbatch = 0;
  TimeNs start = 0;  // from the iteration's first compute
  TimeNs end = 0;
};

struct IdealBubble {
  double fraction = 0.0;
  IdealSource source = IdealSource::kClosedForm;
  // Per stage (pipeline position), the stall one iteration of the schedule's own run leaves it:
  // waits between its first and last compute that no link or imbalance causes (the warm-up to
  // steady-state hand-offs of 1F1B, for one). Empty when it could not be simulated (per-stage
  // times unknown or unreliable, or a job too large).
  std::vector<TimeNs> stage_stall_ns;
  // That run's ops, one iteration, by stage then time (the theoretical schedule to draw beside
  // the measured one), and its length; empty and 0 when it could not be simulated.
  std::vector<IdealOp> schedule;
  TimeNs schedule_ns = 0;
};

// (p-1)/(v·m+p-1); 0 when p, v or m is not positive.
double ClosedFormBubbleFraction(int32_t p, int32_t v, int32_t m);

// The closed form of `shape`'s family at its p, v and m (sim::ClosedFormIdealBubble): the one
// above, except looped GPipe (v > 1) with m < p, whose stage 0 also waits between chunks for
// microbatch 0 to come round: (p-1+(v-1)(p-m))/(v·m+p-1+(v-1)(p-m)) (docs/bubble.md).
double ClosedFormBubbleFraction(const schedule_inference::Result& shape);

IdealBubble IdealBubbleOf(const schedule_inference::Result& shape);

}  // namespace bubblescope::pipeline
