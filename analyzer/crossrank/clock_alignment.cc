#include "crossrank/clock_alignment.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <utility>

#include "absl/strings/str_format.h"

namespace bubblescope::clock_alignment {
namespace {

// Rendezvous ends this close are one instant whatever the transfer's length.
constexpr TimeNs kAgreementFloorNs = 1000;
// A clock drifts by at most this against another (quartz: tens of ppm; 1000 ppm is broken).
constexpr double kMaxRate = 1e-3;
// Samples are reduced to at most this many time bins before the line's slope is taken.
constexpr size_t kSlopeBins = 24;

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

double At(const Line& line, TimeNs time, TimeNs anchor) {
  return static_cast<double>(line.offset_ns) +
         line.rate * (static_cast<double>(time) - static_cast<double>(anchor));
}

TimeNs Rounded(double value) {
  return ClampTime(static_cast<TimeNs>(std::llround(std::clamp(value, -4e18, 4e18))));
}

template <typename T>
T LowerMedian(std::vector<T> values) {
  const auto middle = values.begin() + static_cast<std::ptrdiff_t>((values.size() - 1) / 2);
  std::nth_element(values.begin(), middle, values.end());
  return *middle;
}

TimeNs LargestResidual(const std::vector<TimedSample>& samples, const Line& line, TimeNs anchor) {
  double largest = 0.0;
  for (const TimedSample& sample : samples) {
    largest = std::max(largest,
                       std::abs(static_cast<double>(sample.value) - At(line, sample.time, anchor)));
  }
  return Rounded(std::ceil(largest));
}

// The samples' line: a constant (their median), or where it leaves a smaller largest residual,
// a line whose slope is the median of the slopes between time bins' medians (Theil-Sen, robust to
// a few wrong samples) and whose offset is the median of what the samples leave at that slope.
// `slope_spread`: half the interquartile range of those slopes (0 for a constant), how far the
// slope itself may be off.
Line FitSamples(std::vector<TimedSample> samples, TimeNs anchor, TimeNs* residual,
                double* slope_spread) {
  *slope_spread = 0.0;
  std::vector<TimeNs> values;
  for (const TimedSample& sample : samples) values.push_back(sample.value);
  Line best{LowerMedian(values), 0.0};
  *residual = LargestResidual(samples, best, anchor);
  if (samples.size() < 4 || *residual == 0) return best;
  std::sort(samples.begin(), samples.end(),
            [](const TimedSample& a, const TimedSample& b) { return a.time < b.time; });
  const size_t bins = std::min(kSlopeBins, samples.size() / 2);
  std::vector<std::pair<double, double>> points;  // (time, value) per bin
  for (size_t bin = 0; bin < bins; ++bin) {
    const size_t from = bin * samples.size() / bins;
    const size_t to = (bin + 1) * samples.size() / bins;
    std::vector<TimeNs> times;
    std::vector<TimeNs> bin_values;
    for (size_t i = from; i < to; ++i) {
      times.push_back(samples[i].time);
      bin_values.push_back(samples[i].value);
    }
    points.emplace_back(static_cast<double>(LowerMedian(times)),
                        static_cast<double>(LowerMedian(bin_values)));
  }
  std::vector<double> slopes;
  for (size_t i = 0; i < points.size(); ++i) {
    for (size_t j = i + 1; j < points.size(); ++j) {
      if (points[j].first > points[i].first) {
        slopes.push_back((points[j].second - points[i].second) /
                         (points[j].first - points[i].first));
      }
    }
  }
  if (slopes.empty()) return best;
  const double slope = std::clamp(LowerMedian(slopes), -kMaxRate, kMaxRate);
  std::sort(slopes.begin(), slopes.end());
  const double spread = (slopes[slopes.size() * 3 / 4] - slopes[slopes.size() / 4]) / 2.0;
  std::vector<double> left;
  for (const TimedSample& sample : samples) {
    left.push_back(static_cast<double>(sample.value) -
                   slope * (static_cast<double>(sample.time) - static_cast<double>(anchor)));
  }
  const Line line{Rounded(LowerMedian(left)), slope};
  const TimeNs line_residual = LargestResidual(samples, line, anchor);
  if (line_residual < *residual) {
    *residual = line_residual;
    *slope_spread = spread;
    return line;
  }
  return best;
}

// The first causality bound the line breaks, described; empty when it breaks none.
std::string BrokenBound(const std::vector<Bound>& bounds, const Line& line, TimeNs anchor) {
  for (const Bound& bound : bounds) {
    const double at = At(line, bound.time, anchor);
    const double excess =
        bound.upper ? at - static_cast<double>(bound.value) : static_cast<double>(bound.value) - at;
    if (excess <= 0.5) continue;
    if (bound.collective) {
      return absl::StrFormat(
          "the collective of ranks %d and %d at %.6f s on rank %d's clock: one member's kernel "
          "would end %.3f us before the other's started",
          bound.src, bound.dst, static_cast<double>(bound.recorded) / 1e9, bound.src, excess / 1e3);
    }
    return absl::StrFormat(
        "the transfer rank %d -> rank %d sent at %.6f s on rank %d's clock: its receive would "
        "end %.3f us before the send started",
        bound.src, bound.dst, static_cast<double>(bound.recorded) / 1e9, bound.src, excess / 1e3);
  }
  return "";
}

// Only the bounds. 0 where every bound allows it (uncertain by the farther bound), else the
// middle of the band they leave, uncertain by half its width; drift can leave no constant band,
// and then the band is taken along the rate that leaves it widest. A bound on one side only says
// nothing about how far the clocks are apart: unbounded.
void FitBounds(const PairEvidence& evidence, TimeNs anchor, PairFit& fit) {
  fit.uncertainty_ns = kUnbounded;
  if (evidence.lower == -kUnbounded || evidence.upper == kUnbounded) {
    if (evidence.lower <= evidence.upper) {
      fit.line.offset_ns = std::clamp<TimeNs>(0, evidence.lower, evidence.upper);
    }
    return;
  }
  if (evidence.lower <= evidence.upper) {
    if (evidence.lower <= 0 && 0 <= evidence.upper) {
      fit.uncertainty_ns = std::max(evidence.upper, -evidence.lower);
      return;
    }
    fit.line.offset_ns = evidence.lower + (evidence.upper - evidence.lower) / 2;
    fit.uncertainty_ns = evidence.upper - fit.line.offset_ns;
    return;
  }
  // Width of the band at rate r: min over upper bounds of (u - r t) - max over lower of (l - r t),
  // concave in r, so a ternary search finds its widest.
  const auto band = [&](double rate, double* low, double* high) {
    *low = -1e300;
    *high = 1e300;
    for (const Bound& bound : evidence.bounds) {
      const double at = static_cast<double>(bound.value) -
                        rate * (static_cast<double>(bound.time) - static_cast<double>(anchor));
      if (bound.upper) {
        *high = std::min(*high, at);
      } else {
        *low = std::max(*low, at);
      }
    }
    return *high - *low;
  };
  double from = -kMaxRate;
  double to = kMaxRate;
  double low = 0.0;
  double high = 0.0;
  for (int step = 0; step < 200; ++step) {
    const double a = from + (to - from) / 3.0;
    const double b = to - (to - from) / 3.0;
    if (band(a, &low, &high) < band(b, &low, &high)) {
      from = a;
    } else {
      to = b;
    }
  }
  const double rate = (from + to) / 2.0;
  if (band(rate, &low, &high) < 0.0) return;  // contradictory: transfers paired wrongly
  fit.line = Line{Rounded((low + high) / 2.0), rate};
  fit.uncertainty_ns = Rounded(std::ceil((high - low) / 2.0));
}

PairFit Fit(const PairEvidence& evidence, TimeNs anchor, TimeNs half_span) {
  PairFit fit;
  fit.samples = static_cast<int64_t>(evidence.samples.size());
  fit.source = SourceOf(evidence.kind);
  if (!evidence.samples.empty()) {
    TimeNs residual = 0;
    double slope_spread = 0.0;
    Line line = FitSamples(evidence.samples, anchor, &residual, &slope_spread);
    TimeNs lowest = kUnbounded;
    TimeNs highest = -kUnbounded;
    std::vector<TimeNs> durations;
    for (const TimedSample& sample : evidence.samples) {
      lowest = std::min(lowest, sample.value);
      highest = std::max(highest, sample.value);
      durations.push_back(sample.duration);
    }
    const bool zero_allowed = evidence.lower <= 0 && 0 <= evidence.upper;
    // The two ends of a rendezvous are one instant, so the samples scatter only by how the ends
    // are recorded, and the largest residual bounds the line's error. Collectives' members end
    // apart by the work after the reduction, which a few samples' residual underestimates: the
    // truth may lie that far again beyond the line, and a slope taken from them is off by its
    // spread over the job's span.
    TimeNs uncertainty = residual;
    if (evidence.kind != SampleKind::kRendezvous) {
      uncertainty =
          SaturatingAdd(SaturatingAdd(residual, residual),
                        Rounded(std::ceil(slope_spread * static_cast<double>(half_span))));
    }
    const bool straddle = lowest <= 0 && 0 <= highest && zero_allowed;
    if (straddle && line.rate == 0.0) {
      // Samples that put the two clocks on both sides of each other support no offset: 0,
      // uncertain by the farthest sample.
      line = Line{};
      uncertainty = std::max(-lowest, highest);
    }
    // Spread within a transfer's own duration is the two ends finishing a little apart: the
    // clocks agree. Samples around the recorded clocks spread beyond it (wrongly paired
    // transfers, or a peer guessed from the schedule) leave the difference unknown.
    fit.as_recorded = straddle && uncertainty > std::max(LowerMedian(durations), kAgreementFloorNs);
    fit.rejected_by = fit.as_recorded ? std::string() : BrokenBound(evidence.bounds, line, anchor);
    if (fit.rejected_by.empty()) {
      fit.line = line;
      fit.uncertainty_ns = uncertainty;
      fit.residual_ns = residual;
      return fit;
    }
    // The samples' estimate breaks causality: rejected, the bounds decide.
    fit.samples = 0;
    fit.source = Source::kCausalityBounds;
  }
  fit.bounds_guessed = evidence.bounds_guessed;
  FitBounds(evidence, anchor, fit);
  return fit;
}

// Where a clock node lies against the reference's, through its chain of least uncertainty.
struct Placement {
  bool reached = false;
  Line line;
  TimeNs uncertainty = 0;
  TimeNs residual = 0;
  int64_t samples = 0;
  Source source = Source::kReference;  // the weakest evidence on the chain
  bool as_recorded = false;            // some edge of the chain disagreed
  bool bounds_guessed = false;         // some edge of the chain rests on guessed peers' bounds
  std::string rejected_by;             // an estimate on the chain broke causality
  bool breaks_causality = false;       // the placement itself breaks a bound of the job
};

// What chaining a pair's line onto a placed node may get wrong, as a bound: each pair's line
// takes its times on one of its two clocks and the rank applies its line on its own, so the time
// argument may be off by the clocks' offsets (times the rate), and rates taken against different
// clocks differ by their product (over the span).
TimeNs ChainSlack(const Line& from, const Line& edge, TimeNs half_span) {
  const double offsets =
      std::abs(static_cast<double>(from.offset_ns)) + std::abs(static_cast<double>(edge.offset_ns));
  const double rates = std::abs(from.rate) + std::abs(edge.rate);
  return Rounded(
      std::ceil(2.0 * rates * offsets + 2.0 * rates * rates * static_cast<double>(half_span)));
}

// Dijkstra from `root`; ties by node, so the tree is deterministic.
std::vector<Placement> Place(const JobClocks& clocks, int32_t root) {
  const size_t nodes = static_cast<size_t>(clocks.nodes);
  std::vector<std::vector<std::pair<int32_t, PairFit>>> neighbours(nodes);
  for (const auto& [key, fit] : clocks.fits) {
    neighbours[static_cast<size_t>(key.first)].push_back({key.second, fit});
    PairFit reverse = fit;
    reverse.line = Line{ClampTime(-fit.line.offset_ns), -fit.line.rate};
    neighbours[static_cast<size_t>(key.second)].push_back({key.first, reverse});
  }
  std::vector<Placement> placed(nodes);
  if (root < 0 || static_cast<size_t>(root) >= nodes) return placed;
  placed[static_cast<size_t>(root)].reached = true;
  std::vector<bool> done(nodes, false);
  std::set<std::pair<TimeNs, int32_t>> frontier = {{0, root}};
  while (!frontier.empty()) {
    const size_t node = static_cast<size_t>(frontier.begin()->second);
    frontier.erase(frontier.begin());
    if (done[node]) continue;
    done[node] = true;
    const Placement from = placed[node];
    for (const auto& [next_node, edge] : neighbours[node]) {
      const size_t next = static_cast<size_t>(next_node);
      if (done[next]) continue;
      const TimeNs uncertainty =
          edge.uncertainty_ns == kUnbounded
              ? kUnbounded
              : SaturatingAdd(SaturatingAdd(from.uncertainty, edge.uncertainty_ns),
                              ChainSlack(from.line, edge.line, clocks.half_span_ns));
      Placement& to = placed[next];
      if (to.reached && to.uncertainty <= uncertainty) continue;
      if (to.reached) frontier.erase({to.uncertainty, next_node});
      frontier.insert({uncertainty, next_node});
      to =
          Placement{.reached = true,
                    .line = Line{ClampTime(SaturatingAdd(from.line.offset_ns, edge.line.offset_ns)),
                                 from.line.rate + edge.line.rate},
                    .uncertainty = uncertainty,
                    .residual = edge.residual_ns,
                    .samples = edge.samples,
                    .source = std::max(from.source, edge.source),
                    .as_recorded = from.as_recorded || edge.as_recorded,
                    .bounds_guessed = from.bounds_guessed || edge.bounds_guessed,
                    .rejected_by = from.rejected_by.empty() ? edge.rejected_by : from.rejected_by,
                    .breaks_causality = false};
    }
  }
  return placed;
}

// Every causality bound between two placed nodes holds on their placed clocks; a node whose
// placement breaks one (the less certain of the two) is marked, with the bound it broke.
void CheckCausality(const JobClocks& clocks, std::vector<Placement>& placed) {
  for (const auto& [key, evidence] : clocks.evidence) {
    Placement& a = placed[static_cast<size_t>(key.first)];
    Placement& b = placed[static_cast<size_t>(key.second)];
    if (!a.reached || !b.reached || a.uncertainty == kUnbounded || b.uncertainty == kUnbounded) {
      continue;
    }
    const Line difference{ClampTime(b.line.offset_ns - a.line.offset_ns),
                          b.line.rate - a.line.rate};
    const std::string broken = BrokenBound(evidence.bounds, difference, clocks.anchor_ns);
    if (broken.empty()) continue;
    Placement& blamed = b.uncertainty >= a.uncertainty ? b : a;
    if (blamed.uncertainty == 0) continue;  // the reference's own clock is kept whatever
    blamed.breaks_causality = true;
    if (blamed.rejected_by.empty()) blamed.rejected_by = broken;
  }
}

// The line's largest distance from 0 over the job's span.
TimeNs Farthest(const Line& line, TimeNs half_span) {
  const double drift = std::abs(line.rate) * static_cast<double>(half_span);
  return Rounded(std::abs(static_cast<double>(line.offset_ns)) + drift);
}

Verdict Judge(const Placement& placement, const Options& options, TimeNs half_span) {
  if (!placement.reached) return Verdict::kNoEvidence;
  if (placement.breaks_causality) return Verdict::kBreaksCausality;
  if (placement.as_recorded) return Verdict::kDisagree;
  if (placement.source == Source::kCausalityBounds &&
      (options.peers_guessed || placement.bounds_guessed)) {
    return Verdict::kGuessedPeers;
  }
  if (placement.uncertainty == kUnbounded || placement.uncertainty > options.tolerance_ns) {
    return Verdict::kLoose;
  }
  // Twice the uncertainty from 0 somewhere over the job's span: there the truth is nearer the
  // estimate than the recorded clocks; where the line comes closer to 0, the truth is within u
  // of it either way. A line that never leaves 2u of 0 is the recorded clocks within evidence.
  if (Farthest(placement.line, half_span) / 2 >= placement.uncertainty &&
      (placement.line.offset_ns != 0 || placement.line.rate != 0.0)) {
    return Verdict::kApplied;
  }
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
    case Verdict::kBreaksCausality:
      return "breaks_causality";
  }
  return "unknown";
}

TimeNs RankOffset::ErrorBound() const {
  if (verdict == Verdict::kSameClock) return 0;
  if (applied()) return uncertainty_ns;
  if (source == Source::kNone) return kUnbounded;
  return SaturatingAdd(std::max(farthest_ns, estimate_ns < 0 ? -estimate_ns : estimate_ns),
                       uncertainty_ns);
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
    const char c =
        host[i] >= 'A' && host[i] <= 'Z' ? static_cast<char>(host[i] - 'A' + 'a') : host[i];
    if (c != kLocal[i]) return false;
  }
  return true;
}

