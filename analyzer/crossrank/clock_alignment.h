// Clock offsets between the ranks of one pipeline, from its matched transfers (docs/cross-rank.md,
// "Clocks"). Consumers apply them through ClockOffsets (analysis/clock_offsets.h); nothing is
// copied onto the reference clock.
//
// A rank's offset is how far its clock runs ahead of the reference clock (the pipeline's first
// stage): trace time = reference time + offset. For a transfer src -> dst, d = offset(dst) -
// offset(src) obeys two rules:
//  - causality: the receive cannot complete before its send started, so
//    d <= recv.end - send.start (and, from transfers dst -> src, d >= -(recv.end - send.start));
//  - rendezvous (NCCL kernels, the simulator; p2p_graph::P2pOp::rendezvous): a send and its
//    receive complete together, so each transfer gives one sample recv.end - send.end of d.
//    A batch kernel (batch_isend_irecv) ends with its last transfer, so it gives one sample for
//    the whole batch: when all its transfers are with one peer and each partner kernel ends
//    with its transfer (a kernel of its own) or is a batch of the same transfers, the latest
//    partner end and the batch's end are one instant.
// When the samples lie on both sides of 0 (and the bounds allow 0), they support no offset: d
// stays 0, the clocks as recorded, with the farthest sample as its uncertainty, so an alignment
// never makes the figures worse than the recorded clocks. When that spread exceeds the median
// receive's duration (at least 1 us), the samples do not even agree with each other: the rank
// is marked as_recorded, its alignment a guess.
// Otherwise the estimate of d is the median of the rendezvous samples of both directions, clamped
// into the causality bounds; its uncertainty is the largest distance of a sample from the estimate (0 when
// the ranks really complete together), and at least the distance the clamp moved it. Without
// rendezvous samples (gloo ops are buffered: a send may complete before its receive is posted)
// only the bounds speak: d is 0 (a shared clock, as on one host) when they allow it, else the
// nearest bound, and the uncertainty is the distance to the farther finite bound. A pair whose
// transfers give no sample takes the ends of the collectives both ran (collective_matching.h)
// as its samples. Offsets are chained from the first stage along the tree of least total
// uncertainty over the pairs with evidence (ties: by rank); uncertainties add along the chain.
// A rank no evidence reaches keeps offset 0 and is reported as not aligned. Traces that each start at their own zero align the same way: nothing
// here assumes a shared time base.
#pragma once

#include <cstdint>
#include <vector>

#include "analysis/clock_offsets.h"
#include "bubblescope/trace.h"
#include "crossrank/collective_matching.h"
#include "crossrank/p2p_matching.h"

namespace bubblescope::clock_alignment {

struct RankOffset {
  int32_t rank = -1;
  bool aligned = false;  // false: no matched transfer connects it to the reference
  TimeNs offset_ns = 0;  // rank clock - reference clock
  TimeNs uncertainty_ns = 0;
  int64_t samples = 0;  // transfers on the tree edge that placed it (0 for the reference)
  // Its transfers disagreed on an offset from the rank that placed it, so that pair's recorded
  // clocks were kept (see above): the alignment of this rank is a guess.
  bool as_recorded = false;
};

struct Options {
  // The pipeline's ranks; the first is the reference.
  std::vector<int32_t> ranks;
};

struct Result {
  std::vector<RankOffset> offsets;  // in Options::ranks order
};

// `collectives` (collective_matching.h) give samples to pairs whose transfers give none.
Result Analyze(const std::vector<p2p_matching::Transfer>& transfers, const Options& options,
               const std::vector<collective_matching::MatchedEnds>& collectives = {});

// The offsets as the per-rank map every consumer applies.
ClockOffsets AsClockOffsets(const std::vector<RankOffset>& offsets);

}  // namespace bubblescope::clock_alignment
