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

// The rendezvous samples of the transfers (see clock_evidence.h), between ranks. A transfer with
// a kernel of its own at both ends gives recv.end - send.end. A batch kernel
// (p2p_graph::P2pOp::batch) ends with its last transfer, so it gives one sample for the whole
// batch, when all its transfers are with one peer and every partner kernel ends with its
// transfer (a kernel of its own) or is a batch of exactly the same transfers:
// max(partner ends) - batch end.
std::vector<Sample> RendezvousSamples(const std::vector<p2p_matching::Transfer>& transfers) {
  struct Batch {
    int32_t rank = -1;
    std::vector<size_t> transfers;
  };
  std::map<std::pair<int32_t, int64_t>, Batch> batches;  // (rank, batch) -> its transfers
  std::vector<Sample> samples;
  for (size_t i = 0; i < transfers.size(); ++i) {
    const p2p_matching::Transfer& transfer = transfers[i];
    if (!transfer.send.rendezvous || !transfer.recv.rendezvous) continue;
    if (transfer.send.batch < 0 && transfer.recv.batch < 0) {
      samples.push_back(Sample{transfer.src, transfer.dst,
                               ClampTime(transfer.recv.end - transfer.send.end),
                               ClampTime(transfer.recv.end - transfer.recv.start)});
    }
    if (transfer.send.batch >= 0) {
      Batch& batch = batches[{transfer.src, transfer.send.batch}];
      batch.rank = transfer.src;
      batch.transfers.push_back(i);
    }
    if (transfer.recv.batch >= 0) {
      Batch& batch = batches[{transfer.dst, transfer.recv.batch}];
      batch.rank = transfer.dst;
      batch.transfers.push_back(i);
    }
  }
  for (const auto& [key, batch] : batches) {
    const p2p_matching::Transfer& first = transfers[batch.transfers.front()];
    const int32_t peer = first.src == batch.rank ? first.dst : first.src;
    const p2p_graph::P2pOp& own_first = first.src == batch.rank ? first.send : first.recv;
    TimeNs partner_end = std::numeric_limits<TimeNs>::min();
    bool usable = true;
    for (size_t i : batch.transfers) {
      const p2p_matching::Transfer& transfer = transfers[i];
      const bool sent = transfer.src == batch.rank;
      const p2p_graph::P2pOp& partner = sent ? transfer.recv : transfer.send;
      usable &= (sent ? transfer.dst : transfer.src) == peer;
      if (partner.batch >= 0) {
        const auto other = batches.find({peer, partner.batch});
        usable &= other != batches.end() && other->second.transfers == batch.transfers;
      }
      partner_end = std::max(partner_end, partner.end);
    }
    if (!usable) continue;
    samples.push_back(Sample{batch.rank, peer, ClampTime(partner_end - own_first.end),
                             ClampTime(own_first.end - own_first.start)});
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
