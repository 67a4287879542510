#include "index/memory_peak.h"

#include <algorithm>

namespace bubblescope {

MemoryPeak PeakMemory(const Rank& rank) {
  MemoryPeak peak;
  const bool host =
      !rank.HasGpuActivity() && std::any_of(rank.memory.begin(), rank.memory.end(),
                                            [](const MemorySample& sample) { return sample.host; });
  for (const MemorySample& sample : rank.memory) {
    if (sample.host != host) continue;
    peak.allocated_bytes = std::max(peak.allocated_bytes, sample.allocated_bytes);
    peak.lowest_allocated_bytes =
        peak.lowest_allocated_bytes < 0
            ? sample.allocated_bytes
            : std::min(peak.lowest_allocated_bytes, sample.allocated_bytes);
    peak.reserved_bytes = std::max(peak.reserved_bytes, sample.reserved_bytes);
  }
  return peak;
}

}  // namespace bubblescope
