// Figures of a pipeline that no real job can have, or that rest on evidence too weak to build a
// finding on (docs/cross-rank.md, "Plausibility"): each becomes a note in the report, and the
// findings that would rest on it are not made.
//  - A link whose median bandwidth is above any physical link (link_stats::Link::implausible).
//  - A rank whose clock offset is uncertain by more than one microbatch's forward and backward
//    (the mean over stages): its fill, drain and stall, and the waiting on its links, could be
//    off by more than the work they are compared with. No link finding names such a rank.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "crossrank/clock_alignment.h"
#include "crossrank/link_stats.h"
#include "pipeline/schedule_inference.h"

namespace bubblescope::plausibility {

struct Result {
  std::vector<std::string> notes;
  std::vector<int32_t> uncertain_clock_ranks;  // ascending
};

// `shape` may be null (no microbatch time to compare clock uncertainty with).
Result Analyze(const std::vector<link_stats::Link>& links,
               const std::vector<clock_alignment::RankOffset>& offsets,
               const schedule_inference::Result* shape);

}  // namespace bubblescope::plausibility
