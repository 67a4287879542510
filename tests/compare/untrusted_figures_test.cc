// Figures a comparison must not trust: a report whose numbers lie outside what they measure is
// refused where the number stands, a pipeline without a complete iteration has no bubble or
// latency to compare, and the gate calls a check on such a figure an error, never a pass.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "compare/diff.h"
#include "compare/gate.h"
#include "compare/report_reader.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace bubblescope::compare {
namespace {

using ::testing::HasSubstr;

// A one-pipeline report whose pipeline members are `members` (after the ranks).
std::string Report(const std::string& members) {
  return absl::StrCat(R"({"schema": "bubblescope.analyze/1.0", "pipelines": [{"ranks": [0, 1], )",
                      members, "}]}");
}

constexpr char kFigures[] =
    R"("bubble_fraction": 0.25, "latency_us": {"p50": 100, "p90": 110, "max": 120}, )"
    R"("complete_iterations": 2)";

std::string ErrorOf(const std::string& json) {
  absl::StatusOr<RunFigures> run = ReadAnalyzeReport("r.json", json);
  return run.ok() ? "ok" : std::string(run.status().message());
}

TEST(ReportRangeTest, EachFigureIsRefusedOutsideTheRangeOfWhatItMeasures) {
  EXPECT_EQ(ErrorOf(Report(kFigures)), "ok");
  // A bubble of -750% would pass any gate.
  const std::string negative = Report(R"("bubble_fraction": -7.5)");
  EXPECT_EQ(ErrorOf(negative), absl::StrCat("r.json: byte ", negative.find("-7.5"),
                                            ": \"bubble_fraction\" is -7.5, outside 0 to 1"));
  EXPECT_THAT(ErrorOf(Report(R"("bubble_fraction": 1.5)")), HasSubstr("outside 0 to 1"));
  EXPECT_THAT(ErrorOf(Report(R"("excess_bubble_fraction": -2)")), HasSubstr("outside -1 to 1"));
  EXPECT_EQ(ErrorOf(Report(absl::StrCat(kFigures, R"(, "excess_bubble_fraction": -0.27)"))), "ok");
  // 1.2e20 us is past the model's time range (2^62 ns, 4.6e15 us).
  EXPECT_THAT(ErrorOf(Report(R"("iterations": [{"step": 1, "window_us": 1.2e20}])")),
              HasSubstr("\"window_us\" is 1.2e20, outside 0 to 4.6e15 us"));  // as written
  EXPECT_THAT(ErrorOf(Report(R"("latency_us": {"p50": -1})")), HasSubstr("outside 0 to 4.6e15"));
  EXPECT_THAT(ErrorOf(Report(R"("rank_stats": [{"rank": 0, "peak_allocated_bytes": 1e17}])")),
              HasSubstr("outside 0 to 2^53 bytes"));
  EXPECT_THAT(ErrorOf(Report(R"("links": [{"src": 0, "dst": 1, "gbps_median": -3}])")),
              HasSubstr("\"gbps_median\" is -3"));
  EXPECT_THAT(ErrorOf(Report(R"("complete_iterations": -1)")),
              HasSubstr("a whole number not below 0"));
}

TEST(ReportRangeTest, AWhatIfModelWithMemoryPast2To53BytesIsRefused) {
  const std::string model = Report(
      R"("whatif_model": {"schedule": "1f1b", "p": 1, "m": 1, "v": 1, "measured_iteration_ns": 10,)"
      R"( "measured_bubble_fraction": 0, "stages": [{"rank": 0, "forward_ns": 1, "backward_ns": 2,)"
      R"( "memory_floor_bytes": 0, "memory_peak_bytes": 9223372036854775807}]})");
  EXPECT_THAT(ErrorOf(model), HasSubstr("has a memory figure outside 0 to 2^53 bytes"));
}

TEST(NoCompleteIterationTest, TheReportsReasonIsReadAndAZeroCountImpliesOne) {
  absl::StatusOr<RunFigures> run = ReadAnalyzeReport(
      "r.json", Report(absl::StrCat(kFigures, R"(, "no_complete_iteration": "why")")));
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->pipelines[0].no_complete_iteration, "why");
  run = ReadAnalyzeReport("r.json", Report(R"("bubble_fraction": 0, "complete_iterations": 0,)"
                                           R"( "latency_us": {"p50": 0, "p90": 0, "max": 0})"));
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->pipelines[0].no_complete_iteration, "the report counts 0 complete iterations");
  run = ReadAnalyzeReport("r.json", Report(kFigures));
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->pipelines[0].no_complete_iteration, "");
}

