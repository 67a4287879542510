#include "pipeline/p2p_structure.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "pipeline/segment_ops.h"

namespace bubblescope::pipeline {
namespace {

bool IsTransfer(const IssuedItem& item) { return item.kind != ItemKind::kCompute; }

const IssuedTimeline* Find(const std::vector<IssuedTimeline>& timelines, int32_t rank) {
  for (const IssuedTimeline& timeline : timelines) {
    if (timeline.rank == rank) return &timeline;
  }
  return nullptr;
}

// The first transfer of the rank's step 0 (the reference iteration), if any.
const IssuedItem* FirstTransfer(const IssuedTimeline& timeline) {
  for (const IssuedItem& item : timeline.items) {
    if (item.step == 0 && IsTransfer(item)) return &item;
  }
  return nullptr;
}

// Follows each rank's first send from the one rank that sends before it receives.
// The rank not yet in `order` whose first receive of the reference step comes from `rank`, or
// -1: the stage after a rank whose file was cut short before it sent anything, which its
// successor's recorded receives still name.
int32_t ReceiverFrom(const std::vector<IssuedTimeline>& timelines, int32_t rank,
                     const std::vector<int32_t>& order) {
  for (const IssuedTimeline& timeline : timelines) {
    if (std::find(order.begin(), order.end(), timeline.rank) != order.end()) continue;
    for (const IssuedItem& item : timeline.items) {
      if (item.step != 0 || item.kind != ItemKind::kRecv) continue;
      if (item.peer == rank) return timeline.rank;
      break;
    }
  }
  return -1;
}

std::optional<std::vector<int32_t>> OrderByPeers(const std::vector<IssuedTimeline>& timelines) {
  const IssuedTimeline* first = nullptr;
  for (const IssuedTimeline& timeline : timelines) {
    const IssuedItem* transfer = FirstTransfer(timeline);
    if (transfer == nullptr || transfer->kind != ItemKind::kSend) continue;
    if (first != nullptr) return std::nullopt;  // two ranks start by sending
    first = &timeline;
  }
  if (first == nullptr) return std::nullopt;
  std::vector<int32_t> order = {first->rank};
  const IssuedTimeline* current = first;
  while (order.size() < timelines.size()) {
    const IssuedItem* send = nullptr;
    for (const IssuedItem& item : current->items) {
      if (item.step == 0 && item.kind == ItemKind::kSend) {
        send = &item;
        break;
      }
    }
    int32_t next = send == nullptr ? -1 : send->peer;
    if (send == nullptr) next = ReceiverFrom(timelines, current->rank, order);
    if (next < 0 || std::find(order.begin(), order.end(), next) != order.end()) break;
    current = Find(timelines, next);
    if (current == nullptr) return std::nullopt;  // traffic leaves the pipeline's ranks
    order.push_back(current->rank);
  }
  if (order.size() != timelines.size()) return std::nullopt;
  return order;
}

// Without peers: the first stage sends before it receives; every other stage's first receive
// is its first forward input, which completes later the further the stage is down the pipeline.
std::optional<std::vector<int32_t>> OrderByFirstReceive(
    const std::vector<IssuedTimeline>& timelines) {
  std::optional<int32_t> first;
  std::vector<std::pair<TimeNs, int32_t>> others;
  for (const IssuedTimeline& timeline : timelines) {
    const IssuedItem* transfer = FirstTransfer(timeline);
    if (transfer == nullptr) return std::nullopt;
    if (transfer->kind == ItemKind::kSend) {
      if (first) return std::nullopt;
      first = timeline.rank;
      continue;
    }
    others.emplace_back(transfer->end, timeline.rank);
  }
  if (!first) return std::nullopt;
  std::stable_sort(others.begin(), others.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<int32_t> order = {*first};
  for (const auto& [end, rank] : others) order.push_back(rank);
  return order;
}

// The completion times of the transfers of `timeline` that carry activations, one direction.
std::vector<TimeNs> ActivationEnds(const IssuedTimeline& timeline, bool first_stage, ItemKind kind,
                                   bool has_backward) {
  const std::vector<Payload> payloads = TransferPayloads(timeline, first_stage);
  std::vector<TimeNs> ends;
  for (size_t i = 0; i < timeline.items.size(); ++i) {
    const IssuedItem& item = timeline.items[i];
    if (item.kind != kind) continue;
    if (has_backward && payloads[i] != Payload::kActivation) continue;
    ends.push_back(item.end);
  }
  return ends;
}

// How far apart the gaps between successive completions of `sends` and `recvs` are, on average:
// a clock offset shifts every completion of a rank alike and leaves the gaps alone. Infinite
// when fewer than two of either.
double GapMismatch(const std::vector<TimeNs>& sends, const std::vector<TimeNs>& recvs) {
  const size_t n = std::min(sends.size(), recvs.size());
  if (n < 2) return std::numeric_limits<double>::infinity();
  double total = 0.0;
  for (size_t i = 1; i < n; ++i) {
    // Each gap fits an int64 (two times of the model); their difference need not.
    total += std::abs(static_cast<double>(sends[i] - sends[0]) -
                      static_cast<double>(recvs[i] - recvs[0]));
  }
  return total / static_cast<double>(n - 1);
}

// OrderByCompletionGaps for a group that holds one pipeline.
std::optional<std::vector<int32_t>> OrderByCompletionGaps(
    const std::vector<IssuedTimeline>& timelines) {
  std::optional<std::vector<std::vector<int32_t>>> chains = ChainByCompletionGaps(timelines);
  if (!chains.has_value() || chains->size() != 1) return std::nullopt;
  return std::move(chains->front());
}

int64_t CountTransfers(const IssuedTimeline& timeline, ItemKind kind, std::optional<int32_t> peer,
                       std::optional<int32_t> not_peer) {
  int64_t count = 0;
  for (const IssuedItem& item : timeline.items) {
    if (item.step != 0 || item.kind != kind) continue;
    if (peer && item.peer != *peer) continue;
    if (not_peer && item.peer == *not_peer) continue;
    ++count;
  }
  return count;
}

// m and v of a training job from the first stage's forward-op count F and its sends S. The first
// stage is never the last virtual stage, so every forward (v·m of them) sends an activation, and
// the backward of every chunk but the first sends a gradient back to the last rank ((v−1)·m):
// S = (2v−1)·m, so m = 2F − S and v = F / m. Nullopt when the counts do not fit that shape.
std::optional<std::pair<int64_t, int64_t>> FromForwardCount(int64_t forwards, int64_t sends) {
  const int64_t m = 2 * forwards - sends;
  if (m <= 0 || forwards % m != 0) return std::nullopt;
  return std::make_pair(m, forwards / m);
}

}  // namespace

bool PeersKnown(const std::vector<IssuedTimeline>& timelines) {
  for (const IssuedTimeline& timeline : timelines) {
    for (const IssuedItem& item : timeline.items) {
      if (IsTransfer(item) && item.peer >= 0) return true;
    }
  }
  return false;
}

absl::StatusOr<std::vector<int32_t>> InferStageOrder(const std::vector<IssuedTimeline>& timelines) {
  if (timelines.size() == 1) return std::vector<int32_t>{timelines.front().rank};
  if (PeersKnown(timelines)) {
    if (std::optional<std::vector<int32_t>> order = OrderByPeers(timelines)) return *order;
  }
  if (std::optional<std::vector<int32_t>> order = OrderByCompletionGaps(timelines)) return *order;
  if (std::optional<std::vector<int32_t>> order = OrderByFirstReceive(timelines)) return *order;
  return absl::FailedPreconditionError(
      "no stage order: the reference iteration has no rank that sends before it receives, or "
      "its transfers do not connect every rank");
}

std::optional<std::vector<std::vector<int32_t>>> ChainByCompletionGaps(
    const std::vector<IssuedTimeline>& timelines) {
  std::vector<const IssuedTimeline*> firsts;
  bool hints = false;
  for (const IssuedTimeline& timeline : timelines) {
    if (timeline.cpu_only) return std::nullopt;  // gloo buffers sends: no common completion
    hints |= HasPhaseHints(timeline);
    const IssuedItem* transfer = FirstTransfer(timeline);
    if (transfer == nullptr) return std::nullopt;
    if (transfer->kind == ItemKind::kSend) firsts.push_back(&timeline);
  }
  if (firsts.empty() || timelines.size() % firsts.size() != 0) return std::nullopt;
  if (!hints) {
    // Every op then reads as a forward: right only for a forward-only job, where the last stage
    // sends nothing. A training job without hints is left to other rules.
    bool every_rank_sends = true;
    for (const IssuedTimeline& timeline : timelines) {
      every_rank_sends &=
          std::any_of(timeline.items.begin(), timeline.items.end(),
                      [](const IssuedItem& item) { return item.kind == ItemKind::kSend; });
    }
    if (every_rank_sends) return std::nullopt;
  }
  // Every other rank is a candidate next stage, with the completions of its activation receives.
  struct Candidate {
    const IssuedTimeline* timeline;
    std::vector<TimeNs> recv_ends;
  };
  std::vector<Candidate> remaining;
  for (const IssuedTimeline& timeline : timelines) {
    if (std::find(firsts.begin(), firsts.end(), &timeline) != firsts.end()) continue;
    remaining.push_back({&timeline, ActivationEnds(timeline, false, ItemKind::kRecv, hints)});
  }
  std::vector<std::vector<int32_t>> chains;
  std::vector<const IssuedTimeline*> tails = firsts;
  for (const IssuedTimeline* first : firsts) chains.push_back({first->rank});
  const size_t stages = timelines.size() / firsts.size();
  for (size_t stage = 1; stage < stages; ++stage) {
    // Each chain's next stage: the best-matching (chain, candidate) pairs first.
    std::vector<std::vector<double>> mismatch(tails.size());
    for (size_t c = 0; c < tails.size(); ++c) {
      const std::vector<TimeNs> sends =
          ActivationEnds(*tails[c], stage == 1, ItemKind::kSend, hints);
      for (const Candidate& candidate : remaining) {
        mismatch[c].push_back(GapMismatch(sends, candidate.recv_ends));
      }
    }
    std::vector<bool> chain_done(tails.size(), false);
    std::vector<bool> taken(remaining.size(), false);
    for (size_t assigned = 0; assigned < tails.size(); ++assigned) {
      double best = std::numeric_limits<double>::infinity();
      size_t best_chain = tails.size();
      size_t best_candidate = remaining.size();
      for (size_t c = 0; c < tails.size(); ++c) {
        for (size_t i = 0; i < remaining.size() && !chain_done[c]; ++i) {
          if (!taken[i] && mismatch[c][i] < best) {
            best = mismatch[c][i];
            best_chain = c;
            best_candidate = i;
          }
        }
      }
      if (best_chain == tails.size()) return std::nullopt;
      chain_done[best_chain] = true;
      taken[best_candidate] = true;
      tails[best_chain] = remaining[best_candidate].timeline;
      chains[best_chain].push_back(tails[best_chain]->rank);
    }
    std::vector<Candidate> left;
    for (size_t i = 0; i < remaining.size(); ++i) {
      if (!taken[i]) left.push_back(std::move(remaining[i]));
    }
    remaining = std::move(left);
  }
  return chains;
}

absl::StatusOr<P2pSchedule> InferP2pSchedule(const std::vector<IssuedTimeline>& timelines,
                                             const std::vector<int32_t>& order,
                                             const std::optional<ComputeCounts>& compute) {
  P2pSchedule schedule;
  if (order.size() < 2) {
    return absl::FailedPreconditionError("one stage has no point-to-point traffic to read");
  }
  const IssuedTimeline* first = Find(timelines, order.front());
  const IssuedTimeline* last = Find(timelines, order.back());
  if (first == nullptr || last == nullptr) return absl::InternalError("stage order names no rank");
  const bool peers = PeersKnown(timelines);
  const int32_t second = order[1];
  // Only with p >= 3 is a send last -> first unambiguously a wrap-around activation (with p = 2
  // the first stage is also the last stage's previous one, the receiver of its gradients).
  const bool wrap_visible = peers && order.size() >= 3;
  const int64_t first_to_second = CountTransfers(
      *first, ItemKind::kSend, peers ? std::optional<int32_t>(second) : std::nullopt, std::nullopt);
  const int64_t wrap =
      wrap_visible ? CountTransfers(*last, ItemKind::kSend, order.front(), std::nullopt) : 0;
  const int64_t m = first_to_second - wrap;
  if (m <= 0 || wrap % m != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("the first stage's sends do not give a microbatch count (", first_to_second,
                     " sends to the next stage, ", wrap, " wrap-around sends back)"));
  }
  schedule.m = static_cast<int32_t>(m);
  schedule.v = static_cast<int32_t>(1 + wrap / m);
  if (!wrap_visible) {
    // Without wrap-around traffic to see, the forward count tells v (training jobs only: a
    // forward-only job's sends are its forwards, whatever v is).
    std::optional<std::pair<int64_t, int64_t>> shape;
    // Each forward has one backward: a first stage where the counts differ split its compute
    // into ops the names do not really separate, and its forward count is not trusted.
    const bool counts_fit = compute && compute->any_backward &&
                            compute->first_stage_forwards == compute->first_stage_backwards;
    if (counts_fit) shape = FromForwardCount(compute->first_stage_forwards, first_to_second);
    if (shape) {
      schedule.m = static_cast<int32_t>(shape->first);
      schedule.v = static_cast<int32_t>(shape->second);
      if (schedule.v > 1) {
        schedule.notes.push_back(absl::StrCat(
            "v = ", schedule.v, " from the first stage's ", compute->first_stage_forwards,
            " forward ops against its ", first_to_second, " sends (no wrap-around traffic to see ",
            peers ? "with p = 2" : "without peer ranks", ")"));
      }
    } else {
      schedule.notes.push_back(
          absl::StrCat(peers ? "p = 2" : "no peer ranks recorded",
                       compute && compute->any_backward
                           ? absl::StrCat(": the first stage's ", compute->first_stage_forwards,
                                          " forward and ", compute->first_stage_backwards,
                                          " backward ops fit no v, v = 1 assumed")
                           : " and no forward ops to count: v > 1 is not visible, v = 1 assumed"));
    }
  }
  // The last stage sends only backward gradients, apart from wrap-around activations.
  schedule.has_backward =
      CountTransfers(*last, ItemKind::kSend, std::nullopt,
                     wrap_visible ? std::optional<int32_t>(order.front()) : std::nullopt) > 0;
  // Each forward on the last stage waits for an input from the previous stage, and each backward
  // sends a gradient back to it. GPipe's order (over all chunks when v > 1) receives all v·m
  // inputs before the first gradient goes back. The last stage's other sends are the (v-1)·m
  // wrap-around activations of its earlier chunks: with peers and p >= 3 they go to the first
  // stage, so a gradient is a send to the previous one; otherwise looped GPipe sends all of them
  // first, and the first gradient is its ((v-1)·m + 1)-th send.
  const int32_t previous_rank = order[order.size() - 2];
  const std::optional<int32_t> previous =
      peers ? std::optional<int32_t>(previous_rank) : std::nullopt;
  const int64_t forwards = int64_t{schedule.v} * schedule.m;
  const int64_t sends_before_gradient = wrap_visible ? 0 : forwards - schedule.m;
  int64_t inputs_before_first_gradient = 0;
  int64_t sends = 0;
  for (const IssuedItem& item : last->items) {
    if (item.step != 0) continue;
    if (item.kind == ItemKind::kSend && (!wrap_visible || item.peer == previous_rank) &&
        sends++ >= sends_before_gradient) {
      break;
    }
    if (item.kind == ItemKind::kRecv && (!previous || item.peer == *previous)) {
      ++inputs_before_first_gradient;
    }
  }
  schedule.all_forwards_first = inputs_before_first_gradient >= forwards;
  return schedule;
}

}  // namespace bubblescope::pipeline
