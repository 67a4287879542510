#include "analysis/memory_peak.h"

#include <algorithm>

namespace bubblescope {

MemoryPeak PeakMemory(const Rank& rank) {
  MemoryPeak peak;
  for (const MemorySample& sample : rank.memory) {
    peak.allocated_bytes = std::max(peak.allocated_bytes, sample.allocated_bytes);
    peak.reserved_bytes = std::max(peak.reserved_bytes, sample.reserved_bytes);
  }
  return peak;
}

}  // namespace bubblescope
