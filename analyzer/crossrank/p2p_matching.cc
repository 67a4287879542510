#include "crossrank/p2p_matching.h"

#include <algorithm>
#include <map>
#include <utility>

namespace bubblescope::p2p_matching {
namespace {

struct PairOps {
  std::vector<const p2p_graph::P2pOp*> sends;  // on src, issue order
  std::vector<const p2p_graph::P2pOp*> recvs;  // on dst, issue order
};

bool Selected(const Options& options, int32_t rank) {
  return options.ranks.empty() ||
         std::find(options.ranks.begin(), options.ranks.end(), rank) != options.ranks.end();
}

// Clears Transfer::timed where an end is a batch that the header's rule does not allow: one
// pass collects each batch's transfers, a second checks each batch's peers and partners.
void MarkTimed(std::vector<Transfer>& transfers) {
  std::map<std::pair<int32_t, int64_t>, std::vector<size_t>> batches;  // (rank, batch) -> transfers
  for (size_t i = 0; i < transfers.size(); ++i) {
    const Transfer& transfer = transfers[i];
    if (transfer.send.batch >= 0) batches[{transfer.src, transfer.send.batch}].push_back(i);
    if (transfer.recv.batch >= 0) batches[{transfer.dst, transfer.recv.batch}].push_back(i);
  }
  for (const auto& [key, members] : batches) {
    const int32_t rank = key.first;
    const Transfer& first = transfers[members.front()];
    const int32_t peer = first.src == rank ? first.dst : first.src;
    bool usable = true;
    for (size_t i : members) {
      const Transfer& transfer = transfers[i];
      const bool sent = transfer.src == rank;
      usable &= (sent ? transfer.dst : transfer.src) == peer;
      const p2p_graph::P2pOp& partner = sent ? transfer.recv : transfer.send;
      if (partner.batch >= 0) {
        const auto other = batches.find({peer, partner.batch});
        usable &= other != batches.end() && other->second == members;
      }
    }
    if (usable) continue;
    for (size_t i : members) transfers[i].timed = false;
  }
}

}  // namespace

Result Analyze(const p2p_graph::Result& graph, const Options& options) {
  Result result;
  std::map<std::pair<int32_t, int32_t>, PairOps> pairs;
  for (const p2p_graph::RankOps& rank : graph.ranks) {
    if (!Selected(options, rank.rank)) continue;
    for (const p2p_graph::P2pOp& op : rank.ops) {
      if (op.peer < 0) {
        ++result.ops_without_peer;
        continue;
      }
      if (op.send) {
        pairs[{rank.rank, op.peer}].sends.push_back(&op);
      } else {
        pairs[{op.peer, rank.rank}].recvs.push_back(&op);
      }
    }
  }
  for (const auto& [key, ops] : pairs) {
    const auto [src, dst] = key;
    const size_t matched = std::min(ops.sends.size(), ops.recvs.size());
    for (size_t k = 0; k < matched; ++k) {
      result.transfers.push_back(Transfer{src, dst, *ops.sends[k], *ops.recvs[k], true});
    }
    if (ops.sends.size() != ops.recvs.size()) {
      Unmatched unmatched;
      unmatched.src = src;
      unmatched.dst = dst;
      unmatched.sends = static_cast<int64_t>(ops.sends.size());
      unmatched.recvs = static_cast<int64_t>(ops.recvs.size());
      unmatched.src_missing = graph.OpsOf(src) == nullptr;
      unmatched.dst_missing = graph.OpsOf(dst) == nullptr;
      result.unmatched.push_back(unmatched);
    }
  }
  MarkTimed(result.transfers);
  return result;
}

}  // namespace bubblescope::p2p_matching
