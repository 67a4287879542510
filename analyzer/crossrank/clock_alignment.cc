#include "crossrank/clock_alignment.h"

#include <algorithm>
#include <limits>
#include <map>
#include <set>
#include <utility>

namespace bubblescope::clock_alignment {
namespace {

constexpr TimeNs kUnbounded = std::numeric_limits<TimeNs>::max();
// Rendezvous ends this close are one instant whatever the transfer's length.
constexpr TimeNs kAgreementFloorNs = 1000;

// What the transfers between two ranks a < b say about d = offset(b) - offset(a).
struct PairEvidence {
  std::vector<TimeNs> samples;  // rendezvous samples of d
  std::vector<TimeNs> receive_durations;  // of the rendezvous transfers
  TimeNs upper = kUnbounded;    // d <= upper
  TimeNs lower = -kUnbounded;   // d >= lower
};

struct Edge {
  TimeNs difference = 0;  // estimate of offset(b) - offset(a)
  TimeNs uncertainty = 0;
  int64_t samples = 0;
  bool as_recorded = false;  // the samples disagree on a difference: the recorded clocks kept
};

Edge Estimate(PairEvidence evidence) {
  Edge edge;
  edge.samples = static_cast<int64_t>(evidence.samples.size());
  const bool bounded = evidence.lower <= evidence.upper;
  if (evidence.samples.empty()) {
    edge.difference = bounded ? std::clamp<TimeNs>(0, evidence.lower, evidence.upper) : 0;
    if (evidence.upper != kUnbounded) edge.uncertainty = evidence.upper - edge.difference;
    if (evidence.lower != -kUnbounded) {
      edge.uncertainty = std::max(edge.uncertainty, edge.difference - evidence.lower);
    }
    return edge;
  }
  std::sort(evidence.samples.begin(), evidence.samples.end());
  const TimeNs lowest = evidence.samples.front();
  const TimeNs highest = evidence.samples.back();
  const bool zero_allowed = !bounded || (evidence.lower <= 0 && 0 <= evidence.upper);
  if (lowest <= 0 && 0 <= highest && zero_allowed) {
    // Transfers that put the two clocks on both sides of each other support no offset: moving
    // a clock by their median could only make the figures worse than the clocks as recorded.
    // Spread within a transfer's own duration is the two ends finishing a little apart: the
    // clocks agree. Spread beyond it (wrongly paired transfers, or a peer guessed from the
    // schedule) leaves the offset unknown: a guess.
    edge.uncertainty = std::max(-lowest, highest);
    std::vector<TimeNs>& durations = evidence.receive_durations;
    std::nth_element(durations.begin(), durations.begin() + (durations.size() - 1) / 2,
                     durations.end());
    edge.as_recorded = edge.uncertainty > std::max<TimeNs>(durations[(durations.size() - 1) / 2],
                                                           kAgreementFloorNs);
    return edge;
  }
  const TimeNs median = evidence.samples[(evidence.samples.size() - 1) / 2];
  TimeNs clamped = median;
  if (bounded) clamped = std::clamp(median, evidence.lower, evidence.upper);
  edge.difference = clamped;
  edge.uncertainty = clamped > median ? clamped - median : median - clamped;
  for (TimeNs sample : evidence.samples) {
    edge.uncertainty = std::max(edge.uncertainty, sample > clamped ? sample - clamped
                                                                    : clamped - sample);
  }
  return edge;
}

// One rendezvous sample of offset(dst) - offset(src): two ends that mark one instant.
struct Sample {
  int32_t src = -1;
  int32_t dst = -1;
  TimeNs value = 0;
  TimeNs receive_duration = 0;  // of the kernel that received (for a batch: the batch's)
};

// The rendezvous samples of the transfers (see clock_alignment.h). A transfer with a kernel of
// its own at both ends gives recv.end - send.end. A batch kernel (p2p_graph::P2pOp::batch) ends
// with its last transfer, so it gives one sample for the whole batch, when all its transfers
// are with one peer and every partner kernel ends with its transfer (a kernel of its own) or
// is a batch of exactly the same transfers: max(partner ends) - batch end.
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

Result Analyze(const std::vector<p2p_matching::Transfer>& transfers, const Options& options,
               const std::vector<collective_matching::MatchedEnds>& collectives) {
  Result result;
  std::map<int32_t, size_t> position;
  for (size_t i = 0; i < options.ranks.size(); ++i) {
    position[options.ranks[i]] = i;
    result.offsets.push_back(RankOffset{.rank = options.ranks[i]});
  }
  if (options.ranks.empty()) return result;

  std::map<std::pair<int32_t, int32_t>, PairEvidence> evidence;  // keyed (a, b), a < b
  for (const Sample& sample : RendezvousSamples(transfers)) {
    if (!position.contains(sample.src) || !position.contains(sample.dst) ||
        sample.src == sample.dst) {
      continue;
    }
    const bool flipped = sample.dst < sample.src;
    PairEvidence& pair = evidence[flipped ? std::make_pair(sample.dst, sample.src)
                                          : std::make_pair(sample.src, sample.dst)];
    pair.samples.push_back(flipped ? -sample.value : sample.value);
    pair.receive_durations.push_back(sample.receive_duration);
  }
  // Collectives speak for a pair only where its transfers give no sample: point-to-point
  // rendezvous ends are the direct evidence of the pipeline's own links.
  std::map<std::pair<int32_t, int32_t>, std::vector<std::pair<TimeNs, TimeNs>>> collective_samples;
  for (const collective_matching::MatchedEnds& match : collectives) {
    if (!position.contains(match.a) || !position.contains(match.b) || match.a == match.b) continue;
    const bool flipped = match.b < match.a;
    const TimeNs sample = ClampTime(match.b_end - match.a_end);
    collective_samples[flipped ? std::make_pair(match.b, match.a)
                               : std::make_pair(match.a, match.b)]
        .push_back({flipped ? -sample : sample, match.b_duration});
  }
  for (const auto& [key, samples] : collective_samples) {
    PairEvidence& pair = evidence[key];
    if (!pair.samples.empty()) continue;
    for (const auto& [sample, duration] : samples) {
      pair.samples.push_back(sample);
      pair.receive_durations.push_back(duration);
    }
  }
  for (const p2p_matching::Transfer& transfer : transfers) {
    if (!position.contains(transfer.src) || !position.contains(transfer.dst) ||
        transfer.src == transfer.dst) {
      continue;
    }
    // In terms of d' = offset(dst) - offset(src); flipped when dst < src. Kept in the model's
    // time range (clocks more than 146 years apart are damage), so any two of these subtract.
    const TimeNs upper = ClampTime(transfer.recv.end - transfer.send.start);
    const bool flipped = transfer.dst < transfer.src;
    PairEvidence& pair = evidence[flipped ? std::make_pair(transfer.dst, transfer.src)
                                          : std::make_pair(transfer.src, transfer.dst)];
    if (flipped) {
      pair.lower = std::max(pair.lower, -upper);
    } else {
      pair.upper = std::min(pair.upper, upper);
    }
  }
  std::map<int32_t, std::vector<std::pair<int32_t, Edge>>> neighbours;
  for (auto& [key, pair] : evidence) {
    Edge edge = Estimate(std::move(pair));
    neighbours[key.first].push_back({key.second, edge});
    Edge reverse = edge;
    reverse.difference = -edge.difference;
    neighbours[key.second].push_back({key.first, reverse});
  }

  // The tree of least total uncertainty from the reference (Dijkstra; ties by rank, so the
  // tree is deterministic): a rank is placed through its best-supported chain.
  RankOffset& reference = result.offsets.front();
  reference.aligned = true;
  std::set<std::pair<TimeNs, int32_t>> frontier = {{0, reference.rank}};
  std::map<int32_t, TimeNs> best = {{reference.rank, 0}};
  std::set<int32_t> placed;
  while (!frontier.empty()) {
    const int32_t rank = frontier.begin()->second;
    frontier.erase(frontier.begin());
    if (!placed.insert(rank).second) continue;
    const RankOffset from = result.offsets[position[rank]];
    for (const auto& [next, edge] : neighbours[rank]) {
      if (placed.contains(next)) continue;
      const TimeNs uncertainty = SaturatingAdd(from.uncertainty_ns, edge.uncertainty);
      const auto known = best.find(next);
      if (known != best.end() && known->second <= uncertainty) continue;
      if (known != best.end()) frontier.erase({known->second, next});
      best[next] = uncertainty;
      frontier.insert({uncertainty, next});
      RankOffset& to = result.offsets[position[next]];
      to.aligned = true;
      to.offset_ns = ClampTime(SaturatingAdd(from.offset_ns, edge.difference));
      to.uncertainty_ns = uncertainty;
      to.samples = edge.samples;
      to.as_recorded = edge.as_recorded;
    }
  }
  return result;
}

ClockOffsets AsClockOffsets(const std::vector<RankOffset>& offsets) {
  ClockOffsets map;
  for (const RankOffset& offset : offsets) map.Set(offset.rank, offset.offset_ns);
  return map;
}

}  // namespace bubblescope::clock_alignment
