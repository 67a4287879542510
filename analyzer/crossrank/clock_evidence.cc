#include "crossrank/clock_evidence.h"

#include <algorithm>

namespace bubblescope::clock_alignment {
namespace {

// One rendezvous sample of clock(dst) - clock(src): two ends that mark one instant.
struct Sample {
  int32_t src = -1;
  int32_t dst = -1;
  TimeNs value = 0;
  TimeNs receive_duration = 0;  // of the kernel that received (for a batch: the batch's)
  TimeNs time = 0;              // the receiving end (for a batch: its end), on its own clock
};

// The rendezvous samples of the transfers (see clock_evidence.h), between ranks. Only timed
// transfers (p2p_matching::Transfer::timed: each end a kernel of its own, or a batch of this one
// peer's transfers facing its own kernels or exactly the same batch) mark an instant. A transfer
// with a kernel of its own at both ends gives recv.end - send.end. A batch kernel ends with its
// last transfer, so it gives one sample for the whole batch: max(partner ends) - batch end.
std::vector<Sample> RendezvousSamples(const std::vector<p2p_matching::Transfer>& transfers) {
  struct Batch {
    int32_t rank = -1;
    int32_t peer = -1;
    TimeNs start = 0;
    TimeNs end = 0;
    TimeNs partner_end = std::numeric_limits<TimeNs>::min();
  };
  std::map<std::pair<int32_t, int64_t>, Batch> batches;  // (rank, batch) -> its figures
  std::vector<Sample> samples;
  const auto add_to_batch = [&](int32_t rank, int32_t peer, const p2p_graph::P2pOp& own,
                                const p2p_graph::P2pOp& partner) {
    Batch& batch = batches[{rank, own.batch}];
    batch = Batch{rank, peer, own.start, own.end, std::max(batch.partner_end, partner.end)};
  };
  for (const p2p_matching::Transfer& transfer : transfers) {
    if (!transfer.timed || !transfer.send.rendezvous || !transfer.recv.rendezvous) continue;
    if (transfer.send.batch < 0 && transfer.recv.batch < 0) {
      samples.push_back(
          Sample{transfer.src, transfer.dst, ClampTime(transfer.recv.end - transfer.send.end),
                 ClampTime(transfer.recv.end - transfer.recv.start), transfer.recv.end});
    }
    if (transfer.send.batch >= 0)
      add_to_batch(transfer.src, transfer.dst, transfer.send, transfer.recv);
    if (transfer.recv.batch >= 0)
      add_to_batch(transfer.dst, transfer.src, transfer.recv, transfer.send);
  }
  for (const auto& [key, batch] : batches) {
    samples.push_back(Sample{batch.rank, batch.peer, ClampTime(batch.partner_end - batch.end),
                             ClampTime(batch.end - batch.start), batch.end});
  }
  return samples;
}

}  // namespace

std::map<std::pair<int32_t, int32_t>, PairEvidence> GatherEvidence(
    const std::vector<TransferSet>& transfers,
    const std::vector<collective_matching::MatchedEnds>& collectives,
    const std::map<int32_t, int32_t>& node_of) {
  std::map<std::pair<int32_t, int32_t>, PairEvidence> evidence;  // keyed (a, b), a < b
  // The pair of nodes of ranks `from` -> `to`, and whether it is flipped (a value of
  // clock(to) - clock(from) is then -d); nullptr when either is unknown or both share a clock.
  auto pair_of = [&](int32_t from, int32_t to, bool* flipped) -> PairEvidence* {
    const auto a = node_of.find(from);
    const auto b = node_of.find(to);
    if (a == node_of.end() || b == node_of.end() || a->second == b->second) return nullptr;
    *flipped = b->second < a->second;
    return &evidence[*flipped ? std::make_pair(b->second, a->second)
                              : std::make_pair(a->second, b->second)];
  };
  // `limit` bounds clock(to) - clock(from) from above; on the pair's d it is an upper bound, or
  // (flipped) a lower one.
  auto add_bound = [](PairEvidence& pair, bool flipped, Bound bound) {
    bound.upper = !flipped;
    if (flipped) bound.value = ClampTime(-bound.value);
    if (bound.upper) {
      pair.upper = std::min(pair.upper, bound.value);
    } else {
      pair.lower = std::max(pair.lower, bound.value);
    }
    pair.bounds.push_back(bound);
  };
  bool flipped = false;
  for (const TransferSet& set : transfers) {
    if (set.transfers == nullptr) continue;
    for (const Sample& sample : RendezvousSamples(*set.transfers)) {
      PairEvidence* pair = pair_of(sample.src, sample.dst, &flipped);
      if (pair == nullptr) continue;
      pair->samples.push_back(TimedSample{sample.time, flipped ? -sample.value : sample.value,
                                          sample.receive_duration});
      pair->kind = SampleKind::kRendezvous;
    }
  }
  for (const collective_matching::MatchedEnds& match : collectives) {
    PairEvidence* pair = pair_of(match.a, match.b, &flipped);
    if (pair == nullptr) continue;
    // No member's kernel ends before another's started: b.end - d >= a.start and
    // a.end >= b.start - d, so clock(b) - clock(a) <= b.end - a.start and
    // clock(a) - clock(b) <= a.end - b.start.
    const TimeNs a_start = match.a_end - match.a_duration;
    const TimeNs b_start = match.b_end - match.b_duration;
    add_bound(*pair, flipped,
              Bound{match.b_end, ClampTime(match.b_end - a_start), true, true, match.a, match.b,
                    a_start});
    add_bound(
        *pair, !flipped,
        Bound{b_start, ClampTime(match.a_end - b_start), true, true, match.a, match.b, a_start});
    if (pair->kind == SampleKind::kRendezvous) continue;
    const TimeNs sample = ClampTime(match.b_end - match.a_end);
    pair->samples.push_back(TimedSample{match.b_end, flipped ? -sample : sample, match.b_duration});
    // One collective matched by position makes the pair's collectives positional evidence.
    if (pair->kind == SampleKind::kNone || !match.by_id) {
      pair->kind = match.by_id ? SampleKind::kMatchedIds : SampleKind::kCollectives;
    }
  }
  for (const TransferSet& set : transfers) {
    if (set.transfers == nullptr) continue;
    for (const p2p_matching::Transfer& transfer : *set.transfers) {
      PairEvidence* pair = pair_of(transfer.src, transfer.dst, &flipped);
      if (pair == nullptr) continue;
      // Kept in the model's time range (clocks more than 146 years apart are damage), so any
      // two of these subtract.
      add_bound(*pair, flipped,
                Bound{transfer.recv.end, ClampTime(transfer.recv.end - transfer.send.start), true,
                      false, transfer.src, transfer.dst, transfer.send.start});
      pair->bounds_guessed |= set.peers_guessed;
    }
  }
  return evidence;
}

}  // namespace bubblescope::clock_alignment