JobClocks FitJob(const JobInput& input) {
  JobClocks clocks;
  // Clock nodes: one per named host, one per other rank, in the order the ranks are given.
  std::map<std::string_view, int32_t> host_node;
  for (size_t i = 0; i < input.ranks.size(); ++i) {
    if (clocks.node_of.count(input.ranks[i]) > 0) continue;  // a rank listed twice keeps its first
    const std::string_view host =
        i < input.hosts.size() ? std::string_view(input.hosts[i]) : std::string_view();
    int32_t node = clocks.nodes;
    if (!IsAnonymousHost(host)) node = host_node.try_emplace(host, clocks.nodes).first->second;
    if (node == clocks.nodes) ++clocks.nodes;
    clocks.node_of.emplace(input.ranks[i], node);
  }
  clocks.evidence = GatherEvidence(input.transfers, input.collectives, clocks.node_of);
  TimeNs first = kUnbounded;
  TimeNs last = -kUnbounded;
  for (const auto& [key, pair] : clocks.evidence) {
    for (const Bound& bound : pair.bounds) {
      first = std::min(first, bound.time);
      last = std::max(last, bound.time);
    }
    for (const TimedSample& sample : pair.samples) {
      first = std::min(first, sample.time);
      last = std::max(last, sample.time);
    }
  }
  if (first <= last) {
    clocks.half_span_ns = (last - first) / 2;
    clocks.anchor_ns = first + clocks.half_span_ns;
  }
  for (const auto& [key, pair] : clocks.evidence) {
    clocks.fits.emplace(key, Fit(pair, clocks.anchor_ns, clocks.half_span_ns));
  }
  return clocks;
}

