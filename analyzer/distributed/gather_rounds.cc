#include "distributed/gather_rounds.h"

#include <algorithm>

namespace bubblescope::distributed {

uint64_t PerProcessChunk(int processes, uint64_t round_bytes) {
  return std::max<uint64_t>(1, round_bytes / static_cast<uint64_t>(std::max(processes, 1)));
}

size_t RoundCount(const std::vector<uint64_t>& sizes, uint64_t per_process) {
  const uint64_t largest = sizes.empty() ? 0 : *std::max_element(sizes.begin(), sizes.end());
  return static_cast<size_t>((largest + per_process - 1) / per_process);
}

GatherRound PlanRound(const std::vector<uint64_t>& sizes, uint64_t per_process, size_t round) {
  GatherRound plan;
  const uint64_t start = per_process * round;
  for (const uint64_t size : sizes) {
    const uint64_t count = size > start ? std::min(per_process, size - start) : 0;
    plan.displacements.push_back(static_cast<int>(plan.total));
    plan.counts.push_back(static_cast<int>(count));
    plan.total += count;
  }
  return plan;
}

}  // namespace bubblescope::distributed
