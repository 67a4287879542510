#include "pipeline/p2p_graph.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/disjoint_sets.h"
#include "pipeline/p2p_structure.h"
#include "pipeline/peer_inference.h"
#include "pipeline/segment_ops.h"

namespace bubblescope::p2p_graph {
namespace {

// Union-find over positions in the trace's rank list.
using Components = DisjointSets;

bool PeersRecorded(const index::TraceIndex& index) {
  for (const index::RankIndex& rank : index.ranks) {
    for (const index::DeviceOp& op : rank.ops) {
      if (op.is_p2p() && !op.in_optimizer && op.peer >= 0) return true;
    }
  }
  return false;
}

// Peers of the transfers the pipeline runtime named, by index op, keyed by rank position: the
// rank of the stage at the other end, where the annotations place every stage.
std::map<size_t, std::map<uint32_t, int32_t>> NamedTransferPeers(
    const Pipeline& pipeline, const std::vector<std::vector<pipeline::LabelledTransfer>>& named) {
  std::map<size_t, std::map<uint32_t, int32_t>> peers;
  const std::vector<int32_t>& placement = pipeline.order.virtual_stage_ranks;
  if (!pipeline.order.known || placement.empty()) return peers;
  const auto stage_count = static_cast<int32_t>(placement.size());
  for (size_t at = 0; at < pipeline.positions.size(); ++at) {
    const size_t position = pipeline.positions[at];  // parallel to order.ranks
    const int32_t rank = pipeline.order.ranks[at];
    if (position >= named.size()) continue;
    for (const pipeline::LabelledTransfer& labelled : named[position]) {
      const int32_t stage = labelled.transfer.stage;
      const int32_t peer_stage = pipeline::PeerStage(labelled.transfer);
      // A name that does not fit the placement (a stage of another rank, no stage beyond the
      // ends) settles nothing.
      if (stage < 0 || stage >= stage_count || placement[static_cast<size_t>(stage)] != rank ||
          peer_stage < 0 || peer_stage >= stage_count) {
        continue;
      }
      const int32_t peer = placement[static_cast<size_t>(peer_stage)];
      if (peer != rank) peers[position][labelled.op] = peer;
    }
  }
  return peers;
}

// Peers for the transfers of a pipeline whose trace records none, by index op (peer_inference.h),
// keyed by rank position; a note when some rank's cannot be told.
std::map<size_t, std::map<uint32_t, int32_t>> InferPipelinePeers(
    const Pipeline& pipeline, const std::vector<pipeline::IssuedTimeline>& timelines,
    std::vector<std::string>* notes) {
  const std::vector<int32_t>& order = pipeline.stage_order();
  bool has_backward = false;
  for (size_t position : pipeline.positions) {
    has_backward |= pipeline::HasPhaseHints(timelines[position]);
  }
  for (const pipeline::IssuedItem& item : timelines[pipeline.positions.back()].items) {
    // Without backward the last stage has nothing to send on (v = 1).
    has_backward |= item.kind == pipeline::ItemKind::kSend;
  }
  std::map<size_t, std::map<uint32_t, int32_t>> peers;
  for (size_t stage = 0; stage < order.size(); ++stage) {
    const pipeline::IssuedTimeline& timeline = timelines[pipeline.positions[stage]];
    std::optional<std::vector<int32_t>> inferred =
        peer_inference::InferPeers(timeline, stage, order, has_backward);
    if (!inferred.has_value()) {
      notes->push_back(absl::StrCat(
          "no peer ranks recorded and p = ", order.size(), ": rank ", order[stage],
          " has no backward name hints to tell its activations from its gradients, so its "
          "sends and receives cannot be paired with their peers; links and clock offsets are "
          "not measured"));
      return {};
    }
    std::map<uint32_t, int32_t>& rank_peers = peers[pipeline.positions[stage]];
    size_t k = 0;
    for (const pipeline::IssuedItem& item : timeline.items) {
      if (item.kind == pipeline::ItemKind::kCompute) continue;
      if ((*inferred)[k] >= 0) rank_peers[item.op] = (*inferred)[k];
      ++k;
    }
  }
  return peers;
}

// The process groups the ranks with traffic declare that could each be one pipeline: at least two
// of those ranks, only those ranks, fewer than all of them; each rank set once, sorted.
std::vector<std::vector<int32_t>> CandidateGroups(const Input& input,
                                                  const std::vector<int32_t>& ranks) {
  std::vector<std::vector<int32_t>> candidates;
  if (input.process_groups == nullptr) return candidates;
  for (const std::vector<ProcessGroup>* groups : *input.process_groups) {
    if (groups == nullptr) continue;
    for (const ProcessGroup& group : *groups) {
      std::vector<int32_t> members = group.ranks;
      std::sort(members.begin(), members.end());
      members.erase(std::unique(members.begin(), members.end()), members.end());
      if (members.size() < 2 || members.size() >= ranks.size()) continue;
      if (!std::includes(ranks.begin(), ranks.end(), members.begin(), members.end())) continue;
      candidates.push_back(std::move(members));
    }
  }
  std::sort(candidates.begin(), candidates.end());
  candidates.erase(std::unique(candidates.begin(), candidates.end()), candidates.end());
  return candidates;
}

// Every way (up to a bound) to cover `ranks` (sorted) by disjoint candidate groups of one size.
std::vector<std::vector<std::vector<int32_t>>> ExactCovers(
    const std::vector<std::vector<int32_t>>& candidates, const std::vector<int32_t>& ranks) {
  constexpr size_t kMaxCovers = 16;
  constexpr int64_t kMaxSteps = 100'000;  // hostile pg_config lists cannot make this explode
  std::vector<std::vector<std::vector<int32_t>>> covers;
  int64_t steps = 0;
  std::map<size_t, std::vector<const std::vector<int32_t>*>> by_size;
  for (const std::vector<int32_t>& group : candidates) by_size[group.size()].push_back(&group);
  for (const auto& size_and_groups : by_size) {
    // Named, not a structured binding: the lambda below refers to it (clang 14 cannot capture one).
    const std::vector<const std::vector<int32_t>*>& groups = size_and_groups.second;
    if (ranks.size() % size_and_groups.first != 0) continue;
    std::vector<std::vector<int32_t>> chosen;
    std::vector<bool> used(ranks.size(), false);
    auto index_of = [&](int32_t rank) {
      return static_cast<size_t>(std::lower_bound(ranks.begin(), ranks.end(), rank) -
                                 ranks.begin());
    };
    // Backtracking on the lowest uncovered rank.
    auto search = [&](auto&& self) -> void {
      if (covers.size() >= kMaxCovers || steps > kMaxSteps) return;
      const auto first_free = std::find(used.begin(), used.end(), false);
      if (first_free == used.end()) {
        covers.push_back(chosen);
        return;
      }
      const int32_t lowest = ranks[static_cast<size_t>(first_free - used.begin())];
      for (const std::vector<int32_t>* group : groups) {
        if (++steps > kMaxSteps) return;  // every group looked at counts
        if (group->front() != lowest) continue;
        if (std::any_of(group->begin(), group->end(),
                        [&](int32_t rank) { return used[index_of(rank)]; })) {
          continue;
        }
        for (int32_t rank : *group) used[index_of(rank)] = true;
        chosen.push_back(*group);
        self(self);
        chosen.pop_back();
        for (int32_t rank : *group) used[index_of(rank)] = false;
      }
    };
    search(search);
  }
  return covers;
}

// The pipelines of ranks with traffic but no recorded peer, from their declared process groups:
// the single cover of those ranks by disjoint groups of one size in which every group has a
// stage order. Nullopt when there is none, or more than one (a note says so).
std::optional<std::vector<std::vector<int32_t>>> SplitByProcessGroups(
    const Input& input, const std::vector<size_t>& with_p2p, std::vector<std::string>* notes) {
  std::vector<int32_t> ranks;
  std::map<int32_t, size_t> position_of;
  for (size_t i : with_p2p) {
    ranks.push_back(input.index->ranks[i].rank);
    position_of[input.index->ranks[i].rank] = i;
  }
  std::sort(ranks.begin(), ranks.end());
  const std::vector<std::vector<int32_t>> candidates = CandidateGroups(input, ranks);
  if (candidates.empty()) return std::nullopt;
  std::vector<std::vector<std::vector<int32_t>>> ordered;
  for (const std::vector<std::vector<int32_t>>& cover : ExactCovers(candidates, ranks)) {
    std::vector<std::vector<int32_t>> orders;
    for (const std::vector<int32_t>& group : cover) {
      std::vector<pipeline::IssuedTimeline> timelines;
      std::vector<std::vector<pipeline::PipelineOp>> annotated;
      for (int32_t rank : group) {
        timelines.push_back((*input.timelines)[position_of.at(rank)]);
        annotated.push_back((*input.annotated)[position_of.at(rank)]);
      }
      pipeline::StageOrder order = pipeline::FindStageOrder(timelines, annotated, std::nullopt);
      if (!order.known) break;
      orders.push_back(std::move(order.ranks));
    }
    if (orders.size() == cover.size()) ordered.push_back(std::move(orders));
  }
  if (ordered.size() == 1) {
    notes->push_back(absl::StrCat(
        "no peer ranks recorded: pipelines are the process groups the ranks declare (",
        ordered.front().size(), " groups of ", ordered.front().front().size(), " ranks)"));
    return ordered.front();
  }
  if (ordered.size() > 1) {
    notes->push_back(
        absl::StrCat("no peer ranks recorded, and ", ordered.size(),
                     " ways to split the ranks with traffic "
                     "by their declared process groups fit: they are kept as one pipeline"));
  }
  return std::nullopt;
}

// The ranks' grouping as it is worked out: which trace positions are joined in one pipeline,
// which have transfers of their own (or are kept for their peers'), and, without recorded peers,
// each pipeline's chain of stages read from the rhythm of its transfers.
struct Grouping {
  explicit Grouping(size_t n) : components(n), has_p2p(n, false) {}