Result Analyze(const JobClocks& clocks, const Options& options) {
  Result result;
  if (options.ranks.empty()) return result;
  const auto reference = clocks.node_of.find(options.ranks[0]);
  const int32_t root = reference == clocks.node_of.end() ? -1 : reference->second;
  std::vector<Placement> placed = Place(clocks, root);
  CheckCausality(clocks, placed);
  const bool own_span = options.half_span_ns > 0;
  const TimeNs anchor = own_span ? options.anchor_ns : clocks.anchor_ns;
  const TimeNs half_span = own_span ? options.half_span_ns : clocks.half_span_ns;
  for (Placement& placement : placed) {
    // The same line, its offset given at the pipeline's anchor.
    placement.line.offset_ns = Rounded(At(placement.line, anchor, clocks.anchor_ns));
  }

  bool all_aligned = true;
  for (size_t i = 0; i < options.ranks.size(); ++i) {
    RankOffset offset{.rank = options.ranks[i]};
    if (i < options.hosts.size()) offset.host = options.hosts[i];
    offset.anchor_ns = anchor;
    const auto node = clocks.node_of.find(offset.rank);
    offset.clock_node = node == clocks.node_of.end() ? -1 : node->second;
    if (offset.clock_node >= 0 && offset.clock_node == root) {
      offset.source = i == 0 ? Source::kReference : Source::kSameHost;
      offset.verdict = Verdict::kSameClock;
    } else {
      static const Placement kUnreached;
      const Placement& placement =
          offset.clock_node < 0 ? kUnreached : placed[static_cast<size_t>(offset.clock_node)];
      offset.source = placement.reached ? placement.source : Source::kNone;
      offset.verdict = Judge(placement, options, half_span);
      offset.own_zero = i < options.own_zero.size() && options.own_zero[i];
      if (offset.own_zero) {
        offset.verdict = OnOwnZero(offset.verdict);
      } else if (offset.verdict == Verdict::kLoose && placement.uncertainty != kUnbounded &&
                 Farthest(placement.line, half_span) / 2 >= placement.uncertainty) {
        // Too loose to call aligned, yet surely nearer the truth than the recorded clock, which
        // lies at least twice the uncertainty from the estimate: moved, and said to be a guess.
        offset.verdict = Verdict::kGuessApplied;
      }
      offset.estimate_ns = placement.line.offset_ns;
      offset.rate = placement.line.rate;
      offset.farthest_ns = Farthest(placement.line, half_span);
      offset.uncertainty_ns = placement.reached ? placement.uncertainty : kUnbounded;
      offset.residual_ns = placement.residual;
      offset.samples = placement.samples;
      offset.as_recorded = placement.as_recorded;
      offset.rejected_by = placement.rejected_by;
    }
    offset.aligned = Aligned(offset.verdict);
    // A rank moved, tightly or as a guess, holds nothing back; one kept on its recorded clock
    // does (a guess on an own-zero clock is moved whatever: keeping that clock is no better).
    all_aligned &= offset.aligned || offset.verdict == Verdict::kGuessApplied;
    result.offsets.push_back(std::move(offset));
  }
  for (RankOffset& offset : result.offsets) {
    // All or none: beside a clock kept as recorded, moving only the others could worsen the
    // figures between them, so tight offsets and guesses far from the recorded clock are held
    // back alike (a tight one and a guess are judged by one rule, never one moved without the
    // other).
    if (!all_aligned && (offset.verdict == Verdict::kApplied ||
                         (offset.verdict == Verdict::kGuessApplied && !offset.own_zero))) {
      offset.verdict = Verdict::kHeldBack;
      offset.aligned = false;
    }
    offset.offset_ns = offset.applied() ? offset.estimate_ns : 0;
  }
  return result;
}

Result Analyze(const std::vector<p2p_matching::Transfer>& transfers, const Options& options,
               const std::vector<collective_matching::MatchedEnds>& collectives) {
  JobInput input{.ranks = options.ranks,
                 .hosts = options.hosts,
                 .transfers = {TransferSet{&transfers, options.peers_guessed}},
                 .collectives = collectives};
  return Analyze(FitJob(input), options);
}

ClockOffsets AsClockOffsets(const std::vector<RankOffset>& offsets) {
  ClockOffsets map;
  for (const RankOffset& offset : offsets) {
    map.Set(offset.rank,
            RankClock{offset.offset_ns, offset.applied() ? offset.rate : 0.0, offset.anchor_ns});
  }
  return map;
}

}  // namespace bubblescope::clock_alignment
