// Pairs every send with its receive (docs/cross-rank.md, "Matching").
//
// Per directed pair src -> dst, the k-th send src issued to dst is matched with the k-th receive
// dst issued from src: NCCL and gloo complete the p2p ops between two ranks in the order they
// were posted. (The timeline model carries no p2p sequence numbers, so issue order is the only
// key.) A pair whose counts differ (a rank's trace ends early, a peer's trace is missing) keeps
// its first min(sends, recvs) matches and is reported as unmatched; ops with an unknown peer are
// counted apart.
#pragma once

#include <cstdint>
#include <vector>

#include "pipeline/p2p_graph.h"

namespace bubblescope::p2p_matching {

struct Transfer {
  int32_t src = -1;
  int32_t dst = -1;
  p2p_graph::P2pOp send;  // on src's clock
  p2p_graph::P2pOp recv;  // on dst's clock
  // Both ends' times are this transfer's own: each end is a kernel of its own, or a batch kernel
  // (p2p_graph::P2pOp::batch) whose transfers all go to or come from this one peer and whose
  // partners at the other end are kernels of their own or a batch of exactly the same
  // transfers. A batch that also carries transfers with another peer ends when the slowest of
  // them does (Megatron's interleaved batches hold a send to one neighbour and a receive from
  // the other), so its times say nothing about this link: such a transfer has no transfer time.
  bool timed = true;
};

struct Unmatched {
  int32_t src = -1;
  int32_t dst = -1;
  int64_t sends = 0;         // issued by src to dst
  int64_t recvs = 0;         // issued by dst from src
  bool dst_missing = false;  // dst has no trace at all
  bool src_missing = false;
};

struct Options {
  // Only pairs with both ends among these ranks; empty = every rank.
  std::vector<int32_t> ranks;
};

struct Result {
  std::vector<Transfer> transfers;   // by (src, dst), then in issue order
  std::vector<Unmatched> unmatched;  // by (src, dst)
  int64_t ops_without_peer = 0;
};

Result Analyze(const p2p_graph::Result& graph, const Options& options);

// Sets Transfer::timed on each transfer by the rule above, over the transfers given (Analyze
// calls it; so do tests that build transfer lists by hand).
void MarkTimed(std::vector<Transfer>& transfers);

}  // namespace bubblescope::p2p_matching
