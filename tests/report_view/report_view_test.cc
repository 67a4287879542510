// The report view's figures on a small job result built by hand: every expected value is
// worked out from the numbers written here.
#include "report_view/report_view.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace bubblescope::report_view {
namespace {

pipeline::StageOrder Order(std::vector<int32_t> ranks, bool known,
                           pipeline::ShapeSource source = pipeline::ShapeSource::kP2p) {
  pipeline::StageOrder order;
  order.ranks = std::move(ranks);
  order.known = known;
  order.source = source;
  return order;
}

bubble::RankTotals Totals(int32_t rank, double bubble_fraction) {
  bubble::RankTotals totals;
  totals.rank = rank;
  totals.bubble_fraction = bubble_fraction;
  return totals;
}

// Three stages on ranks 4, 2, 7 (stage order by traffic), five iterations of which three are
// complete, rank 2 stalled on rank 4 and rank 7 on rank 2.
job::Pipeline ThreeStages() {
  job::Pipeline pipeline;
  pipeline.crossrank.pipeline.order = Order({4, 2, 7}, true);
  pipeline.bubble.iterations.resize(5);
  pipeline.bubble.complete_iterations = 3;
  pipeline.bubble.per_rank = {Totals(4, 0.10), Totals(2, 0.25), Totals(7, 0.40)};
  pipeline.crossrank.stalls.complete_iterations = 3;
  pipeline.crossrank.stalls.stalls = {
      {.rank = 2, .peer = 4, .waiting_for_post_ns = 3000, .in_transfer_ns = 1500},
      {.rank = 7, .peer = 2, .waiting_for_post_ns = 0, .in_transfer_ns = 1000}};
  return pipeline;
}

TEST(ReportViewTest, AKnownOrderPlacesEachRankAtItsPosition) {
  const RankPlaces places(Order({4, 2, 7}, true));
  EXPECT_EQ(places.StageOf(4), 0);
  EXPECT_EQ(places.StageOf(2), 1);
  EXPECT_EQ(places.StageOf(7), 2);
  EXPECT_EQ(places.StageOf(5), -1);  // not in the pipeline
  EXPECT_EQ(places.ListedOf(7), 2);
  EXPECT_EQ(places.ListedOf(5), -1);
}

TEST(ReportViewTest, AnUnknownOrderPlacesNoRankButListsThemInIdOrder) {
  const RankPlaces places(Order({1, 3}, false));
  EXPECT_EQ(places.StageOf(1), -1);
  EXPECT_EQ(places.StageOf(3), -1);
  EXPECT_EQ(places.ListedOf(1), 0);
  EXPECT_EQ(places.ListedOf(3), 1);
}

TEST(ReportViewTest, OneRankIsAStageOnlyWhereItsAnnotationsSaySo) {
  EXPECT_EQ(RankPlaces(Order({6}, true)).StageOf(6), -1);
  EXPECT_EQ(RankPlaces(Order({6}, true)).ListedOf(6), 0);
  EXPECT_EQ(RankPlaces(Order({6}, true, pipeline::ShapeSource::kAnnotations)).StageOf(6), 0);
}

TEST(ReportViewTest, StallsAreSpreadOverTheCompleteIterations) {
  const std::vector<StallPerIteration> stalls = StallsPerIteration(ThreeStages().crossrank.stalls);
  ASSERT_EQ(stalls.size(), 2u);
  EXPECT_EQ(stalls[0].rank, 2);
  EXPECT_EQ(stalls[0].peer, 4);
  EXPECT_DOUBLE_EQ(stalls[0].total_ns, 1500.0);  // (3000 + 1500) / 3
  EXPECT_DOUBLE_EQ(stalls[0].waiting_for_post_ns, 1000.0);
  EXPECT_DOUBLE_EQ(stalls[0].in_transfer_ns, 500.0);
  // Not a whole number of nanoseconds: kept exact, 1000 / 3.
  EXPECT_DOUBLE_EQ(stalls[1].total_ns, 1000.0 / 3.0);
  EXPECT_DOUBLE_EQ(stalls[1].in_transfer_ns, 1000.0 / 3.0);
}

TEST(ReportViewTest, WithoutACompleteIterationStallsAreTheirTotals) {
  stall_attribution::Result stalls;
  stalls.complete_iterations = 0;
  stalls.stalls = {{.rank = 1, .peer = 0, .waiting_for_post_ns = 700, .in_transfer_ns = 50}};
  const std::vector<StallPerIteration> view = StallsPerIteration(stalls);
  ASSERT_EQ(view.size(), 1u);
  EXPECT_DOUBLE_EQ(view[0].total_ns, 750.0);
}

TEST(ReportViewTest, TheMostAndLeastIdleRanks) {
  job::Pipeline pipeline = ThreeStages();
  const PipelineView view = ViewOf(pipeline);
  ASSERT_TRUE(view.idle.has_value());
  EXPECT_EQ(view.idle->most_idle_rank, 7);
  EXPECT_DOUBLE_EQ(view.idle->most_idle_fraction, 0.40);
  EXPECT_EQ(view.idle->least_idle_rank, 4);
  EXPECT_DOUBLE_EQ(view.idle->least_idle_fraction, 0.10);
  EXPECT_TRUE(view.idle->every_rank_staged);

  // Ties go to the first rank of the bubble's table, for the most and the least alike.
  pipeline.bubble.per_rank = {Totals(4, 0.30), Totals(2, 0.30), Totals(7, 0.30)};
  const std::optional<IdleExtremes> tied =
      IdleExtremesOf(pipeline.bubble, RankPlaces(pipeline.crossrank.pipeline.order));
  ASSERT_TRUE(tied.has_value());
  EXPECT_EQ(tied->most_idle_rank, 4);
  EXPECT_EQ(tied->least_idle_rank, 4);

  // A rank the order does not place: not every rank is a stage.
  pipeline.bubble.per_rank.push_back(Totals(9, 0.0));
  EXPECT_FALSE(IdleExtremesOf(pipeline.bubble, RankPlaces(pipeline.crossrank.pipeline.order))
                   ->every_rank_staged);

  // One rank has no extremes.
  pipeline.bubble.per_rank = {Totals(4, 0.5)};
  EXPECT_EQ(IdleExtremesOf(pipeline.bubble, RankPlaces()), std::nullopt);
}

TEST(ReportViewTest, ThePipelineViewHoldsItsPlacesStallsAndPartialIterations) {
  const PipelineView view = ViewOf(ThreeStages());
  EXPECT_EQ(view.places.StageOf(2), 1);
  ASSERT_EQ(view.stalls.size(), 2u);
  EXPECT_DOUBLE_EQ(view.stalls[0].total_ns, 1500.0);
  EXPECT_EQ(view.partial_iterations, 2);  // 5 iterations, 3 complete
  EXPECT_EQ(view.typical_iteration, 0u);  // none of the five is complete in ThreeStages
}

TEST(ReportViewTest, TheJobViewHoldsEveryPipelinesViewAndTheJobsFigures) {
  job::Result result;
  result.pipelines = {ThreeStages(), job::Pipeline()};
  result.pipelines[1].crossrank.missing_peers = {11};
  result.ranks.ranks.resize(2);
  result.ranks.ranks[1].cpu_timeline = true;
  const JobView view = ViewOf(result);
  ASSERT_EQ(view.pipelines.size(), 2u);
  EXPECT_EQ(view.pipelines[0].places.StageOf(7), 2);
  EXPECT_EQ(view.pipelines[0].partial_iterations, 2);
  EXPECT_EQ(view.pipelines[1].places.StageOf(7), -1);  // the empty pipeline places no rank
  EXPECT_EQ(view.ranks.cpu_ranks, 1u);
  EXPECT_EQ(view.missing_peers, std::vector<int32_t>{11});
  EXPECT_TRUE(view.findings_by_cost.empty());
}

TEST(ReportViewTest, APredictionsPeakIsItsLargestStagesPeak) {
  whatif::Prediction prediction;
  EXPECT_EQ(LargestStagePeakBytes(prediction), std::nullopt);  // memory unknown
  prediction.memory = {{.stage = 0, .rank = 0, .peak_allocated_bytes = 100},
                       {.stage = 1, .rank = 1, .peak_allocated_bytes = 300},
                       {.stage = 2, .rank = 2, .peak_allocated_bytes = 200}};
  EXPECT_EQ(LargestStagePeakBytes(prediction), 300);
  // A stage whose peak is zero still has one: the largest is zero, not unknown.
  prediction.memory = {{.stage = 0, .rank = 0, .peak_allocated_bytes = 0}};
  EXPECT_EQ(LargestStagePeakBytes(prediction), 0);
}

TEST(ReportViewTest, TheMeasuredPeakIsTheLargestKnownStagePeak) {
  whatif::Model model;
  EXPECT_EQ(MeasuredPeakBytes(model), std::nullopt);
  model.stages.resize(3);
  model.stages[0].memory_peak_bytes = -1;  // unknown
  model.stages[1].memory_peak_bytes = 500;
  model.stages[2].memory_peak_bytes = 200;
  EXPECT_EQ(MeasuredPeakBytes(model), 500);
  model.stages[1].memory_peak_bytes = -1;
  model.stages[2].memory_peak_bytes = -1;
  EXPECT_EQ(MeasuredPeakBytes(model), std::nullopt);
}

TEST(ReportViewTest, ARanksIdleSharesOfItsStepsAndItsSpan) {
  rank_summary::RankFigures rank;
  rank.step_time = 8000;
  rank.step_idle = 2000;
  rank.span = 20000;
  rank.idle = 15000;
  const IdleShares shares = IdleSharesOf(rank);
  EXPECT_EQ(shares.in_steps, 0.25);   // 2000 / 8000
  EXPECT_EQ(shares.over_span, 0.75);  // 15000 / 20000
  // No profiler steps (or an empty span): no share, not a zero.
  rank.step_time = 0;
  rank.span = 0;
  EXPECT_EQ(IdleSharesOf(rank).in_steps, std::nullopt);
  EXPECT_EQ(IdleSharesOf(rank).over_span, std::nullopt);
}

TEST(ReportViewTest, WhereARanksWindowGoes) {
  bubble::RankTotals rank;
  rank.window = 4000;
  rank.split.compute = 2000;
  rank.split.fill = 1000;
  rank.split.comm_wait = 400;
  rank.split.empty = 100;
  rank.split.drain = 500;
  const WindowShares shares = WindowSharesOf(rank);
  EXPECT_EQ(shares.compute, 0.5);
  EXPECT_EQ(shares.fill, 0.25);
  EXPECT_EQ(shares.comm_wait, 0.1);
  EXPECT_EQ(shares.empty, 0.025);
  EXPECT_EQ(shares.drain, 0.125);
  rank.window = 0;  // no complete iteration: nothing to share
  EXPECT_EQ(WindowSharesOf(rank).compute, 0.0);
}

TEST(ReportViewTest, TheJobsFindingsCostliestFirst) {
  job::Result result;
  result.pipelines.resize(2);
  const auto finding = [](TimeNs cost, const char* message) {
    findings::Finding f;
    f.cost_ns = cost;
    f.message = message;
    return f;
  };
  result.pipelines[0].findings.findings = {finding(300, "a"), finding(100, "b")};
  result.pipelines[1].findings.findings = {finding(500, "c"), finding(100, "d"), finding(300, "e")};
  std::vector<std::string> order;
  for (const findings::Finding* f : FindingsByCost(result)) order.push_back(f->message);
  // 500, then the two 300s and the two 100s each in pipeline order.
  EXPECT_EQ(order, (std::vector<std::string>{"c", "a", "e", "b", "d"}));
}

TEST(ReportViewTest, TheJobsMissingPeersOnceEachInOrder) {
  job::Result result;
  result.pipelines.resize(3);
  result.pipelines[0].crossrank.missing_peers = {9, 5};
  result.pipelines[2].crossrank.missing_peers = {5, 12, 3};
  EXPECT_EQ(MissingPeersOfJob(result), (std::vector<int32_t>{3, 5, 9, 12}));
  EXPECT_EQ(MissingPeersOfJob(job::Result()), std::vector<int32_t>{});
}

bubble::IterationFigures Iteration(bool complete, TimeNs window) {
  bubble::IterationFigures iteration;
  iteration.complete = complete;
  iteration.window_start = 1000;
  iteration.window_end = 1000 + window;
  return iteration;
}

TEST(ReportViewTest, TheTypicalIterationIsTheFirstCompleteOneOfMedianWindow) {
  bubble::Result bubble;
  EXPECT_EQ(TypicalIteration(bubble), 0u);  // none
  // Windows 50 (incomplete), 30, 40, 40, 20: the median of the complete ones is 35 or 40 as the
  // bubble says; with 40 the first complete 40 is iteration 2 (the incomplete one never counts).
  bubble.iterations = {Iteration(false, 40), Iteration(true, 30), Iteration(true, 40),
                       Iteration(true, 40), Iteration(true, 20)};
  bubble.latency.p50 = 40;
  EXPECT_EQ(TypicalIteration(bubble), 2u);
  // No complete window equals the median: the first complete iteration.
  bubble.latency.p50 = 35;
  EXPECT_EQ(TypicalIteration(bubble), 1u);
  // Nothing complete: the first.
  bubble.iterations = {Iteration(false, 40), Iteration(false, 30)};
  EXPECT_EQ(TypicalIteration(bubble), 0u);
}

TEST(ReportViewTest, TheRanksTalliedOverTheJob) {
  rank_summary::Result result;
  result.ranks.resize(3);
  result.ranks[0].cpu_timeline = true;
  // Which counters are info, warning and error is the model's table: read the severities from it
  // rather than assume them, and pick one info counter.
  size_t info = kImportCounterCount;
  for (size_t i = 0; i < kImportCounterCount && info == kImportCounterCount; ++i) {
    if (CounterSpec(static_cast<ImportCounter>(i)).severity == Severity::kInfo) info = i;
  }
  ASSERT_LT(info, kImportCounterCount);
  const auto info_counter = static_cast<ImportCounter>(info);
  result.ranks[0].import_stats.Add(info_counter, 4, 0);
  result.ranks[2].import_stats.Add(info_counter, 3, 0);
  result.ranks[1].import_stats.Add(ImportCounter::kTruncated, 1, 0);
  const RanksTally tally = RanksTallyOf(result);
  EXPECT_EQ(tally.cpu_ranks, 1u);
  EXPECT_FALSE(tally.any_profiler_steps);
  EXPECT_EQ(tally.info_counts[info], 7u);  // 4 + 3
  EXPECT_EQ(tally.info_ranks[info], 2u);   // ranks 0 and 2
  const Severity truncated_severity = CounterSpec(ImportCounter::kTruncated).severity;
  ASSERT_NE(truncated_severity, Severity::kInfo);
  const auto truncated = static_cast<size_t>(truncated_severity);
  EXPECT_EQ(tally.by_severity[static_cast<size_t>(Severity::kInfo)], 7u);
  EXPECT_EQ(tally.by_severity[truncated], 1u);
  EXPECT_TRUE(tally.nsys_time_bases.empty());  // no rank read from an Nsight export
  result.ranks[1].step_time = 5;               // one rank with profiler steps is enough
  EXPECT_TRUE(RanksTallyOf(result).any_profiler_steps);
}

TEST(ReportViewTest, WhatTheNsightRanksIdsAndTimesRestOn) {
  rank_summary::Result result;
  result.ranks.resize(4);
  result.ranks[0].time_base = "session";
  result.ranks[0].rank_source = "nccl";
  result.ranks[1].time_base = "session";
  result.ranks[2].time_base = "utc";
  result.ranks[2].rank_source = "nccl";
  // Rank 3 has no time base: not an Nsight export's, left out.
  result.ranks[3].rank_source = "file name";
  const RanksTally tally = RanksTallyOf(result);
  EXPECT_EQ(tally.nsys_rank_id_sources, (std::map<std::string, size_t>{{"nccl", 2}, {"none", 1}}));
  EXPECT_EQ(tally.nsys_time_bases, (std::map<std::string, size_t>{{"session", 2}, {"utc", 1}}));
}

}  // namespace
}  // namespace bubblescope::report_view
