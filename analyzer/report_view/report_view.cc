#include "report_view/report_view.h"

#include <algorithm>

namespace bubblescope::report_view {

RankPlaces::RankPlaces(const pipeline::StageOrder& order) {
  // One rank alone is no pipeline: it is a stage only where its annotations say so.
  const bool staged = order.known && (order.ranks.size() != 1 ||
                                      order.source == pipeline::ShapeSource::kAnnotations);
  for (size_t i = 0; i < order.ranks.size(); ++i) {
    const auto position = static_cast<int32_t>(i);
    places_.push_back(
        {.rank = order.ranks[i], .stage = staged ? position : -1, .listed = position});
  }
}

const RankPlace* RankPlaces::Find(int32_t rank) const {
  // The first listing of a rank, as a search of the order finds it.
  const auto found = std::find_if(places_.begin(), places_.end(),
                                  [rank](const RankPlace& place) { return place.rank == rank; });
  return found == places_.end() ? nullptr : &*found;
}

int32_t RankPlaces::StageOf(int32_t rank) const {
  const RankPlace* place = Find(rank);
  return place == nullptr ? -1 : place->stage;
}

int32_t RankPlaces::ListedOf(int32_t rank) const {
  const RankPlace* place = Find(rank);
  return place == nullptr ? -1 : place->listed;
}

namespace {

std::optional<double> ShareOf(TimeNs part, TimeNs whole) {
  if (whole <= 0) return std::nullopt;
  return static_cast<double>(part) / static_cast<double>(whole);
}

}  // namespace

RanksTally RanksTallyOf(const rank_summary::Result& result) {
  RanksTally tally;
  for (const rank_summary::RankFigures& rank : result.ranks) {
    tally.cpu_ranks += rank.cpu_timeline ? 1 : 0;
    tally.any_profiler_steps |= rank.step_time > 0;
    if (!rank.time_base.empty()) {
      ++tally.nsys_rank_id_sources[rank.rank_source.empty() ? "none" : rank.rank_source];
      ++tally.nsys_time_bases[rank.time_base];
    }
    for (size_t i = 0; i < kImportCounterCount; ++i) {
      const auto counter = static_cast<ImportCounter>(i);
      const uint64_t count = rank.import_stats.count(counter);
      const Severity severity = CounterSpec(counter).severity;
      tally.by_severity[static_cast<size_t>(severity)] += count;
      if (severity == Severity::kInfo && count != 0) {
        tally.info_counts[i] += count;
        ++tally.info_ranks[i];
      }
    }
  }
  return tally;
}

IdleShares IdleSharesOf(const rank_summary::RankFigures& rank) {
  return {.in_steps = ShareOf(rank.step_idle, rank.step_time),
          .over_span = ShareOf(rank.idle, rank.span)};
}

WindowShares WindowSharesOf(const bubble::RankTotals& rank) {
  const auto share = [&rank](TimeNs ns) { return ShareOf(ns, rank.window).value_or(0.0); };
  return {.compute = share(rank.split.compute),
          .fill = share(rank.split.fill),
          .comm_wait = share(rank.split.comm_wait),
          .empty = share(rank.split.empty),
          .drain = share(rank.split.drain)};
}

std::vector<StallPerIteration> StallsPerIteration(const stall_attribution::Result& stalls) {
  const auto iterations = static_cast<double>(std::max<int64_t>(1, stalls.complete_iterations));
  std::vector<StallPerIteration> out;
  out.reserve(stalls.stalls.size());
  for (const stall_attribution::PeerStall& stall : stalls.stalls) {
    const auto per_iteration = [iterations](TimeNs ns) {
      return static_cast<double>(ns) / iterations;
    };
    out.push_back({.rank = stall.rank,
                   .peer = stall.peer,
                   .total_ns = per_iteration(stall.total_ns()),
                   .waiting_for_post_ns = per_iteration(stall.waiting_for_post_ns),
                   .in_transfer_ns = per_iteration(stall.in_transfer_ns)});
  }
  return out;
}

std::optional<IdleExtremes> IdleExtremesOf(const bubble::Result& bubble, const RankPlaces& places) {
  const std::vector<bubble::RankTotals>& ranks = bubble.per_rank;
  if (ranks.size() < 2) return std::nullopt;
  const auto by_bubble = [](const bubble::RankTotals& a, const bubble::RankTotals& b) {
    return a.bubble_fraction < b.bubble_fraction;
  };
  const bubble::RankTotals& most = *std::max_element(ranks.begin(), ranks.end(), by_bubble);
  const bubble::RankTotals& least = *std::min_element(ranks.begin(), ranks.end(), by_bubble);
  return IdleExtremes{.most_idle_rank = most.rank,
                      .most_idle_fraction = most.bubble_fraction,
                      .least_idle_rank = least.rank,
                      .least_idle_fraction = least.bubble_fraction,
                      .every_rank_staged = std::all_of(ranks.begin(), ranks.end(),
                                                       [&](const bubble::RankTotals& totals) {
                                                         return places.StageOf(totals.rank) >= 0;
                                                       })};
}

std::optional<int64_t> LargestStagePeakBytes(const whatif::Prediction& prediction) {
  if (prediction.memory.empty()) return std::nullopt;
  int64_t peak = prediction.memory.front().peak_allocated_bytes;
  for (const whatif::StageMemory& stage : prediction.memory) {
    peak = std::max(peak, stage.peak_allocated_bytes);
  }
  return peak;
}

std::optional<int64_t> MeasuredPeakBytes(const whatif::Model& model) {
  std::optional<int64_t> peak;
  for (const whatif::StageModel& stage : model.stages) {
    if (stage.memory_peak_bytes < 0) continue;
    peak = std::max(peak.value_or(0), stage.memory_peak_bytes);
  }
  return peak;
}

PipelineView ViewOf(const job::Pipeline& pipeline) {
  PipelineView view;
  view.places = RankPlaces(pipeline.crossrank.pipeline.order);
  view.stalls = StallsPerIteration(pipeline.crossrank.stalls);
  view.idle = IdleExtremesOf(pipeline.bubble, view.places);
  view.partial_iterations =
      static_cast<int64_t>(pipeline.bubble.iterations.size()) - pipeline.bubble.complete_iterations;
  view.typical_iteration = TypicalIteration(pipeline.bubble);
  return view;
}

std::vector<int32_t> MissingPeersOfJob(const job::Result& result) {
  std::vector<int32_t> peers;
  for (const job::Pipeline& pipeline : result.pipelines) {
    peers.insert(peers.end(), pipeline.crossrank.missing_peers.begin(),
                 pipeline.crossrank.missing_peers.end());
  }
  std::sort(peers.begin(), peers.end());
  peers.erase(std::unique(peers.begin(), peers.end()), peers.end());
  return peers;
}

size_t TypicalIteration(const bubble::Result& bubble) {
  const std::vector<bubble::IterationFigures>& iterations = bubble.iterations;
  for (size_t i = 0; i < iterations.size(); ++i) {
    if (iterations[i].complete && iterations[i].window() == bubble.latency.p50) return i;
  }
  for (size_t i = 0; i < iterations.size(); ++i) {
    if (iterations[i].complete) return i;
  }
  return 0;
}

std::vector<const findings::Finding*> FindingsByCost(const job::Result& result) {
  std::vector<const findings::Finding*> all;
  for (const job::Pipeline& pipeline : result.pipelines) {
    for (const findings::Finding& finding : pipeline.findings.findings) all.push_back(&finding);
  }
  std::stable_sort(all.begin(), all.end(),
                   [](const findings::Finding* a, const findings::Finding* b) {
                     return a->cost_ns > b->cost_ns;
                   });
  return all;
}

JobView ViewOf(const job::Result& result) {
  JobView view;
  view.pipelines.reserve(result.pipelines.size());
  for (const job::Pipeline& pipeline : result.pipelines) view.pipelines.push_back(ViewOf(pipeline));
  view.ranks = RanksTallyOf(result.ranks);
  view.missing_peers = MissingPeersOfJob(result);
  view.findings_by_cost = FindingsByCost(result);
  return view;
}

}  // namespace bubblescope::report_view
