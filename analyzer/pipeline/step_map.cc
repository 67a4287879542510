#include "pipeline/step_map.h"

#include <algorithm>
#include <limits>

namespace bubblescope::pipeline {
namespace {

// A step's distance from the reference, kept inside int32 (step numbers are int64 in the
// trace; no trace holds 2^31 steps, but a damaged ProfilerStep#N may claim any N, so the
// subtraction itself must not overflow either).
int32_t Relative(int64_t number, int64_t reference) {
  constexpr int64_t kLowest = std::numeric_limits<int32_t>::min() + int64_t{1};
  constexpr int64_t kHighest = std::numeric_limits<int32_t>::max();
  int64_t distance = 0;
  if (__builtin_sub_overflow(number, reference, &distance)) {
    return static_cast<int32_t>(number > reference ? kHighest : kLowest);
  }
  return static_cast<int32_t>(std::clamp(distance, kLowest, kHighest));
}

}  // namespace

StepMap StepMap::FromProfilerSteps(const Rank& rank) {
  StepMap map;
  map.steps_ = iterations::ProfilerStepStarts(rank);
  // By position: the first step is step 0 whatever its ProfilerStep number.
  for (size_t i = 0; i < map.steps_.size(); ++i) map.steps_[i].number = static_cast<int64_t>(i);
  return map;
}

StepMap StepMap::FromIterations(const std::vector<iterations::StepStart>& steps,
                                int64_t reference) {
  StepMap map;
  if (steps.empty()) return map;
  map.steps_ = steps;
  map.reference_ = reference;
  map.before_first_ = std::nullopt;
  return map;
}

std::optional<int32_t> StepMap::At(TimeNs time) const {
  const int64_t index = iterations::StepIndexAt(steps_, time);
  if (index < 0) return before_first_;
  const iterations::StepStart& step = steps_[static_cast<size_t>(index)];
  if (step.partial) return std::nullopt;
  return Relative(step.number, reference_);
}

int64_t ReferenceIteration(const iterations::Result& assignment,
                           const std::vector<size_t>& rank_indices) {
  for (const iterations::Iteration& iteration : assignment.iterations) {
    if (iterations::CompleteFor(iteration, rank_indices)) return iteration.number;
  }
  for (const iterations::Iteration& iteration : assignment.iterations) {
    const bool everywhere =
        std::all_of(rank_indices.begin(), rank_indices.end(), [&iteration](size_t r) {
          return r < iteration.ranks.size() && iteration.ranks[r].present;
        });
    if (everywhere) return iteration.number;
  }
  return assignment.iterations.empty() ? -1 : assignment.iterations.front().number;
}

}  // namespace bubblescope::pipeline
