// What the job's transfers and collectives say about how far two clocks are apart
// (docs/cross-rank.md, "Clocks"): the samples and bounds clock_alignment weighs. Clocks are
// nodes: every rank of one host is one node (one clock), a rank without a host is one of its own.
// Every sample and bound carries the time it was taken at, so a clock's drift (its rate against
// another) shows as samples that move with time.
//
// For a transfer src -> dst between nodes a and b, d = clock(b) - clock(a):
//  - causality: the receive cannot complete before its send started, so
//    d <= recv.end - send.start (transfers b -> a bound d from below the same way);
//  - rendezvous (NCCL kernels, the simulator; p2p_graph::P2pOp::rendezvous): a send and its
//    receive complete together, so each transfer gives one sample recv.end - send.end of d.
//    A batch kernel (batch_isend_irecv) ends with its last transfer, so it gives one sample for
//    the whole batch: when all its transfers are with one peer and each partner kernel ends
//    with its transfer (a kernel of its own) or is a batch of the same transfers, the latest
//    partner end and the batch's end are one instant.
// Collectives (collective_matching.h) bound the clocks too (no member's kernel ends before
// another member's started), and give samples only to node pairs whose transfers give none:
// point-to-point ends are the direct evidence of the pipeline's own links.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <utility>
#include <vector>

#include "bubblescope/trace.h"
#include "crossrank/collective_matching.h"
#include "crossrank/p2p_matching.h"

namespace bubblescope::clock_alignment {

inline constexpr TimeNs kUnbounded = std::numeric_limits<TimeNs>::max();

// What produced a pair's samples, strongest first.
enum class SampleKind : uint8_t {
  kNone,         // no sample: only the causality bounds
  kMatchedIds,   // collectives paired by the sequence numbers both ends carry
  kRendezvous,   // transfers whose two ends complete together
  kCollectives,  // the k-th collective of a group on each member
};

// One sample of d at `time` (a time of the sample on one of the two clocks; that the two clocks
// read one instant differently is counted in the placed offset's uncertainty).
struct TimedSample {
  TimeNs time = 0;
  TimeNs value = 0;
  TimeNs duration = 0;  // of the receiving kernel (a batch's, a collective member's)
};

// One causality bound d <= value (upper) or d >= value (lower) at `time`, and what gave it, so a
// rejected estimate can name the sample it breaks.
struct Bound {
  TimeNs time = 0;
  TimeNs value = 0;
  bool upper = true;
  bool collective = false;  // a collective's ends, else a transfer src -> dst
  int32_t src = -1;         // the transfer's sender, or the collective's member a
  int32_t dst = -1;         // the transfer's receiver, or the collective's member b
  TimeNs recorded = 0;      // the send's start (transfer) or member a's start, on its own clock
};

// Between clock nodes a < b, about d = clock(b) - clock(a).
struct PairEvidence {
  std::vector<TimedSample> samples;
  SampleKind kind = SampleKind::kNone;
  std::vector<Bound> bounds;
  // Bounds from transfers paired through peers inferred from the schedule: they bound the
  // wrong clocks when the guess is wrong. Set when any bound of the pair came from such a pipeline.
  bool bounds_guessed = false;
  TimeNs upper = kUnbounded;   // the tightest upper bound (time ignored)
  TimeNs lower = -kUnbounded;  // the tightest lower bound (time ignored)
};

// The transfers of one pipeline, and whether their peers were guessed.
struct TransferSet {
  const std::vector<p2p_matching::Transfer>* transfers = nullptr;
  bool peers_guessed = false;
};

// `node_of` maps each rank considered to its clock node; ranks outside it are ignored, and so
// are transfers and collectives within one node (one clock).
std::map<std::pair<int32_t, int32_t>, PairEvidence> GatherEvidence(
    const std::vector<TransferSet>& transfers,
    const std::vector<collective_matching::MatchedEnds>& collectives,
    const std::map<int32_t, int32_t>& node_of);

}  // namespace bubblescope::clock_alignment
