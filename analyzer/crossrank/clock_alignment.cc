#include "crossrank/clock_alignment.h"

#include <algorithm>
#include <deque>
#include <limits>
#include <map>
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

}  // namespace

Result Analyze(const std::vector<p2p_matching::Transfer>& transfers, const Options& options) {
  Result result;
  std::map<int32_t, size_t> position;
  for (size_t i = 0; i < options.ranks.size(); ++i) {
    position[options.ranks[i]] = i;
    result.offsets.push_back(RankOffset{.rank = options.ranks[i]});
  }
  if (options.ranks.empty()) return result;

  std::map<std::pair<int32_t, int32_t>, PairEvidence> evidence;  // keyed (a, b), a < b
  for (const p2p_matching::Transfer& transfer : transfers) {
    if (!position.contains(transfer.src) || !position.contains(transfer.dst) ||
        transfer.src == transfer.dst) {
      continue;
    }
    // In terms of d' = offset(dst) - offset(src); flipped when dst < src. Kept in the model's
    // time range (clocks more than 146 years apart are damage), so any two of these subtract.
    const TimeNs sample = ClampTime(transfer.recv.end - transfer.send.end);
    const TimeNs upper = ClampTime(transfer.recv.end - transfer.send.start);
    const bool flipped = transfer.dst < transfer.src;
    PairEvidence& pair = evidence[flipped ? std::make_pair(transfer.dst, transfer.src)
                                          : std::make_pair(transfer.src, transfer.dst)];
    if (transfer.send.rendezvous && transfer.recv.rendezvous) {
      pair.samples.push_back(flipped ? -sample : sample);
      pair.receive_durations.push_back(ClampTime(transfer.recv.end - transfer.recv.start));
    }
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

  // Breadth-first from the reference, neighbours in rank order, so the tree is deterministic.
  RankOffset& reference = result.offsets.front();
  reference.aligned = true;
  std::deque<int32_t> queue = {reference.rank};
  while (!queue.empty()) {
    const int32_t rank = queue.front();
    queue.pop_front();
    const RankOffset from = result.offsets[position[rank]];
    for (const auto& [next, edge] : neighbours[rank]) {
      RankOffset& to = result.offsets[position[next]];
      if (to.aligned) continue;
      to.aligned = true;
      to.offset_ns = ClampTime(SaturatingAdd(from.offset_ns, edge.difference));
      to.uncertainty_ns = SaturatingAdd(from.uncertainty_ns, edge.uncertainty);
      to.samples = edge.samples;
      to.as_recorded = edge.as_recorded;
      queue.push_back(next);
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
