// watch's lines worked by hand: the terminal line's fields and their alignment, the JSON line's
// members, window_us and bubble_fraction written as analyze writes iterations[], the notices
// and the alerts.
#include "report/watch_lines.h"

#include <cmath>
#include <string>
#include <vector>

#include "analysis/bubble.h"
#include "compare/report_schema.h"
#include "gtest/gtest.h"
#include "report/iteration_report_fixtures.h"
#include "text/json_writer.h"

namespace bubblescope {
namespace {

using testing::Stage;
using watch::Alert;
using watch::AlertRule;
using watch::IterationReport;
using watch::StageIteration;

// Pipeline 0's step 12: 48.31 ms, bubble 31.4% against 25.2% for the schedule alone, stage 2
// (rank 2) the slowest.
IterationReport Step12() {
  IterationReport report;
  report.pipeline = 0;
  report.step = 12;
  report.analysed_unix_ns = 1765138000123456789;
  report.window_ns = 48'310'000;
  report.bubble_fraction = 0.314;
  report.ideal_bubble_fraction = 0.252;
  report.excess_bubble_fraction = 0.062;
  report.slowest_stage = 2;
  report.top_cause = "stage_imbalance";
  StageIteration stage0 = Stage(0, 0, 30'000'500, 18'309'499);
  stage0.split.in_stage_comm = 1;
  stage0.split.fill = 2'000'000;
  stage0.split.drain = 10'000'000;
  stage0.split.stall = 6'309'499;
  stage0.split.comm_wait = 309'499;
  stage0.split.empty = 6'000'000;
  report.stages = {stage0, Stage(1, 4, 31'000'000, 17'310'000),
                   Stage(2, 2, 33'140'000, 15'170'000)};
  return report;
}

TEST(WatchLinesTest, IterationTextSpellsEachFigureAsAnalyzeDoes) {
  EXPECT_EQ(IterationText(Step12()),
            "pipeline 0    step      12  bubble  31.4%  excess   +6.2 pts  latency     48.310 ms  "
            "slowest stage 2 (rank 2)      cause stage_imbalance");
}

TEST(WatchLinesTest, IterationTextWithoutScheduleSlowestStageOrCause) {
  IterationReport report;
  report.pipeline = 1;
  report.step = 1234;
  report.window_ns = 123'456'789;  // 123456.789 us -> 123.457 ms
  report.bubble_fraction = 0.05;
  report.slowest_stage = -1;
  EXPECT_EQ(IterationText(report),
            "pipeline 1    step    1234  bubble   5.0%  excess        n/a  latency    123.457 ms  "
            "slowest -                     cause -");
}

TEST(WatchLinesTest, SuccessiveLinesAlign) {
  IterationReport other = Step12();
  other.pipeline = 17;
  other.step = 100000;
  other.window_ns = 1'234'567'891;  // 1234.568 ms
  other.bubble_fraction = 1.0;
  other.excess_bubble_fraction = -0.125;  // "-12.5 pts"
  other.slowest_stage = 1;
  const std::string a = IterationText(Step12());
  const std::string b = IterationText(other);
  for (const char* field :
       {"  step ", "  bubble ", "  excess ", "  latency ", "  slowest ", "  cause "}) {
    EXPECT_EQ(a.find(field), b.find(field)) << field << "\n" << a << "\n" << b;
  }
  EXPECT_NE(b.find("excess  -12.5 pts"), std::string::npos) << b;
  EXPECT_NE(b.find("slowest stage 1 (rank 4)"), std::string::npos) << b;
}

TEST(WatchLinesTest, ASlowestStageWithoutAKnownRankIsNamedAlone) {
  IterationReport report = Step12();
  report.stages[2].rank = -1;
  EXPECT_NE(IterationText(report).find("slowest stage 2               cause"), std::string::npos)
      << IterationText(report);
}

TEST(WatchLinesTest, IterationJsonHasEveryMemberOnOneLine) {
  const absl::StatusOr<std::string> line = IterationJson(Step12());
  ASSERT_TRUE(line.ok()) << line.status();
  EXPECT_EQ(*line,
            "{\"type\":\"iteration\",\"pipeline\":0,\"step\":12,\"bubble_fraction\":0.314,"
            "\"ideal_bubble_fraction\":0.252,\"excess_bubble_fraction\":0.062,"
            "\"window_us\":48310,\"slowest_stage\":2,\"top_cause\":\"stage_imbalance\","
            "\"analysed_unix_ns\":1765138000123456789,\"stages\":["
            "{\"stage\":0,\"rank\":0,\"compute_us\":30000.5,\"in_stage_comm_us\":0.001,"
            "\"idle_us\":18309.499,\"fill_us\":2000,\"drain_us\":10000,\"comm_wait_us\":309.499,"
            "\"empty_us\":6000},"
            "{\"stage\":1,\"rank\":4,\"compute_us\":31000,\"in_stage_comm_us\":0,"
            "\"idle_us\":17310,\"fill_us\":0,\"drain_us\":0,\"comm_wait_us\":0,\"empty_us\":0},"
            "{\"stage\":2,\"rank\":2,\"compute_us\":33140,\"in_stage_comm_us\":0,"
            "\"idle_us\":15170,\"fill_us\":0,\"drain_us\":0,\"comm_wait_us\":0,\"empty_us\":0}]}");
}

TEST(WatchLinesTest, IterationJsonWritesNullWithoutScheduleSlowestStageOrCause) {
  IterationReport report;
  report.step = 3;
  report.window_ns = 7;
  report.bubble_fraction = 0.0;
  const absl::StatusOr<std::string> line = IterationJson(report);
  ASSERT_TRUE(line.ok()) << line.status();
  EXPECT_EQ(*line,
            "{\"type\":\"iteration\",\"pipeline\":0,\"step\":3,\"bubble_fraction\":0,"
            "\"ideal_bubble_fraction\":null,\"excess_bubble_fraction\":null,\"window_us\":0.007,"
            "\"slowest_stage\":null,\"top_cause\":null,\"analysed_unix_ns\":0,\"stages\":[]}");
}

// The value a member holds in a one-line JSON text: what follows "key": up to the next , or }.
std::string MemberText(const std::string& json, const std::string& key) {
  const std::string quoted = "\"" + key + "\":";
  const size_t at = json.find(quoted);
  if (at == std::string::npos) return "(no " + key + ")";
  const size_t begin = at + quoted.size();
  return json.substr(begin, json.find_first_of(",}", begin) - begin);
}

TEST(WatchLinesTest, WindowAndBubbleAreWrittenAsAnalyzeWritesIterations) {
  // Figures whose spelling a second formatter would get wrong: a window with a nanosecond part
  // and a bubble with no short decimal (0.1 + 0.2 is not the double nearest 0.3).
  bubble::IterationFigures figures;
  figures.number = 12;
  figures.complete = true;
  figures.window_start = 5'000'000'000;
  figures.window_end = 5'000'000'000 + 48'310'001;
  figures.bubble_fraction = 0.1 + 0.2;
  // analyze --format json's iterations[] (report/pipeline_report.cc writes them so).
  JsonWriter analyze;
  compare::schema::WriteObjects(compare::schema::kIterationFields, {figures}, analyze);
  const absl::StatusOr<std::string> iterations = analyze.Finish();
  ASSERT_TRUE(iterations.ok()) << iterations.status();

  IterationReport report;
  report.step = figures.number;
  report.window_ns = figures.window();
  report.bubble_fraction = figures.bubble_fraction;
  const absl::StatusOr<std::string> line = IterationJson(report);
  ASSERT_TRUE(line.ok()) << line.status();

  EXPECT_EQ(MemberText(*iterations, "window_us"), "48310.001");
  EXPECT_EQ(MemberText(*iterations, "bubble_fraction"), "0.30000000000000004");
  for (const char* key : {"step", "window_us", "bubble_fraction"})
    EXPECT_EQ(MemberText(*line, key), MemberText(*iterations, key)) << key;
}

TEST(WatchLinesTest, ANanBubbleIsAnErrorNotBrokenJson) {
  IterationReport report = Step12();
  report.bubble_fraction = std::nan("");
  report.excess_bubble_fraction = std::nan("");
  EXPECT_FALSE(IterationJson(report).ok());
}

TEST(WatchLinesTest, NoticesAreOneLineAndEscaped) {
  const watch::WatchNotice notice{.analysed_unix_ns = 42,
                                  .text = "rank 3's file \"r3.json\" was cut\nat byte 10"};
  EXPECT_EQ(NoticeText(notice), "notice: rank 3's file \"r3.json\" was cut at byte 10");
  const absl::StatusOr<std::string> line = NoticeJson(notice);
  ASSERT_TRUE(line.ok()) << line.status();
  EXPECT_EQ(*line,
            "{\"type\":\"notice\",\"text\":\"rank 3's file \\\"r3.json\\\" was cut\\nat byte "
            "10\",\"analysed_unix_ns\":42}");
}

Alert BubbleAlert() {
  return {.pipeline = 0,
          .rule = AlertRule::kBubble,
          .threshold = 0.30,
          .values = {0.312, 0.330, 0.351},
          .first_step = 10,
          .last_step = 12,
          .analysed_unix_ns = 99};
}

TEST(WatchLinesTest, AlertTextNamesTheRuleTheRunAndItsFigures) {
  EXPECT_EQ(AlertText(BubbleAlert()),
            "ALERT pipeline 0: bubble above 30.0% for 3 iterations in a row (steps 10-12: 31.2% "
            "33.0% 35.1%)");
  Alert excess = BubbleAlert();
  excess.pipeline = 2;
  excess.rule = AlertRule::kExcess;
  excess.threshold = 0.05;
  excess.values = {0.062};
  excess.first_step = excess.last_step = 7;
  EXPECT_EQ(AlertText(excess),
            "ALERT pipeline 2: excess above +5.0 pts for 1 iteration (step 7: +6.2 pts)");
  Alert latency = BubbleAlert();
  latency.rule = AlertRule::kLatency;
  latency.threshold = 50'000'000.0;
  latency.values = {50'000'001.0, 61'250'000.0};
  latency.first_step = 4;
  latency.last_step = 5;
  EXPECT_EQ(AlertText(latency),
            "ALERT pipeline 0: latency above 50.000 ms for 2 iterations in a row (steps 4-5: "
            "50.000 ms 61.250 ms)");
}

TEST(WatchLinesTest, AlertJsonWritesFractionsAsSuchAndLatenciesInMicroseconds) {
  const absl::StatusOr<std::string> bubble = AlertJson(BubbleAlert());
  ASSERT_TRUE(bubble.ok()) << bubble.status();
  EXPECT_EQ(*bubble,
            "{\"type\":\"alert\",\"pipeline\":0,\"rule\":\"bubble\",\"threshold\":0.3,"
            "\"iterations\":3,\"first_step\":10,\"last_step\":12,"
            "\"values\":[0.312,0.33,0.351],\"analysed_unix_ns\":99}");
  Alert latency = BubbleAlert();
  latency.rule = AlertRule::kLatency;
  latency.threshold = 50'000'000.0;
  latency.values = {50'000'001.0, 61'250'000.0};
  const absl::StatusOr<std::string> line = AlertJson(latency);
  ASSERT_TRUE(line.ok()) << line.status();
  EXPECT_EQ(*line,
            "{\"type\":\"alert\",\"pipeline\":0,\"rule\":\"latency\",\"threshold_us\":50000,"
            "\"iterations\":2,\"first_step\":10,\"last_step\":12,"
            "\"values_us\":[50000.001,61250],\"analysed_unix_ns\":99}");
}

}  // namespace
}  // namespace bubblescope
