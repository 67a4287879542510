// A matched transfer built by hand for the cross-rank tests: src's send kernel and dst's receive
// kernel, each on its own rank's clock.
#pragma once

#include <cstdint>
#include <vector>

#include "crossrank/p2p_matching.h"

namespace bubblescope::testing {

inline p2p_matching::Transfer Make(int32_t src, int32_t dst, TimeNs send_start, TimeNs send_end,
                                   TimeNs recv_start, TimeNs recv_end, bool rendezvous,
                                   int64_t bytes = 1000) {
  p2p_matching::Transfer transfer;
  transfer.src = src;
  transfer.dst = dst;
  transfer.send = p2p_graph::P2pOp{.send = true,
                                   .peer = dst,
                                   .bytes = bytes,
                                   .rendezvous = rendezvous,
                                   .start = send_start,
                                   .end = send_end};
  transfer.recv = p2p_graph::P2pOp{.send = false,
                                   .peer = src,
                                   .bytes = bytes,
                                   .rendezvous = rendezvous,
                                   .start = recv_start,
                                   .end = recv_end};
  return transfer;
}

// Hand-built transfers with batch keys set, marked as p2p_matching::Analyze marks its own
// (Transfer::timed), so a batch that carries another peer's transfers times none of them.
inline std::vector<p2p_matching::Transfer> Timed(std::vector<p2p_matching::Transfer> transfers) {
  p2p_matching::MarkTimed(transfers);
  return transfers;
}

}  // namespace bubblescope::testing
