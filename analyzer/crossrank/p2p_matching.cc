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
      result.transfers.push_back(Transfer{src, dst, *ops.sends[k], *ops.recvs[k]});
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
  return result;
}

}  // namespace bubblescope::p2p_matching
