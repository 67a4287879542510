#include "crossrank/clock_alignment.h"

#include <algorithm>
#include <map>
#include <set>
#include <utility>


namespace bubblescope::clock_alignment {
namespace {

// Rendezvous ends this close are one instant whatever the transfer's length.
constexpr TimeNs kAgreementFloorNs = 1000;

// What the evidence between two clock nodes a < b says about d = clock(b) - clock(a).
struct Edge {
  TimeNs difference = 0;
  TimeNs uncertainty = 0;  // kUnbounded when no bound holds
  int64_t samples = 0;
  Source source = Source::kCausalityBounds;
  bool as_recorded = false;  // the samples disagree on a difference: the recorded clocks kept
};

Source SourceOf(SampleKind kind) {
  switch (kind) {
    case SampleKind::kMatchedIds:
      return Source::kMatchedIds;
    case SampleKind::kRendezvous:
      return Source::kRendezvous;
    case SampleKind::kCollectives:
      return Source::kCollectives;
    case SampleKind::kNone:
      break;
  }
  return Source::kCausalityBounds;
}

// Only the bounds: 0 where both allow it, else the middle of the two; a bound on one side says
// nothing about how far the clocks are apart, so the uncertainty is then unbounded.
void EstimateFromBounds(const PairEvidence& evidence, Edge& edge) {
  if (evidence.lower > evidence.upper || evidence.lower == -kUnbounded ||
      evidence.upper == kUnbounded) {
    // Contradictory bounds come from transfers paired wrongly: no estimate holds.
    if (evidence.lower <= evidence.upper) {
      edge.difference = std::clamp<TimeNs>(0, evidence.lower, evidence.upper);
    }
    edge.uncertainty = kUnbounded;
    return;
  }
  if (evidence.lower <= 0 && 0 <= evidence.upper) {
    edge.uncertainty = std::max(evidence.upper, -evidence.lower);
    return;
  }
  edge.difference = evidence.lower + (evidence.upper - evidence.lower) / 2;
  edge.uncertainty = evidence.upper - edge.difference;
}

Edge Estimate(PairEvidence evidence) {
  Edge edge;
  edge.samples = static_cast<int64_t>(evidence.samples.size());
  edge.source = SourceOf(evidence.kind);
  if (evidence.samples.empty()) {
    EstimateFromBounds(evidence, edge);
    return edge;
  }
  const bool bounded = evidence.lower <= evidence.upper;
  std::sort(evidence.samples.begin(), evidence.samples.end());
  const TimeNs lowest = evidence.samples.front();
  const TimeNs highest = evidence.samples.back();
  const bool zero_allowed = !bounded || (evidence.lower <= 0 && 0 <= evidence.upper);
  if (lowest <= 0 && 0 <= highest && zero_allowed) {
    // Samples that put the two clocks on both sides of each other support no offset. Spread
    // within a transfer's own duration is the two ends finishing a little apart: the clocks
    // agree. Spread beyond it (wrongly paired transfers, or a peer guessed from the schedule)
    // leaves the offset unknown.
    edge.uncertainty = std::max(-lowest, highest);
    std::vector<TimeNs>& durations = evidence.durations;
    std::nth_element(durations.begin(), durations.begin() + (durations.size() - 1) / 2,
                     durations.end());
    edge.as_recorded = edge.uncertainty > std::max<TimeNs>(durations[(durations.size() - 1) / 2],
                                                           kAgreementFloorNs);
    return edge;
  }
  const TimeNs median = evidence.samples[(evidence.samples.size() - 1) / 2];
  const TimeNs clamped = bounded ? std::clamp(median, evidence.lower, evidence.upper) : median;
  edge.difference = clamped;
  edge.uncertainty = clamped > median ? clamped - median : median - clamped;
  for (TimeNs sample : evidence.samples) {
    edge.uncertainty = std::max(edge.uncertainty, sample > clamped ? sample - clamped
                                                                    : clamped - sample);
  }
  return edge;
}

// Where a clock node lies against the reference's, through its chain of least uncertainty.
struct Placement {
  bool reached = false;
  TimeNs offset = 0;
  TimeNs uncertainty = 0;
  int64_t samples = 0;
  Source source = Source::kReference;  // the weakest evidence on the chain
  bool as_recorded = false;            // some edge of the chain disagreed
};

// Dijkstra from node 0 (the reference's); ties by node, so the tree is deterministic.
std::vector<Placement> Place(const std::map<std::pair<int32_t, int32_t>, PairEvidence>& evidence,
                             size_t nodes) {
  std::vector<std::vector<std::pair<int32_t, Edge>>> neighbours(nodes);
  for (const auto& [key, pair] : evidence) {
    const Edge edge = Estimate(pair);
    neighbours[static_cast<size_t>(key.first)].push_back({key.second, edge});
    Edge reverse = edge;
    reverse.difference = -edge.difference;
    neighbours[static_cast<size_t>(key.second)].push_back({key.first, reverse});
  }
  std::vector<Placement> placed(nodes);
  placed[0].reached = true;
  std::vector<bool> done(nodes, false);
  std::set<std::pair<TimeNs, int32_t>> frontier = {{0, 0}};
  while (!frontier.empty()) {
    const size_t node = static_cast<size_t>(frontier.begin()->second);
    frontier.erase(frontier.begin());
    if (done[node]) continue;
    done[node] = true;
    const Placement from = placed[node];
    for (const auto& [next_node, edge] : neighbours[node]) {
      const size_t next = static_cast<size_t>(next_node);
      if (done[next]) continue;
      const TimeNs uncertainty = SaturatingAdd(from.uncertainty, edge.uncertainty);
      Placement& to = placed[next];
      if (to.reached && to.uncertainty <= uncertainty) continue;
      if (to.reached) frontier.erase({to.uncertainty, next_node});
      frontier.insert({uncertainty, next_node});
      to = Placement{.reached = true,
                     .offset = ClampTime(SaturatingAdd(from.offset, edge.difference)),
                     .uncertainty = uncertainty,
                     .samples = edge.samples,
                     .source = std::max(from.source, edge.source),
                     .as_recorded = from.as_recorded || edge.as_recorded};
    }
  }
  return placed;
}

Verdict Judge(const Placement& placement, const Options& options) {
  if (!placement.reached) return Verdict::kNoEvidence;
  if (placement.as_recorded) return Verdict::kDisagree;
  if (placement.source == Source::kCausalityBounds && options.peers_guessed) {
    return Verdict::kGuessedPeers;
  }
  if (placement.uncertainty == kUnbounded || placement.uncertainty > options.tolerance_ns) {
    return Verdict::kLoose;
  }
  const TimeNs distance = placement.offset < 0 ? -placement.offset : placement.offset;
  // Twice the uncertainty from 0: the truth is nearer the estimate than the recorded clocks.
  if (placement.offset != 0 && distance / 2 >= placement.uncertainty) return Verdict::kApplied;
  return Verdict::kConsistent;
}

constexpr TimeNs kOwnZeroWindowNs = 60'000'000'000;

// A weak estimate on a clock that started at its own zero is still the best there is.
Verdict OnOwnZero(Verdict verdict) {
  switch (verdict) {
    case Verdict::kLoose:
    case Verdict::kDisagree:
    case Verdict::kGuessedPeers:
      return Verdict::kGuessApplied;
    default:
      return verdict;
  }
}

bool Aligned(Verdict verdict) {
  return verdict == Verdict::kSameClock || verdict == Verdict::kApplied ||
         verdict == Verdict::kConsistent;
}

}  // namespace

std::string_view SourceName(Source source) {
  switch (source) {
    case Source::kReference:
      return "reference";
    case Source::kSameHost:
      return "same_host";
    case Source::kMatchedIds:
      return "matched_ids";
    case Source::kRendezvous:
      return "rendezvous";
    case Source::kCollectives:
      return "collectives";
    case Source::kCausalityBounds:
      return "causality_bounds";
    case Source::kNone:
      break;
  }
  return "none";
}

std::string_view VerdictName(Verdict verdict) {
  switch (verdict) {
    case Verdict::kSameClock:
      return "same_clock";
    case Verdict::kApplied:
      return "applied";
    case Verdict::kConsistent:
      return "consistent";
    case Verdict::kHeldBack:
      return "held_back";
    case Verdict::kNoEvidence:
      return "no_evidence";
    case Verdict::kLoose:
      return "loose";
    case Verdict::kDisagree:
      return "disagree";
    case Verdict::kGuessedPeers:
      return "guessed_peers";
    case Verdict::kGuessApplied:
      return "guess_applied";
  }
  return "unknown";
}

TimeNs RankOffset::ErrorBound() const {
  if (verdict == Verdict::kSameClock) return 0;
  if (applied()) return uncertainty_ns;
  if (source == Source::kNone) return kUnbounded;
  return SaturatingAdd(estimate_ns < 0 ? -estimate_ns : estimate_ns, uncertainty_ns);
}

bool StartsAtItsOwnZero(const Rank& rank) {
  bool any = false;
  TimeNs earliest = 0;
  for (const Timeline& timeline : rank.timelines) {
    if (timeline.intervals.empty()) continue;
    const TimeNs start = timeline.intervals.front().start;  // sorted by start
    earliest = any ? std::min(earliest, start) : start;
    any = true;
  }
  return any && earliest > -kOwnZeroWindowNs && earliest < kOwnZeroWindowNs;
}

bool IsAnonymousHost(std::string_view host) {
  constexpr std::string_view kLocal = "localhost";
  if (host.size() < kLocal.size()) return host.empty();
  for (size_t i = 0; i < kLocal.size(); ++i) {
    const char c = host[i] >= 'A' && host[i] <= 'Z' ? static_cast<char>(host[i] - 'A' + 'a')
                                                    : host[i];
    if (c != kLocal[i]) return false;
  }
  return true;
}

Result Analyze(const std::vector<p2p_matching::Transfer>& transfers, const Options& options,
               const std::vector<collective_matching::MatchedEnds>& collectives) {
  Result result;
  if (options.ranks.empty()) return result;
  // Clock nodes: one per named host, one per other rank; the reference's is node 0.
  std::map<int32_t, int32_t> node_of;
  std::map<std::string_view, int32_t> host_node;
  int32_t nodes = 0;
  for (size_t i = 0; i < options.ranks.size(); ++i) {
    const std::string_view host =
        i < options.hosts.size() ? std::string_view(options.hosts[i]) : std::string_view();
    int32_t node = nodes;
    if (!IsAnonymousHost(host)) node = host_node.try_emplace(host, nodes).first->second;
    if (node == nodes) ++nodes;
    node_of.emplace(options.ranks[i], node);  // a rank listed twice keeps its first node
  }
  const std::vector<Placement> placed =
      Place(GatherEvidence(transfers, collectives, node_of), static_cast<size_t>(nodes));

  bool all_aligned = true;
  for (size_t i = 0; i < options.ranks.size(); ++i) {
    RankOffset offset{.rank = options.ranks[i]};
    if (i < options.hosts.size()) offset.host = options.hosts[i];
    const int32_t node = node_of.at(offset.rank);
    const Placement& placement = placed[static_cast<size_t>(node)];
    if (node == 0) {
      offset.source = i == 0 ? Source::kReference : Source::kSameHost;
      offset.verdict = Verdict::kSameClock;
    } else {
      offset.source = placement.reached ? placement.source : Source::kNone;
      offset.verdict = Judge(placement, options);
      if (i < options.own_zero.size() && options.own_zero[i]) {
        offset.verdict = OnOwnZero(offset.verdict);
      }
      offset.estimate_ns = placement.offset;
      offset.uncertainty_ns = placement.reached ? placement.uncertainty : kUnbounded;
      offset.samples = placement.samples;
      offset.as_recorded = placement.as_recorded;
    }
    offset.aligned = Aligned(offset.verdict);
    // A guess on an own-zero clock holds nothing back: keeping that clock is no better.
    all_aligned &= offset.aligned || offset.verdict == Verdict::kGuessApplied;
    result.offsets.push_back(std::move(offset));
  }
  for (RankOffset& offset : result.offsets) {
    if (offset.verdict == Verdict::kApplied && !all_aligned) {
      offset.verdict = Verdict::kHeldBack;
      offset.aligned = false;
    }
    offset.offset_ns = offset.applied() ? offset.estimate_ns : 0;
  }
  return result;
}

ClockOffsets AsClockOffsets(const std::vector<RankOffset>& offsets) {
  ClockOffsets map;
  for (const RankOffset& offset : offsets) map.Set(offset.rank, offset.offset_ns);
  return map;
}

}  // namespace bubblescope::clock_alignment
