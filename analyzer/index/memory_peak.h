// Peak memory of a rank: the largest Total Allocated and the largest Total Reserved over its
// memory samples (each peak may come from a different sample). A rank with GPU activity is
// measured on its device samples; a CPU-only rank (a gloo pipeline) on its host samples, the
// memory its stages really hold, when it has any (else on whatever device samples it has).
#pragma once

#include <cstdint>

#include "bubblescope/trace.h"

namespace bubblescope {

struct MemoryPeak {
  int64_t allocated_bytes = -1;  // -1 when the rank has no memory samples
  int64_t reserved_bytes = -1;
  // The least allocated at any sample: what stays allocated through an iteration (weights,
  // gradients, optimizer state), the floor the activations sit on. -1 without samples.
  int64_t lowest_allocated_bytes = -1;
};

MemoryPeak PeakMemory(const Rank& rank);

}  // namespace bubblescope
