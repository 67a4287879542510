// What a job communicated outside point-to-point traffic, by kind: the figures reported for a
// job without pipelines (docs/cross-rank.md).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bubblescope/trace.h"
#include "index/rank_index.h"

namespace bubblescope::collectives {

// Communication of one kind over every rank.
struct Summary {
  std::string kind;  // CommKindName, or the collective's own name when its kind is unknown
  int64_t count = 0;
  int64_t bytes = 0;   // of the ops with a known size
  int64_t sized = 0;   // ops with a known size (0: the traces record no sizes for this kind)
  TimeNs time_ns = 0;  // summed durations
};

// Counts, bytes and time of every communication op of the ranks' devices that is not a p2p
// send or receive, by time descending.
std::vector<Summary> Analyze(const Trace& trace, const index::TraceIndex& index);

}  // namespace bubblescope::collectives
