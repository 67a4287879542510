// compare::Diff on hand-built runs: which pipelines pair and why, shape changes, the
// iteration-to-iteration spread, stages and findings matched by pipeline position.
#include "compare/diff.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace bubblescope::compare {
namespace {

using ::testing::ElementsAre;

PipelineFigures Pipeline(std::vector<int32_t> ranks, int32_t m = 8) {
  PipelineFigures pipeline;
  pipeline.stages = static_cast<int32_t>(ranks.size());
  pipeline.microbatches = m;
  pipeline.virtual_stages = 1;
  pipeline.schedule = "1f1b";
  for (size_t i = 0; i < ranks.size(); ++i) {
    StageFigures stage;
    stage.rank = ranks[i];
    stage.stage = static_cast<int32_t>(i);
    stage.peak_allocated_bytes = 1000.0 * static_cast<double>(i + 1);
    pipeline.stage_figures.push_back(stage);
  }
  pipeline.ranks = std::move(ranks);
  return pipeline;
}

RunFigures MakeRun(std::string source, std::vector<PipelineFigures> pipelines) {
  RunFigures run;
  run.source = std::move(source);
  run.pipelines = std::move(pipelines);
  return run;
}

std::vector<std::string> Pairings(const DiffResult& diff) {
  std::vector<std::string> names;
  for (const PipelineDiff& pipeline : diff.pipelines) {
    names.push_back(PipelineLabel(pipeline) + " " + std::string(PairingName(pipeline.pairing)));
  }
  return names;
}

TEST(DiffTest, PipelinesPairByTheStrongestRuleThatFits) {
  // B lists the same pipelines swapped, one reordered, one on new ranks, one deeper.
  const RunFigures a =
      MakeRun("a", {Pipeline({0, 1, 2, 3}), Pipeline({4, 5, 6, 7}), Pipeline({8, 9}),
                    Pipeline({10, 11}), Pipeline({12, 13}), Pipeline({14, 15})});
  const RunFigures b =
      MakeRun("b", {Pipeline({4, 5, 6, 7}), Pipeline({0, 1, 2, 3}), Pipeline({9, 8}),
                    Pipeline({20, 21}), Pipeline({30, 31, 32, 33, 34})});
  const DiffResult diff = Diff(a, b);
  EXPECT_EQ(diff.source_a, "a");
  EXPECT_THAT(Pairings(diff),
              ElementsAre("pipeline 0 -> 1 same_ranks", "pipeline 1 -> 0 same_ranks",
                          "pipeline 2 same_rank_set", "pipeline 3 same_stage_count",
                          "pipeline 4 position", "pipeline 5 (A only) only_a"));
  EXPECT_THAT(diff.pipelines[4].shape_changes.size(), 1u);
  EXPECT_EQ(diff.pipelines[4].shape_changes[0].figure, "p");
  EXPECT_EQ(diff.pipelines[4].shape_changes[0].a, "2");
  EXPECT_EQ(diff.pipelines[4].shape_changes[0].b, "5");
  EXPECT_FALSE(diff.pipelines[5].bubble_fraction.b.has_value());

  const DiffResult reverse =
      Diff(MakeRun("x", {Pipeline({0, 1})}), MakeRun("y", {Pipeline({0, 1}), Pipeline({2, 3})}));
  EXPECT_THAT(Pairings(reverse),
              ElementsAre("pipeline 0 same_ranks", "pipeline 1 (B only) only_b"));
}

TEST(DiffTest, ShapeChangesListEveryFigureThatDiffers) {
  PipelineFigures before = Pipeline({0, 1, 2, 3}, 8);
  PipelineFigures after = Pipeline({0, 1, 2, 3}, 16);
  after.virtual_stages = 2;
  after.schedule = "interleaved";
  const DiffResult diff = Diff(MakeRun("a", {before}), MakeRun("b", {after}));
  std::vector<std::string> changes;
  for (const ShapeChange& change : diff.pipelines[0].shape_changes) {
    changes.push_back(change.figure + " " + change.a + "->" + change.b);
  }
  EXPECT_THAT(changes, ElementsAre("m 8->16", "v 1->2", "schedule 1f1b->interleaved"));
  after.stages.reset();
  EXPECT_EQ(Diff(MakeRun("a", {before}), MakeRun("b", {after})).pipelines[0].shape_changes[0].b,
            "-");
}

void AddIteration(PipelineFigures* pipeline, double window_us, double bubble, bool complete) {
  pipeline->iterations.push_back(
      IterationFigures{.step = static_cast<int64_t>(pipeline->iterations.size()),
                       .complete = complete,
                       .window_us = window_us,
                       .bubble_fraction = bubble});
}

TEST(DiffTest, ADifferenceWithinTheIterationSpreadIsMarked) {
  PipelineFigures a = Pipeline({0, 1});
  PipelineFigures b = Pipeline({0, 1});
  AddIteration(&a, 100.0, 0.30, true);
  AddIteration(&a, 110.0, 0.32, true);
  AddIteration(&a, 900.0, 0.90, false);  // incomplete: not part of the spread
  AddIteration(&b, 104.0, 0.35, true);
  AddIteration(&b, 106.0, 0.36, true);
  a.latency_p50_us = 100.0;
  b.latency_p50_us = 105.0;
  a.latency_max_us = 110.0;
  b.latency_max_us = 130.0;
  a.bubble_fraction = 0.31;
  b.bubble_fraction = 0.355;
  const PipelineDiff diff = Diff(MakeRun("a", {a}), MakeRun("b", {b})).pipelines[0];
  EXPECT_EQ(diff.latency_p50_us.spread, 10.0);
  EXPECT_TRUE(diff.latency_p50_us.WithinSpread());
  EXPECT_FALSE(diff.latency_max_us.WithinSpread());  // +20 against a spread of 10
  EXPECT_NEAR(*diff.bubble_fraction.spread, 0.02, 1e-12);
  EXPECT_FALSE(diff.bubble_fraction.WithinSpread());  // +0.045
  EXPECT_FALSE(diff.theoretical_bubble_fraction.spread.has_value());

  PipelineFigures single = Pipeline({0, 1});
  AddIteration(&single, 100.0, 0.3, true);
  const PipelineDiff no_spread = Diff(MakeRun("a", {single}), MakeRun("b", {single})).pipelines[0];
  EXPECT_FALSE(no_spread.latency_p50_us.spread.has_value());
  EXPECT_FALSE(no_spread.latency_p50_us.WithinSpread());
}

TEST(DiffTest, StagesAndFindingsPairByPipelinePosition) {
  PipelineFigures a = Pipeline({0, 1, 2, 3});
  PipelineFigures b = Pipeline({4, 5, 6, 7});
  b.stage_figures[1].peak_allocated_bytes = 2500.0;
  a.findings = {
      {.kind = "excess_bubble",
       .severity = "warning",
       .message = "a",
       .ranks = {0, 1, 2, 3},
       .cost_us = 10},
      {.kind = "stage_imbalance",
       .severity = "warning",
       .message = "a2",
       .ranks = {2},
       .cost_us = 7},
      {.kind = "comm_wait", .severity = "warning", .message = "a3", .ranks = {1}, .cost_us = 1}};
  b.findings = {
      {.kind = "excess_bubble",
       .severity = "warning",
       .message = "b",
       .ranks = {7, 6, 5, 4},
       .cost_us = 4},
      {.kind = "stage_imbalance",
       .severity = "warning",
       .message = "b2",
       .ranks = {7},
       .cost_us = 9},
      {.kind = "comm_wait", .severity = "warning", .message = "b3", .ranks = {5}, .cost_us = 2}};
  const PipelineDiff diff = Diff(MakeRun("a", {a}), MakeRun("b", {b})).pipelines[0];
  EXPECT_EQ(diff.pairing, Pairing::kSameStageCount);
  ASSERT_EQ(diff.stages.size(), 4u);
  EXPECT_EQ(diff.stages[1].rank_a, 1);
  EXPECT_EQ(diff.stages[1].rank_b, 5);
  EXPECT_EQ(diff.stages[1].peak_allocated_bytes.Delta(), 500.0);
  EXPECT_EQ(diff.stages[1].peak_allocated_bytes.Relative(), 0.25);
  std::vector<std::string> findings;
  for (const FindingDiff& finding : diff.findings) {
    findings.push_back(std::string(FindingChangeName(finding.change)) + " " + finding.kind + " " +
                       finding.message);
  }
  // Stage 2's imbalance went away and stage 3's came; the pipeline-wide excess and stage 1's
  // comm_wait stayed (B's message and cost).
  EXPECT_THAT(findings, ElementsAre("appeared stage_imbalance b2", "disappeared stage_imbalance a2",
                                    "persisting excess_bubble b", "persisting comm_wait b3"));
  EXPECT_EQ(diff.findings[2].cost_us.Delta(), -6.0);
}

TEST(DiffTest, LinksPairByTheirEndsPositions) {
  PipelineFigures a = Pipeline({0, 1});
  PipelineFigures b = Pipeline({2, 3});
  a.links = {{.src = 0,
              .dst = 1,
              .transfer_us_median = 10,
              .gbps_median = 50,
              .wait_us = 1,
              .slow = false}};
  b.links = {
      {.src = 2,
       .dst = 3,
       .transfer_us_median = 30,
       .gbps_median = std::nullopt,
       .wait_us = 2,
       .slow = true},
      {.src = 3, .dst = 2, .transfer_us_median = 5, .gbps_median = 9, .wait_us = 0, .slow = false}};
  const PipelineDiff diff = Diff(MakeRun("a", {a}), MakeRun("b", {b})).pipelines[0];
  ASSERT_EQ(diff.links.size(), 2u);
  EXPECT_EQ(diff.links[0].transfer_us_median.Delta(), 20.0);
  EXPECT_EQ(diff.links[0].ranks_b, std::make_pair(2, 3));
  EXPECT_EQ(diff.links[0].slow_b, true);
  EXPECT_FALSE(diff.links[0].gbps_median.Both());
  EXPECT_FALSE(diff.links[1].ranks_a.has_value());
}

TEST(ChangeTest, RelativeNeedsBothSidesAndANonZeroBaseline) {
  EXPECT_EQ((Change{.a = 200.0, .b = 150.0, .spread = std::nullopt}.Relative()), -0.25);
  EXPECT_FALSE((Change{.a = 0.0, .b = 1.0, .spread = std::nullopt}.Relative()).has_value());
  EXPECT_FALSE(
      (Change{.a = std::nullopt, .b = 1.0, .spread = std::nullopt}.Relative()).has_value());
  EXPECT_EQ((Change{.a = std::nullopt, .b = 1.0, .spread = std::nullopt}.Delta()), 0.0);
}

}  // namespace
}  // namespace bubblescope::compare
