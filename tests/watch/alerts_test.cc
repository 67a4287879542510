// The alert rules on sequences of iterations worked by hand: N in a row, a run broken in the
// middle, pipelines counted apart, a latency in nanoseconds, and each rule firing once.
#include "watch/alerts.h"

#include <cmath>
#include <optional>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace bubblescope::watch {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::SizeIs;

IterationReport Iteration(int32_t pipeline, int64_t step, double bubble,
                          std::optional<double> excess = std::nullopt, TimeNs window_ns = 0) {
  IterationReport report;
  report.pipeline = pipeline;
  report.step = step;
  report.analysed_unix_ns = 1000 * step;
  report.window_ns = window_ns;
  report.bubble_fraction = bubble;
  if (excess.has_value()) report.ideal_bubble_fraction = 0.1;
  report.excess_bubble_fraction = excess;
  return report;
}

TEST(AlertsTest, ThreeIterationsInARowAboveTheBubbleFireOnTheThird) {
  AlertTracker tracker({.bubble_above = 0.30, .for_iterations = 3});
  EXPECT_THAT(tracker.Observe(Iteration(0, 10, 0.312)), IsEmpty());
  EXPECT_THAT(tracker.Observe(Iteration(0, 11, 0.330)), IsEmpty());
  const std::vector<Alert> alerts = tracker.Observe(Iteration(0, 12, 0.351));
  ASSERT_THAT(alerts, SizeIs(1));
  EXPECT_EQ(alerts[0].pipeline, 0);
  EXPECT_EQ(alerts[0].rule, AlertRule::kBubble);
  EXPECT_EQ(alerts[0].threshold, 0.30);
  EXPECT_THAT(alerts[0].values, ElementsAre(0.312, 0.330, 0.351));
  EXPECT_EQ(alerts[0].first_step, 10);
  EXPECT_EQ(alerts[0].last_step, 12);
  EXPECT_EQ(alerts[0].analysed_unix_ns, 12000);
}

TEST(AlertsTest, AnIterationAtOrBelowTheThresholdStartsTheCountAgain) {
  AlertTracker tracker({.bubble_above = 0.30, .for_iterations = 2});
  EXPECT_THAT(tracker.Observe(Iteration(0, 1, 0.31)), IsEmpty());
  EXPECT_THAT(tracker.Observe(Iteration(0, 2, 0.30)), IsEmpty());  // equal is not above
  EXPECT_THAT(tracker.Observe(Iteration(0, 3, 0.35)), IsEmpty());  // 1 in a row again
  const std::vector<Alert> alerts = tracker.Observe(Iteration(0, 4, 0.40));
  ASSERT_THAT(alerts, SizeIs(1));
  EXPECT_THAT(alerts[0].values, ElementsAre(0.35, 0.40));
  EXPECT_EQ(alerts[0].first_step, 3);
  EXPECT_EQ(alerts[0].last_step, 4);
}

TEST(AlertsTest, PipelinesAreCountedApart) {
  AlertTracker tracker({.bubble_above = 0.20, .for_iterations = 2});
  // Interleaved as watch reports them: pipeline 1's low iteration does not break pipeline 0's
  // run, and pipeline 0's high ones do not add to pipeline 1's.
  EXPECT_THAT(tracker.Observe(Iteration(0, 5, 0.25)), IsEmpty());
  EXPECT_THAT(tracker.Observe(Iteration(1, 5, 0.10)), IsEmpty());
  const std::vector<Alert> first = tracker.Observe(Iteration(0, 6, 0.26));
  ASSERT_THAT(first, SizeIs(1));
  EXPECT_EQ(first[0].pipeline, 0);
  EXPECT_THAT(first[0].values, ElementsAre(0.25, 0.26));
  EXPECT_THAT(tracker.Observe(Iteration(1, 6, 0.21)), IsEmpty());  // pipeline 1: 1 in a row
  const std::vector<Alert> second = tracker.Observe(Iteration(1, 7, 0.22));
  ASSERT_THAT(second, SizeIs(1));
  EXPECT_EQ(second[0].pipeline, 1);
  EXPECT_EQ(second[0].first_step, 6);
  EXPECT_EQ(second[0].last_step, 7);
}

TEST(AlertsTest, LatencyIsComparedInNanoseconds) {
  AlertTracker tracker({.latency_above = 50'000'000, .for_iterations = 2});  // 50 ms
  EXPECT_THAT(tracker.Observe(Iteration(0, 1, 0.0, std::nullopt, 50'000'001)), IsEmpty());
  const std::vector<Alert> alerts = tracker.Observe(Iteration(0, 2, 0.0, std::nullopt, 61'250'000));
  ASSERT_THAT(alerts, SizeIs(1));
  EXPECT_EQ(alerts[0].rule, AlertRule::kLatency);
  EXPECT_EQ(alerts[0].threshold, 50'000'000.0);
  EXPECT_THAT(alerts[0].values, ElementsAre(50'000'001.0, 61'250'000.0));
}