// A current run without a complete iteration: its 0% bubble is no figure, so both bubble checks
// and the latency check are errors, the memory check (which needs no iteration) is judged, and
// the verdict is undecided rather than a pass.
TEST(NoCompleteIterationTest, TheGateCallsAFigureItCannotComputeAnError) {
  const std::string base = Report(
      absl::StrCat(kFigures, R"(, "rank_stats": [{"rank": 0, "stage": 0, "bubble_fraction": 0.2,)",
                   R"( "peak_allocated_bytes": 1000}])"));
  const std::string none = Report(
      R"("bubble_fraction": 0, "latency_us": {"p50": 0, "p90": 0, "max": 0},)"
      R"( "complete_iterations": 0, "no_complete_iteration": "rank 1 has no step range",)"
      R"( "rank_stats": [{"rank": 0, "stage": 0, "bubble_fraction": 0, "peak_allocated_bytes": 1000}])");
  absl::StatusOr<RunFigures> baseline = ReadAnalyzeReport("base.json", base);
  absl::StatusOr<RunFigures> current = ReadAnalyzeReport("cur.json", none);
  ASSERT_TRUE(baseline.ok() && current.ok());
  const DiffResult diff = Diff(*baseline, *current);
  ASSERT_EQ(diff.pipelines.size(), 1u);
  EXPECT_FALSE(diff.pipelines[0].bubble_fraction.b.has_value());
  EXPECT_FALSE(diff.pipelines[0].latency_p50_us.b.has_value());
  EXPECT_EQ(diff.pipelines[0].no_complete_iteration_b, "rank 1 has no step range");
  GateThresholds thresholds;
  thresholds.max_bubble = 0.3;
  thresholds.max_bubble_increase = 0.02;
  thresholds.max_stage_bubble_increase = 0.02;
  thresholds.max_latency_us = 1e6;
  thresholds.max_memory_increase = 0.05;
  const GateResult result = Gate(diff, thresholds);
  ASSERT_EQ(result.checks.size(), 5u);
  EXPECT_EQ(result.Count(CheckOutcome::kError), 4);
  EXPECT_EQ(result.Count(CheckOutcome::kPass), 1);  // the memory check
  EXPECT_EQ(result.checks[0].note,
            "no bubble can be computed: no complete iteration in the current run (rank 1 has no "
            "step range)");
  EXPECT_TRUE(result.Undecided());
  EXPECT_FALSE(result.Passed());
  // The same run as the baseline: only the checks against the baseline need its figures.
  const GateResult reversed = Gate(Diff(*current, *baseline), thresholds);
  EXPECT_EQ(reversed.Count(CheckOutcome::kError), 2);  // bubble and stage-bubble increase
  EXPECT_THAT(reversed.checks[1].note, HasSubstr("no complete iteration in the baseline"));
}

// A figure the report does not hold is no figure: read as 0, a pipeline without its bubble or
// latency passed `gate --max-bubble 0.3 --max-latency 10ms` and showed in `diff` as -39.2 points.
// Each missing member is an error that names it and the object it belongs to.
TEST(MissingFigureTest, AMissingFigureIsAnErrorNamingTheMemberNeverAZero) {
  struct Case {
    std::string report;
    std::string error;
  };
  const std::string latency = R"("latency_us": {"p50": 100, "p90": 110, "max": 120})";
  const std::string no_bubble = Report(latency);
  const std::string empty_latency = Report(R"("bubble_fraction": 0.25, "latency_us": {})");
  const std::string no_p90 =
      Report(R"("bubble_fraction": 0.25, "latency_us": {"p50": 100, "max": 120})");
  const std::string no_latency = Report(R"("bubble_fraction": 0.25)");
  const std::string no_pipeline_member =
      R"({"schema": "bubblescope.analyze/1.0", "pipelines": [{}]})";
  const std::string stage_without_bubble =
      Report(absl::StrCat(kFigures, R"(, "rank_stats": [{"rank": 0, "stage": 0}])"));
  const std::string iteration_without_window = Report(absl::StrCat(
      kFigures, R"(, "iterations": [{"step": 0, "complete": true, "bubble_fraction": 0.2}])"));
  const std::string link_without_wait =
      Report(absl::StrCat(kFigures, R"(, "links": [{"src": 0, "dst": 1}])"));
  const std::string finding_without_cost =
      absl::StrCat(Report(kFigures).substr(0, Report(kFigures).size() - 1),
                   R"(, "findings": [{"kind": "comm_wait", "ranks": [0]}]})");
  const std::string why = " (analyze always writes it; a missing figure is never read as 0)";
  auto at = [](const std::string& report, std::string_view object) {
    return absl::StrCat("r.json: byte ", report.find(object), ": ");
  };
  for (const Case& missing : std::vector<Case>{
           {no_bubble, at(no_bubble, "{\"ranks") + "pipelines[0] has no \"bubble_fraction\"" + why},
           {empty_latency,
            at(empty_latency, "{}") + "pipelines[0].latency_us has no \"p50\"" + why},
           {no_p90, at(no_p90, "{\"p50") + "pipelines[0].latency_us has no \"p90\"" + why},
           {no_latency, at(no_latency, "{\"ranks") + "pipelines[0] has no \"latency_us\"" + why},
           {no_pipeline_member,
            at(no_pipeline_member, "{}") + "pipelines[0] has no \"bubble_fraction\"" + why},
           {stage_without_bubble, at(stage_without_bubble, "{\"rank\"") +
                                      "pipelines[0].rank_stats[0] has no \"bubble_fraction\"" +
                                      why},
           {iteration_without_window, at(iteration_without_window, "{\"step") +
                                          "pipelines[0].iterations[0] has no \"window_us\"" + why},
           {link_without_wait,
            at(link_without_wait, "{\"src") + "pipelines[0].links[0] has no \"wait_us\"" + why},
           {finding_without_cost,
            at(finding_without_cost, "{\"kind") + "findings[0] has no \"cost_us\"" + why}}) {
    EXPECT_EQ(ErrorOf(missing.report), missing.error) << missing.report;
  }
}

TEST(SetThresholdRangeTest, ALimitPastTheDoubleRangeIsRefused) {
  GateThresholds thresholds;
  // 10^300 is a finite double; times a GiB it is not.
  const std::string huge = "1" + std::string(300, '0') + "GiB";
  const absl::Status status = SetThreshold("max-memory", huge, &thresholds);
  EXPECT_EQ(status.message(), "max-memory: '" + huge + "' is out of range");
  EXPECT_FALSE(SetThreshold("max-bubble", "nan", &thresholds).ok());
  EXPECT_FALSE(SetThreshold("max-latency", "infms", &thresholds).ok());
}

}  // namespace
}  // namespace bubblescope::compare
