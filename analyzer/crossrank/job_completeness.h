// Whether the trace holds the whole job: the world size the ranks declare against the ranks
// loaded, and, per pipeline, the peers its ranks exchange point-to-point transfers with that are
// not in the trace. A pipeline missing a stage still yields a p, an m and a bubble, but of the
// stages loaded only (a 2-stage view of a 4-stage pipeline); reports must say so first.
#pragma once

#include <cstdint>
#include <vector>

#include "bubblescope/trace.h"
#include "index/rank_index.h"

namespace bubblescope::job_completeness {

struct JobResult {
  // The largest world size any rank declares (distributedInfo.world_size, the collector's
  // metadata); -1 when none does.
  int32_t world_size = -1;
  // Ranks 0 .. world_size-1 the trace lacks, ascending.
  std::vector<int32_t> missing_ranks;
  // How many of the trace's ranks have ids 0 .. world_size-1, and those (ascending) that do not:
  // a rank 9 in a job of world size 4 is not one of its 4 ranks.
  int32_t ranks_in_world = 0;
  std::vector<int32_t> ranks_outside_world;
  // Ranks declare different world sizes (files of different jobs, or a damaged one).
  bool world_sizes_disagree = false;
};

JobResult AnalyzeJob(const Trace& trace);

// The ranks outside the trace that `ranks` send to or receive from (recorded peers or peers of
// the op's launch scope; optimizer-step traffic excluded), ascending and unique.
std::vector<int32_t> PeersOutsideTrace(const Trace& trace, const index::TraceIndex& index,
                                       const std::vector<int32_t>& ranks);

}  // namespace bubblescope::job_completeness
