#include "pipeline/step_map.h"

#include <algorithm>
#include <limits>
#include <set>

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

// Whether the rank has step `number` whole: present, not a partial period, and not the last
// step of a rank whose file was cut short.
bool Whole(const RankStepNumbers& rank, int64_t number) {
  int64_t last = std::numeric_limits<int64_t>::min();
  bool found = false;
  for (const iterations::StepStart& step : *rank.steps) {
    last = std::max(last, step.number);
    found = found || (step.number == number && !step.partial);
  }
  return found && !(rank.cut_short && number == last);
}

bool Present(const RankStepNumbers& rank, int64_t number) {
  return std::any_of(rank.steps->begin(), rank.steps->end(),
                     [number](const iterations::StepStart& step) { return step.number == number; });
}

}  // namespace

StepMap StepMap::FromSteps(const std::vector<iterations::StepStart>& steps, int64_t reference) {
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

std::optional<int64_t> SharedReference(const std::vector<RankStepNumbers>& ranks) {
  std::set<int64_t> numbers;
  for (const RankStepNumbers& rank : ranks) {
    for (const iterations::StepStart& step : *rank.steps) numbers.insert(step.number);
  }
  for (int64_t number : numbers) {
    if (std::all_of(ranks.begin(), ranks.end(),
                    [&](const RankStepNumbers& rank) { return Whole(rank, number); })) {
      return number;
    }
  }
  for (int64_t number : numbers) {
    if (std::all_of(ranks.begin(), ranks.end(),
                    [&](const RankStepNumbers& rank) { return Present(rank, number); })) {
      return number;
    }
  }
  if (numbers.empty()) return std::nullopt;
  return *numbers.begin();
}

std::vector<StepMap> ReferenceSteps(const Trace& trace, const iterations::Steps& steps,
                                    const std::vector<size_t>& positions) {
  std::optional<int64_t> shared;
  if (steps.source != iterations::StepSource::kRepeatingSchedule) {
    std::vector<RankStepNumbers> ranks;
    for (size_t r : positions) {
      ranks.push_back({&steps.ranks[r], iterations::CutShort(trace.ranks[r])});
    }
    shared = SharedReference(ranks);
  }
  return ReferenceSteps(steps, positions, shared);
}

std::vector<StepMap> ReferenceSteps(const iterations::Steps& steps,
                                    const std::vector<size_t>& positions,
                                    std::optional<int64_t> shared) {
  std::vector<StepMap> maps;
  for (size_t r = 0; r < steps.ranks.size(); ++r) {
    const std::vector<iterations::StepStart>& rank_steps = steps.ranks[r];
    const bool in_pipelines = std::find(positions.begin(), positions.end(), r) != positions.end();
    int64_t reference = rank_steps.empty() ? 0 : rank_steps.front().number;
    if (steps.source == iterations::StepSource::kRepeatingSchedule) {
      reference = 0;  // each rank's first whole period
    } else if (in_pipelines && shared.has_value()) {
      reference = *shared;
    }
    maps.push_back(StepMap::FromSteps(rank_steps, reference));
  }
  return maps;
}

}  // namespace bubblescope::pipeline
