#include "pipeline/step_map.h"

#include <algorithm>
#include <iterator>
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
  map.slots_.reserve(rank.steps.size());
  for (const ProfilerStep& step : rank.steps) {
    map.slots_.push_back(Slot{step.start, static_cast<int32_t>(map.slots_.size())});
  }
  std::stable_sort(map.slots_.begin(), map.slots_.end(),
                   [](const Slot& a, const Slot& b) { return a.start < b.start; });
  for (size_t i = 0; i < map.slots_.size(); ++i) map.slots_[i].step = static_cast<int32_t>(i);
  return map;
}

StepMap StepMap::FromIterations(const std::vector<iterations::StepStart>& steps,
                                int64_t reference) {
  StepMap map;
  if (steps.empty()) return map;
  map.before_first_ = std::nullopt;
  map.slots_.reserve(steps.size());
  for (const iterations::StepStart& step : steps) {
    Slot slot{step.start, std::nullopt};
    if (!step.partial) slot.step = Relative(step.number, reference);
    map.slots_.push_back(slot);
  }
  std::stable_sort(map.slots_.begin(), map.slots_.end(),
                   [](const Slot& a, const Slot& b) { return a.start < b.start; });
  return map;
}

std::optional<int32_t> StepMap::At(TimeNs time) const {
  // The last slot starting at or before `time`.
  auto after = std::upper_bound(slots_.begin(), slots_.end(), time,
                                [](TimeNs t, const Slot& slot) { return t < slot.start; });
  if (after == slots_.begin()) return before_first_;
  return std::prev(after)->step;
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
