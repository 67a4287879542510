// The gate's thresholds from text (one parser for flags and the config file) and compare::Gate's
// verdicts on hand-built diffs: limits met exactly, missing figures, pipelines on one side.
#include "compare/gate.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace bubblescope::compare {
namespace {

using ::testing::ElementsAre;

double Set(std::string_view key, std::string_view value) {
  GateThresholds thresholds;
  absl::Status status = SetThreshold(key, value, &thresholds);
  EXPECT_TRUE(status.ok()) << key << " = " << value << ": " << status;
  for (const auto& limit :
       {thresholds.max_bubble, thresholds.max_bubble_increase, thresholds.max_stage_bubble_increase,
        thresholds.max_latency_us, thresholds.max_latency_increase, thresholds.max_memory_bytes,
        thresholds.max_memory_increase}) {
    if (limit.has_value()) return *limit;
  }
  return -1.0;
}

std::string SetError(std::string_view key, std::string_view value) {
  GateThresholds thresholds;
  absl::Status status = SetThreshold(key, value, &thresholds);
  return status.ok() ? "ok" : std::string(status.message());
}

TEST(SetThresholdTest, ReadsEachKindOfValue) {
  EXPECT_DOUBLE_EQ(Set("max-bubble", "0.25"), 0.25);
  EXPECT_DOUBLE_EQ(Set("max-bubble", " 25% "), 0.25);
  EXPECT_DOUBLE_EQ(Set("max-bubble-increase", "2%"), 0.02);
  EXPECT_DOUBLE_EQ(Set("max-stage-bubble-increase", "0.05"), 0.05);
  EXPECT_DOUBLE_EQ(Set("max-latency", "120ms"), 120000.0);
  EXPECT_DOUBLE_EQ(Set("max-latency", "0.5 s"), 500000.0);
  EXPECT_DOUBLE_EQ(Set("max-latency", "750us"), 750.0);
  EXPECT_DOUBLE_EQ(Set("max-latency-increase", "5%"), 0.05);
  EXPECT_DOUBLE_EQ(Set("max-memory", "1.5GiB"), 1.5 * 1024 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(Set("max-memory", "2GB"), 2e9);
  EXPECT_DOUBLE_EQ(Set("max-memory", "4096"), 4096.0);
  EXPECT_DOUBLE_EQ(Set("max-memory-increase", "0.1"), 0.1);
  GateThresholds thresholds;
  ASSERT_TRUE(SetThreshold("latency", "p90", &thresholds).ok());
  EXPECT_EQ(thresholds.latency, LatencyFigure::kP90);
  EXPECT_TRUE(thresholds.Empty());
}

TEST(SetThresholdTest, RejectsWhatItCannotRead) {
  EXPECT_EQ(SetError("max-bubble", "1.5"), "max-bubble: '1.5' is above 1 (100%)");
  EXPECT_EQ(SetError("max-memory-increase", "-5%"),
            "max-memory-increase: '-5%' is negative; limits are 0 or more");
  EXPECT_EQ(SetError("max-latency", "30"),
            "max-latency: '30' is not a time with its unit (us, ms or s)");
  EXPECT_EQ(SetError("max-memory", "3 apples"),
            "max-memory: '3 apples' is not bytes (40GiB, 512MiB, 2000000000)");
  EXPECT_EQ(SetError("max-bubble", ""),
            "max-bubble: '' is not a fraction (0.25) or a percentage (25%)");
  EXPECT_EQ(SetError("latency", "p99"), "latency: 'p99' is not p50, p90 or max");
  EXPECT_THAT(SetError("max-bubbles", "1"),
              ::testing::StartsWith("unknown threshold 'max-bubbles'"));
}

// An editor's UTF-8 byte-order mark is no part of the first key (it read "unknown threshold
// 'max-bubble'", the mark invisible in the message).
TEST(ParseGateConfigTest, AByteOrderMarkIsPassedOver) {
  absl::StatusOr<GateThresholds> parsed =
      ParseGateConfig("\xEF\xBB\xBFmax-bubble = 0.3\n", "gate.conf");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_DOUBLE_EQ(*parsed->max_bubble, 0.3);
}

TEST(ParseGateConfigTest, KeyValueLinesWithComments) {
  absl::StatusOr<GateThresholds> parsed = ParseGateConfig(
      "# gate\n\nmax-bubble = 30%  # absolute\r\n  max-memory-increase=5%\nlatency = max\n",
      "gate.conf");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_DOUBLE_EQ(*parsed->max_bubble, 0.30);
  EXPECT_DOUBLE_EQ(*parsed->max_memory_increase, 0.05);
  EXPECT_EQ(parsed->latency, LatencyFigure::kMax);
  EXPECT_FALSE(parsed->max_latency_us.has_value());

  EXPECT_EQ(ParseGateConfig("max-bubble = 0.3\nmax-bubble = 0.4\n", "g").status().message(),
            "g:2: max-bubble is given twice");
  EXPECT_EQ(ParseGateConfig("\n\nmax-bubble 0.3\n", "g").status().message(),
            "g:3: expected 'key = value', got 'max-bubble 0.3'");
  EXPECT_EQ(ParseGateConfig("max-latency = fast", "g").status().message(),
            "g:1: max-latency: 'fast' is not a time with its unit (us, ms or s)");
}

PipelineDiff PairedPipeline(double bubble_a, double bubble_b) {
  PipelineDiff pipeline;
  pipeline.index_a = 0;
  pipeline.index_b = 0;
  pipeline.bubble_fraction = Change{.a = bubble_a, .b = bubble_b, .spread = std::nullopt};
  pipeline.latency_p50_us = Change{.a = 1000.0, .b = 1050.0, .spread = 60.0};
  pipeline.latency_p90_us = Change{.a = 1000.0, .b = 1200.0, .spread = std::nullopt};
  StageDiff stage;
  stage.stage = 0;
  stage.rank_a = 0;
  stage.rank_b = 4;
  stage.peak_allocated_bytes = Change{.a = 1000.0, .b = 1100.0, .spread = std::nullopt};
  pipeline.stages.push_back(stage);
  stage.stage = 1;
  stage.peak_allocated_bytes = Change{.a = std::nullopt, .b = std::nullopt, .spread = std::nullopt};
  pipeline.stages.push_back(stage);
  return pipeline;
}

std::vector<std::string> Outcomes(const GateResult& result) {
  std::vector<std::string> outcomes;
  for (const Check& check : result.checks) {
    outcomes.push_back(absl::StrCat(std::string(ThresholdKey(check.kind)),
                                    check.stage.has_value() ? absl::StrCat(" s", *check.stage) : "",
                                    " ", std::string(CheckOutcomeName(check.outcome)),
                                    check.note.empty() ? "" : " (" + check.note + ")"));
  }
  return outcomes;
}

TEST(GateTest, LimitsMetExactlyPassAndMissingFiguresAreSkipped) {
  DiffResult diff;
  diff.pipelines.push_back(PairedPipeline(0.28, 0.30));
  GateThresholds thresholds;
  thresholds.max_bubble = 0.30;
  thresholds.max_bubble_increase = 0.02;
  thresholds.max_latency_increase = 0.05;
  thresholds.max_memory_increase = 0.10;
  const GateResult result = Gate(diff, thresholds);
  EXPECT_THAT(
      Outcomes(result),
      ElementsAre("max-bubble pass", "max-bubble-increase pass",
                  "max-latency-increase pass (within the iteration-to-iteration spread)",
                  "max-memory-increase s0 pass",
                  "max-memory-increase s1 skipped (the current run has no memory samples)"));
  EXPECT_TRUE(result.Passed());
  EXPECT_EQ(result.checks[3].rank, 4);

  thresholds.max_memory_increase = 0.0999;
  thresholds.max_bubble_increase = 0.0199;
  thresholds.latency = LatencyFigure::kP90;
  thresholds.max_latency_us = 1100.0;
  const GateResult stricter = Gate(diff, thresholds);
  EXPECT_THAT(
      Outcomes(stricter),
      ElementsAre("max-bubble pass", "max-bubble-increase fail", "max-latency fail",
                  "max-latency-increase fail", "max-memory-increase s0 fail",
                  "max-memory-increase s1 skipped (the current run has no memory samples)"));
  EXPECT_EQ(stricter.Count(CheckOutcome::kFail), 4);
  EXPECT_FALSE(stricter.Passed());
  EXPECT_EQ(stricter.checks[2].current, 1200.0);
}

TEST(GateTest, APipelineGoneFromTheCurrentRunFailsANewOneMeetsAbsoluteLimitsOnly) {
  DiffResult diff;
  PipelineDiff gone = PairedPipeline(0.2, 0.2);
  gone.pairing = Pairing::kOnlyA;
  gone.index_b.reset();
  gone.ranks_a = {4, 5};
  gone.bubble_fraction.b.reset();
  gone.stages.clear();
  PipelineDiff added;
  added.pairing = Pairing::kOnlyB;
  added.index_b = 1;
  added.ranks_b = {8, 9};
  added.bubble_fraction = Change{.a = std::nullopt, .b = 0.5, .spread = std::nullopt};
  diff.pipelines = {gone, added};
  GateThresholds thresholds;
  thresholds.max_bubble = 0.4;
  thresholds.max_bubble_increase = 0.1;
  const GateResult result = Gate(diff, thresholds);
  EXPECT_THAT(
      Outcomes(result),
      ElementsAre("max-bubble fail (the pipeline is not in the current run)",
                  "max-bubble-increase fail (the pipeline is not in the current run)",
                  "max-bubble fail", "max-bubble-increase skipped (the baseline has no bubble)"));
  EXPECT_THAT(
      result.notes,
      ElementsAre(
          "pipeline 0 (A only): ranks 4,5 are in the baseline but not in the current run",
          "pipeline 1 (B only): ranks 8,9 are new in the current run (absolute limits only)"));
  EXPECT_EQ(result.checks[0].pipeline, "pipeline 0 (A only)");
}

TEST(GateTest, AStageOneSideLacksIsNamedWhenItsChecksAreSkipped) {
  DiffResult diff;
  PipelineDiff pipeline = PairedPipeline(0.2, 0.2);
  pipeline.pairing = Pairing::kPosition;
  pipeline.stages[1].rank_a.reset();
  pipeline.stages[1].peak_allocated_bytes.b = 2000.0;
  diff.pipelines.push_back(pipeline);
  GateThresholds thresholds;
  thresholds.max_memory_increase = 0.5;
  thresholds.max_memory_bytes = 1500.0;
  EXPECT_THAT(Outcomes(Gate(diff, thresholds)),
              ElementsAre("max-memory s0 pass", "max-memory-increase s0 pass", "max-memory s1 fail",
                          "max-memory-increase s1 skipped (the baseline has no stage 1)"));
}

TEST(GateTest, EachStagesBubbleAgainstItsBaselineWhenAsked) {
  // Stage 0's bubble rises 0.30 -> 0.36 (6 points), stage 1's 0.30 -> 0.32 (2): a 5-point limit
  // fails stage 0 only; a stage the baseline lacks is skipped, saying so.
  DiffResult diff;
  PipelineDiff pipeline = PairedPipeline(0.2, 0.2);
  pipeline.stages[0].bubble_fraction = Change{.a = 0.30, .b = 0.36, .spread = std::nullopt};
  pipeline.stages[1].bubble_fraction = Change{.a = 0.30, .b = 0.32, .spread = std::nullopt};
  PipelineDiff grown = pipeline;
  grown.stages[1].rank_a.reset();
  grown.stages[1].bubble_fraction.a.reset();
  GateThresholds thresholds;
  thresholds.max_stage_bubble_increase = 0.05;
  diff.pipelines = {pipeline};
  EXPECT_THAT(Outcomes(Gate(diff, thresholds)), ElementsAre("max-stage-bubble-increase s0 fail",
                                                            "max-stage-bubble-increase s1 pass"));
  diff.pipelines = {grown};
  EXPECT_THAT(Outcomes(Gate(diff, thresholds)),
              ElementsAre("max-stage-bubble-increase s0 fail",
                          "max-stage-bubble-increase s1 skipped (the baseline has no stage 1)"));
  EXPECT_FALSE(thresholds.Empty());
}

TEST(GateTest, ARelativeLimitOnAZeroBaselineIsSkipped) {
  DiffResult diff;
  PipelineDiff pipeline = PairedPipeline(0.2, 0.2);
  pipeline.stages[0].peak_allocated_bytes.a = 0.0;
  diff.pipelines.push_back(pipeline);
  GateThresholds thresholds;
  thresholds.max_memory_increase = 0.05;
  thresholds.max_memory_bytes = 1050.0;
  EXPECT_THAT(
      Outcomes(Gate(diff, thresholds)),
      ElementsAre("max-memory s0 fail",
                  "max-memory-increase s0 skipped (the baseline is 0: no relative change)",
                  "max-memory s1 skipped (the current run has no memory samples)",
                  "max-memory-increase s1 skipped (the current run has no memory samples)"));
}

}  // namespace
}  // namespace bubblescope::compare
