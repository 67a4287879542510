// Peak device memory of a rank: the largest Total Allocated and the largest Total Reserved over
// its memory samples (each peak may come from a different sample).
#pragma once

#include <cstdint>

#include "bubblescope/trace.h"

namespace bubblescope {

struct MemoryPeak {
  int64_t allocated_bytes = -1;  // -1 when the rank has no memory samples
  int64_t reserved_bytes = -1;
};

MemoryPeak PeakMemory(const Rank& rank);

}  // namespace bubblescope