  std::map<int32_t, size_t> position_of;  // rank id -> position in the trace
  Components components;
  std::vector<bool> has_p2p;
  std::map<size_t, std::vector<int32_t>> chain_of_root;  // root -> its stages in order
  std::set<int32_t> guessed_chains;  // first ranks of chains read from batched transfers
};

// Joins every rank with the peers its transfers name (when peers are recorded), and keeps in its
// pipeline a rank whose file was cut short before its first transfer but whose peers name it.
void JoinRecordedPeers(const Input& input, bool peers, Grouping* grouping, Result* result) {
  const index::TraceIndex& index = *input.index;
  const size_t n = index.ranks.size();
  std::vector<bool> named_as_peer(n, false);
  for (size_t i = 0; i < n; ++i) {
    grouping->has_p2p[i] = index.ranks[i].HasP2p();
    if (!peers) continue;
    for (const index::DeviceOp& op : index.ranks[i].ops) {
      if (!op.is_p2p() || op.in_optimizer) continue;
      auto peer = grouping->position_of.find(op.peer);
      if (peer == grouping->position_of.end()) continue;
      grouping->components.Join(i, peer->second);
      named_as_peer[peer->second] = true;
    }
  }
  for (size_t i = 0; i < n; ++i) {
    const bool cut_short =
        input.cut_short != nullptr && i < input.cut_short->size() && (*input.cut_short)[i];
    if (!grouping->has_p2p[i] && cut_short && named_as_peer[i]) {
      grouping->has_p2p[i] = true;
      result->kept_cut_short.push_back(index.ranks[i].rank);
      result->notes.push_back(absl::StrCat("rank ", index.ranks[i].rank,
                                           " was cut short before its first transfer; its peers' "
                                           "transfers keep it in the pipeline"));
    }
  }
}

// Without recorded peers, GPU ranks split into pipelines by the rhythm of their transfers (or by
// their declared process groups); each chain is its pipeline's stage order. When neither tells,
// every rank with traffic is one pipeline.
void ChainWithoutPeers(const Input& input, Grouping* grouping, std::vector<std::string>* notes) {
  const index::TraceIndex& index = *input.index;
  const size_t n = index.ranks.size();
  std::vector<pipeline::IssuedTimeline> with_p2p;
  std::vector<size_t> traffic;
  for (size_t i = 0; i < n; ++i) {
    if (!grouping->has_p2p[i]) continue;
    with_p2p.push_back((*input.timelines)[i]);
    traffic.push_back(i);
  }
  std::optional<std::vector<std::vector<int32_t>>> chains =
      pipeline::ChainByCompletionGaps(with_p2p);
  if (chains.has_value()) {
    // A batch kernel of several transfers ends with the last of them, so its ends keep the
    // rhythm of no single transfer: a chain read from them may be wrong.
    bool batched = false;
    for (size_t i : traffic) {
      for (const index::DeviceOp& op : index.ranks[i].ops) batched |= op.is_p2p() && op.batched;
    }
    if (batched) {
      for (const std::vector<int32_t>& chain : *chains) {
        grouping->guessed_chains.insert(chain.front());
        notes->push_back(absl::StrCat(
            "pipeline of ranks ", absl::StrJoin(chain, ","),
            ": stage order guessed from the rhythm of batched transfers without peer ranks "
            "(a batch ends with the last of its transfers), and its clocks are aligned only "
            "where the transfers so paired end together; annotations or NCCL's peer args "
            "would settle both"));
      }
    }
  }
  if (!chains.has_value()) chains = SplitByProcessGroups(input, traffic, notes);
  if (!chains.has_value()) {
    for (size_t i : traffic) grouping->components.Join(i, traffic.front());
    return;
  }
  const std::map<int32_t, size_t>& position_of = grouping->position_of;
  for (const std::vector<int32_t>& chain : *chains) {
    for (int32_t rank : chain) {
      grouping->components.Join(position_of.at(rank), position_of.at(chain.front()));
    }
  }
  for (const std::vector<int32_t>& chain : *chains) {
    grouping->chain_of_root[grouping->components.Find(position_of.at(chain.front()))] = chain;
  }
}

// One pipeline per group of ranks with traffic, each in its stage order, ordered by their
// smallest rank id; the ranks without traffic listed apart. The groups are taken in the order of
// their first rank, whichever member the union-find made the root, so that their notes come in
// that order.
void FormPipelines(const Input& input, bool peers, Grouping* grouping, Result* result) {
  const index::TraceIndex& index = *input.index;
  std::map<size_t, std::vector<size_t>> members_of_root;  // positions, in trace order
  std::vector<size_t> roots;
  for (size_t i = 0; i < index.ranks.size(); ++i) {
    if (!grouping->has_p2p[i]) {
      result->ranks_without_p2p.push_back(index.ranks[i].rank);
      continue;
    }
    const size_t root = grouping->components.Find(i);
    std::vector<size_t>& members = members_of_root[root];
    if (members.empty()) roots.push_back(root);
    members.push_back(i);
  }
  for (size_t root : roots) {
    std::vector<pipeline::IssuedTimeline> group;
    std::vector<std::vector<pipeline::PipelineOp>> annotated;
    for (size_t i : members_of_root[root]) {
      group.push_back((*input.timelines)[i]);
      annotated.push_back((*input.annotated)[i]);
    }
    auto chain = grouping->chain_of_root.find(root);
    const bool chained = chain != grouping->chain_of_root.end();
    Pipeline pipeline;
    pipeline.peers_recorded = peers;
    pipeline.order_guessed = chained && grouping->guessed_chains.contains(chain->second.front());
    pipeline.order = pipeline::FindStageOrder(
        group, annotated,
        chained ? std::optional<std::vector<int32_t>>(chain->second) : std::nullopt);
    for (int32_t rank : pipeline.order.ranks) {
      pipeline.positions.push_back(grouping->position_of.at(rank));
    }
    if (!pipeline.order.known) {
      result->notes.push_back(absl::StrCat(
          "pipeline of ranks ", pipeline.order.ranks.front(), "..", pipeline.order.ranks.back(),
          ": ", pipeline.order.problem, "; stages listed in rank order"));
    }
    result->pipelines.push_back(std::move(pipeline));
  }
  std::sort(result->pipelines.begin(), result->pipelines.end(),
            [](const Pipeline& a, const Pipeline& b) {
              return *std::min_element(a.order.ranks.begin(), a.order.ranks.end()) <
                     *std::min_element(b.order.ranks.begin(), b.order.ranks.end());
            });
}

// Op k of each trace position -> its peer, from one source.
using PeersByPosition = std::map<size_t, std::map<uint32_t, int32_t>>;

// The peers of transfers that recorded none: those the runtime named, from the stage placement;
// and, without recorded peers, the rest from the stage order and what each transfer carries.
void SettleUnrecordedPeers(const Input& input, bool peers, Result* result, PeersByPosition* named,
                           PeersByPosition* inferred) {
  const std::vector<pipeline::IssuedTimeline>& timelines = *input.timelines;
  for (Pipeline& found : result->pipelines) {
    if (input.named_transfers != nullptr) {
      named->merge(NamedTransferPeers(found, *input.named_transfers));
    }
    if (peers || !found.order.known) continue;
    bool all_named = true;
    for (size_t position : found.positions) {
      const auto named_here = named->find(position);
      for (const pipeline::IssuedItem& item : timelines[position].items) {
        if (item.kind == pipeline::ItemKind::kCompute) continue;
        all_named &= named_here != named->end() && named_here->second.contains(item.op);
      }
    }
    if (all_named) continue;  // nothing left to guess
    inferred->merge(InferPipelinePeers(found, timelines, &result->notes));
  }
}

// The p2p ops of the rank at `position`, in issue order, each with its peer and where the peer
// came from: recorded, else named by the runtime, else inferred; -1 when none tells.
RankOps OpsWithPeers(const index::RankIndex& rank, size_t position, const PeersByPosition& named,
                     const PeersByPosition& inferred) {
  // The peer settled for op k of this rank by one source's map; -1 when none.
  const auto settled = [position](const PeersByPosition& by_position, uint32_t k) {
    const auto rank_peers = by_position.find(position);
    if (rank_peers == by_position.end()) return int32_t{-1};
    const auto peer = rank_peers->second.find(k);
    return peer == rank_peers->second.end() ? int32_t{-1} : peer->second;
  };
  RankOps rank_ops;
  rank_ops.rank = rank.rank;
  for (uint32_t k : rank.issue_order) {
    const index::DeviceOp& device_op = rank.ops[k];
    if (!device_op.is_p2p() || device_op.in_optimizer) continue;
    P2pOp op;
    op.send = device_op.is_send();
    op.peer = device_op.peer;
    if (op.peer >= 0) op.peer_source = PeerSource::kRecorded;
    if (op.peer < 0 && (op.peer = settled(named, k)) >= 0) op.peer_source = PeerSource::kPpAction;
    if (op.peer < 0 && (op.peer = settled(inferred, k)) >= 0) {
      op.peer_source = PeerSource::kInferred;
    }
    op.bytes = device_op.bytes;
    op.rendezvous = !rank.cpu_only();
    if (device_op.batched) {
      op.batch = (static_cast<int64_t>(device_op.timeline) << 32) | device_op.interval;
    }
    op.issue = device_op.issue;
    op.start = device_op.start;
    op.end = device_op.transfer_end;
    rank_ops.ops.push_back(op);
  }
  return rank_ops;
}

// Each pipeline's count of peers by where they came from, and whether it wraps around: an edge
// from the last stage back to the first (p >= 3), recorded or inferred, is interleaving's.
void DescribeEdges(bool peers, Result* result) {
  for (Pipeline& found : result->pipelines) {
    for (size_t position : found.positions) {
      for (const P2pOp& op : result->ranks[position].ops) {
        ++found.peers_by_source[static_cast<size_t>(op.peer_source)];
      }
    }
  }
  for (Pipeline& found : result->pipelines) {
    const std::vector<int32_t>& order = found.stage_order();
    if (order.size() < 3 || (!peers && !found.order.known)) continue;
    for (const P2pOp& op : result->ranks[found.positions.back()].ops) {
      found.interleaved |= op.send && op.peer == order.front();
    }
  }
}

}  // namespace

std::string_view PeerSourceName(PeerSource source) {
  switch (source) {
    case PeerSource::kRecorded:
      return "recorded";
    case PeerSource::kPpAction:
      return "pp_action";
    case PeerSource::kInferred:
      return "inferred";
    case PeerSource::kUnknown:
      return "unknown";
  }
  return "unknown";
}

const RankOps* Result::OpsOf(int32_t rank) const {
  for (const RankOps& ops : ranks) {
    if (ops.rank == rank) return &ops;
  }
  return nullptr;
}

Result Analyze(const Input& input) {
  const index::TraceIndex& index = *input.index;
  const size_t n = index.ranks.size();
  Result result;
  const bool peers =
      input.peers_recorded.has_value() ? *input.peers_recorded : PeersRecorded(index);
  Grouping grouping(n);
  for (size_t i = 0; i < n; ++i) grouping.position_of[index.ranks[i].rank] = i;
  JoinRecordedPeers(input, peers, &grouping, &result);
  if (!peers) ChainWithoutPeers(input, &grouping, &result.notes);
  FormPipelines(input, peers, &grouping, &result);
  PeersByPosition named_peers;
  PeersByPosition inferred_peers;
  SettleUnrecordedPeers(input, peers, &result, &named_peers, &inferred_peers);
  for (size_t i = 0; i < n; ++i) {
    result.ranks.push_back(OpsWithPeers(index.ranks[i], i, named_peers, inferred_peers));
  }
  DescribeEdges(peers, &result);
  return result;
}

}  // namespace bubblescope::p2p_graph
