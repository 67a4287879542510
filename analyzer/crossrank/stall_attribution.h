// Whom each rank's communication stall waited for (docs/cross-rank.md, "Stall attribution").
//
// A rank's stall region in a complete iteration is the bubble analysis's stall: the time between
// its first and last compute of the iteration in which none of its compute runs. Each matched
// transfer into the rank splits its receive (aligned clock) into waiting for the peer to post
// [recv start, send start) and the transfer itself [later post, recv end). The part of each that
// lies in the stall region is charged to the sending peer: "stage 2 waited 14.0 ms per iteration
// for stage 1". A moment spent waiting on two peers at once counts for both.
#pragma once

#include <cstdint>
#include <vector>

#include "analysis/bubble.h"
#include "analysis/clock_offsets.h"
#include "bubblescope/trace.h"
#include "crossrank/p2p_matching.h"
#include "index/rank_index.h"

namespace bubblescope::stall_attribution {

struct PeerStall {
  int32_t rank = -1;               // the receiver, whose stall this is
  int32_t peer = -1;               // the sender it waited for
  TimeNs waiting_for_post_ns = 0;  // over the complete iterations
  TimeNs in_transfer_ns = 0;
  TimeNs total_ns() const { return waiting_for_post_ns + in_transfer_ns; }
};

struct Result {
  int64_t complete_iterations = 0;
  std::vector<PeerStall> stalls;  // by (rank, peer); only pairs with stall
};

// `bubble` was measured on the clock `offsets` align the ranks to; the compute ops (`index`) and
// `transfers` are on the ranks' own clocks, and `offsets` moves them onto it.
Result Analyze(const index::TraceIndex& index, const bubble::Result& bubble,
               const std::vector<p2p_matching::Transfer>& transfers, const ClockOffsets& offsets);

}  // namespace bubblescope::stall_attribution
