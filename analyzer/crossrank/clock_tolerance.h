// How uncertain a clock offset may be and still be applied (docs/cross-rank.md, "Clocks"):
// small against the ops it moves. A tenth of the pipeline's median compute block, the time from
// the first compute after a transfer to the last before the next one on a rank (about one
// forward or backward pass), and at least 1 us. An offset known that well moves each op against
// its peers' by at most a tenth of an op.
#pragma once

#include <vector>

#include "bubblescope/trace.h"
#include "pipeline/issued_items.h"

namespace bubblescope::clock_alignment {

// Over the given ranks' issued work; 1 us when they hold no compute.
TimeNs ClockTolerance(const std::vector<const pipeline::IssuedTimeline*>& timelines);

}  // namespace bubblescope::clock_alignment
