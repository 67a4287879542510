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
      samples.push_back(Sample{transfer.src, transfer.dst,
                               ClampTime(transfer.recv.end - transfer.send.end),
                               ClampTime(transfer.recv.end - transfer.recv.start)});
    }
    if (transfer.send.batch >= 0) add_to_batch(transfer.src, transfer.dst, transfer.send, transfer.recv);
    if (transfer.recv.batch >= 0) add_to_batch(transfer.dst, transfer.src, transfer.recv, transfer.send);
  }
  for (const auto& [key, batch] : batches) {
    samples.push_back(Sample{batch.rank, batch.peer, ClampTime(batch.partner_end - batch.end),
                             ClampTime(batch.end - batch.start)});
  }
  return samples;
}

}  // namespace

std::map<std::pair<int32_t, int32_t>, PairEvidence> GatherEvidence(
    const std::vector<p2p_matching::Transfer>& transfers,
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
  bool flipped = false;
  for (const Sample& sample : RendezvousSamples(transfers)) {
    PairEvidence* pair = pair_of(sample.src, sample.dst, &flipped);
    if (pair == nullptr) continue;
    pair->samples.push_back(flipped ? -sample.value : sample.value);
    pair->durations.push_back(sample.receive_duration);
    pair->kind = SampleKind::kRendezvous;
  }
  for (const collective_matching::MatchedEnds& match : collectives) {
    PairEvidence* pair = pair_of(match.a, match.b, &flipped);
    if (pair == nullptr || pair->kind == SampleKind::kRendezvous) continue;
    const TimeNs sample = ClampTime(match.b_end - match.a_end);
    pair->samples.push_back(flipped ? -sample : sample);
    pair->durations.push_back(match.b_duration);
    // One collective matched by position makes the pair's collectives positional evidence.
    if (pair->kind == SampleKind::kNone || !match.by_id) {
      pair->kind = match.by_id ? SampleKind::kMatchedIds : SampleKind::kCollectives;
    }
  }
  for (const p2p_matching::Transfer& transfer : transfers) {
    PairEvidence* pair = pair_of(transfer.src, transfer.dst, &flipped);
    if (pair == nullptr) continue;
    // Kept in the model's time range (clocks more than 146 years apart are damage), so any two
    // of these subtract.
    const TimeNs upper = ClampTime(transfer.recv.end - transfer.send.start);
    if (flipped) {
      pair->lower = std::max(pair->lower, -upper);
    } else {
      pair->upper = std::min(pair->upper, upper);
    }
  }
  return evidence;
}

}  // namespace bubblescope::clock_alignment
