// Device-memory samples of one simulated rank (device 0), on the true clock.
//
// allocated = the rank's weights + activation_stash_bytes per in-flight microbatch per chunk. A
// forward stashes at its start; the stash is released at the end of the op that last needs it:
// its B (zb-h1: its W, which still needs the activations; fwd-only: the forward itself, as
// inference keeps nothing). reserved = the running maximum of allocated rounded up to 2 MiB (the
// caching allocator's segment size). The first sample is taken when the rank starts (allocated =
// weights), then one at every change; at equal times releases come before new stashes.
#pragma once

#include <cstdint>
#include <vector>

#include "bubblescope/trace.h"
#include "schedule_engine/config.h"
#include "schedule_engine/records.h"

namespace bubblescope::sim {

inline constexpr int64_t kReservedGranularityBytes = int64_t{2} << 20;

std::vector<MemorySample> MemorySamples(const Config& config, const RankRecord& rank);

}  // namespace bubblescope::sim
