// What the job's transfers and collectives say about how far two clocks are apart
// (docs/cross-rank.md, "Clocks"): the samples and bounds clock_alignment weighs. Clocks are
// nodes: every rank of one host is one node (one clock), a rank without a host is one of its own.
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
// Collectives (collective_matching.h) give samples only to node pairs whose transfers give none:
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

// Between clock nodes a < b, about d = clock(b) - clock(a).
struct PairEvidence {
  std::vector<TimeNs> samples;
  std::vector<TimeNs> durations;  // of the receiving kernel of each sample
  SampleKind kind = SampleKind::kNone;
  TimeNs upper = kUnbounded;   // d <= upper
  TimeNs lower = -kUnbounded;  // d >= lower
};

// `node_of` maps each rank considered to its clock node; ranks outside it are ignored, and so
// are transfers and collectives within one node (one clock).
std::map<std::pair<int32_t, int32_t>, PairEvidence> GatherEvidence(
    const std::vector<p2p_matching::Transfer>& transfers,
    const std::vector<collective_matching::MatchedEnds>& collectives,
    const std::map<int32_t, int32_t>& node_of);

}  // namespace bubblescope::clock_alignment