TEST(AlertsTest, ALatencyOfExactlyTheThresholdDoesNotCross) {
  AlertTracker tracker({.latency_above = 50'000'000});
  EXPECT_THAT(tracker.Observe(Iteration(0, 1, 0.0, std::nullopt, 50'000'000)), IsEmpty());
  EXPECT_THAT(tracker.Observe(Iteration(0, 2, 0.0, std::nullopt, 50'000'001)), SizeIs(1));
}

TEST(AlertsTest, EachRuleFiresOncePerPipeline) {
  AlertTracker tracker({.bubble_above = 0.30});  // for_iterations 1
  EXPECT_THAT(tracker.Observe(Iteration(0, 1, 0.40)), SizeIs(1));
  // Still above, then below and above again: quiet for good on pipeline 0.
  EXPECT_THAT(tracker.Observe(Iteration(0, 2, 0.50)), IsEmpty());
  EXPECT_THAT(tracker.Observe(Iteration(0, 3, 0.10)), IsEmpty());
  EXPECT_THAT(tracker.Observe(Iteration(0, 4, 0.50)), IsEmpty());
  // Another pipeline has its own.
  EXPECT_THAT(tracker.Observe(Iteration(2, 4, 0.50)), SizeIs(1));
}

TEST(AlertsTest, AnIterationWithoutAnExcessEndsTheRun) {
  AlertTracker tracker({.excess_above = 0.05, .for_iterations = 2});
  EXPECT_THAT(tracker.Observe(Iteration(0, 1, 0.4, 0.06)), IsEmpty());
  EXPECT_THAT(tracker.Observe(Iteration(0, 2, 0.4, std::nullopt)), IsEmpty());  // no schedule
  EXPECT_THAT(tracker.Observe(Iteration(0, 3, 0.4, 0.07)), IsEmpty());          // 1 in a row again
  const std::vector<Alert> alerts = tracker.Observe(Iteration(0, 4, 0.4, 0.08));
  ASSERT_THAT(alerts, SizeIs(1));
  EXPECT_EQ(alerts[0].rule, AlertRule::kExcess);
  EXPECT_THAT(alerts[0].values, ElementsAre(0.07, 0.08));
  EXPECT_EQ(alerts[0].first_step, 3);
}

TEST(AlertsTest, RulesCrossingOnOneIterationFireTogetherInOrder) {
  AlertTracker tracker({.bubble_above = 0.30, .excess_above = 0.05, .latency_above = 1000});
  const std::vector<Alert> alerts = tracker.Observe(Iteration(0, 1, 0.40, 0.10, 2000));
  ASSERT_THAT(alerts, SizeIs(3));
  EXPECT_EQ(alerts[0].rule, AlertRule::kBubble);
  EXPECT_EQ(alerts[1].rule, AlertRule::kExcess);
  EXPECT_EQ(alerts[2].rule, AlertRule::kLatency);
}

TEST(AlertsTest, NoRuleNoAlert) {
  AlertTracker tracker({});
  EXPECT_THAT(tracker.Observe(Iteration(0, 1, 0.99, 0.9, 1'000'000'000)), IsEmpty());
}

TEST(AlertsTest, ANanBubbleDoesNotCross) {
  AlertTracker tracker({.bubble_above = 0.30, .for_iterations = 2});
  EXPECT_THAT(tracker.Observe(Iteration(0, 1, 0.40)), IsEmpty());
  EXPECT_THAT(tracker.Observe(Iteration(0, 2, std::nan(""))), IsEmpty());
  EXPECT_THAT(tracker.Observe(Iteration(0, 3, 0.40)), IsEmpty());
}

TEST(AlertsTest, OptionsAreValidated) {
  EXPECT_TRUE(ValidateAlertOptions({.bubble_above = 0.3, .for_iterations = 3}).ok());
  EXPECT_EQ(ValidateAlertOptions({.for_iterations = 0}).message(),
            "alert: iterations in a row must be 1 or more, not 0");
  EXPECT_EQ(ValidateAlertOptions({.latency_above = -1}).message(),
            "alert: the latency threshold must be 0 or more, not -1 ns");
  EXPECT_EQ(ValidateAlertOptions({.bubble_above = std::nan("")}).message(),
            "alert: the bubble threshold must be a finite fraction");
  // A tracker given 0 anyway counts runs of at least one iteration.
  AlertTracker tracker({.bubble_above = 0.3, .for_iterations = 0});
  EXPECT_THAT(tracker.Observe(Iteration(0, 1, 0.4)), SizeIs(1));
}

TEST(AlertsTest, RuleNames) {
  EXPECT_EQ(AlertRuleName(AlertRule::kBubble), "bubble");
  EXPECT_EQ(AlertRuleName(AlertRule::kExcess), "excess");
  EXPECT_EQ(AlertRuleName(AlertRule::kLatency), "latency");
}

}  // namespace
}  // namespace bubblescope::watch
