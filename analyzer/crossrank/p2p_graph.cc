#include "crossrank/p2p_graph.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <optional>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "crossrank/peer_inference.h"
#include "pipeline/issued_items.h"
#include "pipeline/p2p_structure.h"
#include "pipeline/segment_ops.h"

namespace bubblescope::p2p_graph {
namespace {

// Union-find over positions in the trace's rank list.
class Components {
 public:
  explicit Components(size_t n) : parent_(n) { std::iota(parent_.begin(), parent_.end(), 0); }
  size_t Find(size_t i) {
    while (parent_[i] != i) i = parent_[i] = parent_[parent_[i]];
    return i;
  }
  void Join(size_t a, size_t b) { parent_[Find(a)] = Find(b); }

 private:
  std::vector<size_t> parent_;
};

// The p2p items of an issued timeline (compute items dropped).
pipeline::IssuedTimeline TransfersOf(pipeline::IssuedTimeline timeline) {
  std::erase_if(timeline.items, [](const pipeline::IssuedItem& item) {
    return item.kind == pipeline::ItemKind::kCompute;
  });
  return timeline;
}

// Peers for the transfers of a pipeline whose trace records none, by rank (peer_inference.h);
// a note when some rank's cannot be told.
std::map<int32_t, std::vector<int32_t>> InferPipelinePeers(
    const Pipeline& pipeline, const std::map<int32_t, const pipeline::IssuedTimeline*>& full,
    std::vector<std::string>* notes) {
  const std::vector<int32_t>& order = pipeline.stage_order;
  bool has_backward = false;
  for (int32_t rank : order) has_backward |= pipeline::HasPhaseHints(*full.at(rank));
  for (const pipeline::IssuedItem& item : full.at(order.back())->items) {
    // Without backward the last stage has nothing to send on (v = 1).
    has_backward |= item.kind == pipeline::ItemKind::kSend;
  }
  std::map<int32_t, std::vector<int32_t>> peers;
  for (size_t stage = 0; stage < order.size(); ++stage) {
    std::optional<std::vector<int32_t>> inferred =
        peer_inference::InferPeers(*full.at(order[stage]), stage, order, has_backward);
    if (!inferred.has_value()) {
      notes->push_back(absl::StrCat(
          "no peer ranks recorded and p = ", order.size(), ": rank ", order[stage],
          " has no backward name hints to tell its activations from its gradients, so its "
          "sends and receives cannot be paired with their peers; links and clock offsets are "
          "not measured"));
      return {};
    }
    peers[order[stage]] = *std::move(inferred);
  }
  return peers;
}

// Stage order of one group of ranks; rank-id order (and a note) when the traffic does not tell.
Pipeline OrderGroup(const std::vector<pipeline::IssuedTimeline>& group, bool peers,
                    std::vector<std::string>* notes) {
  Pipeline out;
  out.peers_recorded = peers;
  absl::StatusOr<std::vector<int32_t>> order = pipeline::InferStageOrder(group);
  if (order.ok()) {
    out.stage_order = *std::move(order);
  } else {
    out.stage_order_known = false;
    for (const pipeline::IssuedTimeline& timeline : group) out.stage_order.push_back(timeline.rank);
    std::sort(out.stage_order.begin(), out.stage_order.end());
    notes->push_back(absl::StrCat("pipeline of ranks ", out.stage_order.front(), "..",
                                  out.stage_order.back(), ": ", order.status().message(),
                                  "; stages listed in rank order"));
  }
  if (peers && out.stage_order.size() >= 3) {
    const int32_t first = out.stage_order.front();
    for (const pipeline::IssuedTimeline& timeline : group) {
      if (timeline.rank != out.stage_order.back()) continue;
      for (const pipeline::IssuedItem& item : timeline.items) {
        if (item.kind == pipeline::ItemKind::kSend && item.peer == first) out.interleaved = true;
      }
    }
  }
  return out;
}

}  // namespace

const RankOps* Result::OpsOf(int32_t rank) const {
  for (const RankOps& ops : ranks) {
    if (ops.rank == rank) return &ops;
  }
  return nullptr;
}

Result Analyze(const Trace& trace, const Options& /*options*/) {
  Result result;
  std::vector<pipeline::IssuedTimeline> full;
  std::vector<pipeline::IssuedTimeline> timelines;
  for (const Rank& rank : trace.ranks) {
    full.push_back(pipeline::BuildIssuedTimeline(rank, pipeline::StepMap::FromProfilerSteps(rank)));
    timelines.push_back(TransfersOf(full.back()));
  }
  const bool peers = pipeline::PeersKnown(timelines);
  std::map<int32_t, size_t> index_of;
  for (size_t i = 0; i < trace.ranks.size(); ++i) index_of[trace.ranks[i].rank] = i;

  Components components(trace.ranks.size());
  std::vector<bool> has_p2p(trace.ranks.size(), false);
  for (size_t i = 0; i < timelines.size(); ++i) {
    has_p2p[i] = !timelines[i].items.empty();
    for (const pipeline::IssuedItem& item : timelines[i].items) {
      auto peer = index_of.find(item.peer);
      if (peers && peer != index_of.end()) components.Join(i, peer->second);
    }
  }
  if (!peers) {
    // Without recorded peers, GPU ranks split into pipelines by the rhythm of their transfers
    // (pipeline::ChainByCompletionGaps); otherwise every rank with traffic is one pipeline.
    std::vector<pipeline::IssuedTimeline> with_p2p;
    for (size_t i = 0; i < full.size(); ++i) {
      if (has_p2p[i]) with_p2p.push_back(full[i]);
    }
    std::vector<std::vector<int32_t>> chains =
        pipeline::ChainByCompletionGaps(with_p2p).value_or(std::vector<std::vector<int32_t>>{});
    if (chains.empty()) {
      chains.emplace_back();
      for (const pipeline::IssuedTimeline& timeline : with_p2p) {
        chains.front().push_back(timeline.rank);
      }
    }
    for (const std::vector<int32_t>& chain : chains) {
      for (int32_t rank : chain) components.Join(index_of.at(rank), index_of.at(chain.front()));
    }
  }

  // Groups hold whole timelines: without peers the stage order reads the ops between transfers.
  std::map<size_t, std::vector<pipeline::IssuedTimeline>> groups;
  for (size_t i = 0; i < timelines.size(); ++i) {
    if (!has_p2p[i]) {
      result.ranks_without_p2p.push_back(trace.ranks[i].rank);
      continue;
    }
    groups[components.Find(i)].push_back(full[i]);
  }
  for (auto& [root, group] : groups) {
    result.pipelines.push_back(OrderGroup(group, peers, &result.notes));
  }
  std::sort(result.pipelines.begin(), result.pipelines.end(),
            [](const Pipeline& a, const Pipeline& b) {
              return *std::min_element(a.stage_order.begin(), a.stage_order.end()) <
                     *std::min_element(b.stage_order.begin(), b.stage_order.end());
            });

  // Without recorded peers, the stage order and what each transfer carries give them.
  std::map<int32_t, std::vector<int32_t>> inferred_peers;
  if (!peers) {
    std::map<int32_t, const pipeline::IssuedTimeline*> full_of;
    for (const pipeline::IssuedTimeline& timeline : full) full_of[timeline.rank] = &timeline;
    for (Pipeline& found : result.pipelines) {
      if (!found.stage_order_known) continue;
      std::map<int32_t, std::vector<int32_t>> found_peers =
          InferPipelinePeers(found, full_of, &result.notes);
      // An inferred send last -> first (p >= 3) is interleaving's wrap-around, as a recorded one.
      const std::vector<int32_t>& order = found.stage_order;
      auto last = found_peers.find(order.back());
      if (order.size() >= 3 && last != found_peers.end()) {
        const pipeline::IssuedTimeline& transfers = timelines[index_of.at(order.back())];
        for (size_t k = 0; k < transfers.items.size(); ++k) {
          found.interleaved |= transfers.items[k].kind == pipeline::ItemKind::kSend &&
                               last->second[k] == order.front();
        }
      }
      inferred_peers.merge(std::move(found_peers));
    }
  }
  for (size_t i = 0; i < timelines.size(); ++i) {
    RankOps rank_ops;
    rank_ops.rank = timelines[i].rank;
    auto inferred = inferred_peers.find(rank_ops.rank);
    for (size_t k = 0; k < timelines[i].items.size(); ++k) {
      const pipeline::IssuedItem& item = timelines[i].items[k];
      P2pOp op;
      op.send = item.kind == pipeline::ItemKind::kSend;
      op.peer = item.peer;
      if (op.peer < 0 && inferred != inferred_peers.end() && inferred->second[k] >= 0) {
        op.peer = inferred->second[k];
        op.peer_inferred = true;
      }
      op.bytes = item.bytes;
      op.rendezvous = !timelines[i].cpu_only;
      op.step = item.step;
      op.issue = item.issue;
      op.start = item.start;
      op.end = item.end;
      rank_ops.ops.push_back(op);
    }
    result.ranks.push_back(std::move(rank_ops));
  }
  return result;
}

}  // namespace bubblescope::p2p_graph
