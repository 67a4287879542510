// Reading analyze's JSON report: the figures read from a hand-written report (a newer minor
// version, unknown members passed over), and errors that name the file and the byte.
#include "compare/report_reader.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace bubblescope::compare {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

// Two pipelines; findings go to the pipeline holding their first rank; nulls stay unknown;
// members this reader does not know (a newer minor's) are passed over, nested ones too; the
// schema may come after the figures.
constexpr char kReport[] = R"({
  "tool": {"name": "bubblescope", "version": "9.9", "extra": [1, {"a": null}]},
  "future_member": {"pipelines": "not these"},
  "pipelines": [
    {"ranks": [2, 0, 1], "stages": 3, "microbatches": 6, "virtual_stages": 1, "schedule": "1f1b",
     "bubble_fraction": 0.4, "theoretical_bubble_fraction": 0.25, "excess_bubble_fraction": 0.15,
     "latency_us": {"p50": 1000.5, "p90": 1100, "max": 1200, "p99": 1300},
     "complete_iterations": 2,
     "iterations": [{"step": 0, "complete": true, "window_us": 1000.5, "bubble_fraction": 0.41},
                    {"step": 1, "complete": false, "window_us": 10, "bubble_fraction": 0.9}],
     "rank_stats": [{"rank": 2, "stage": 0, "bubble_fraction": 0.3, "peak_allocated_bytes": 2048,
                     "peak_reserved_bytes": null, "fwd_us_per_microbatch": 10.5,
                     "bwd_us_per_microbatch": 21, "wgt_us_per_microbatch": null, "new": 1}],
     "links": [{"src": 2, "dst": 0, "transfers": 4, "transfer_us_median": 7.25,
                "gbps_median": null, "wait_us": 3, "slow": true}]},
    {"ranks": [3, 4], "stages": null, "microbatches": null, "virtual_stages": null,
     "schedule": null, "bubble_fraction": 0.1, "theoretical_bubble_fraction": null,
     "excess_bubble_fraction": null, "latency_us": {"p50": 0, "p90": 0, "max": 0}}
  ],
  "findings": [
    {"kind": "comm_wait", "severity": "warning", "message": "m1", "ranks": [4], "cost_us": 5},
    {"kind": "stage_imbalance", "severity": "warning", "message": "m2", "ranks": [1, 2],
     "cost_us": 3.5}
  ],
  "schema": "bubblescope.analyze/1.3"
})";

TEST(ReadAnalyzeReportTest, ReadsTheFiguresAndPassesOverUnknownMembers) {
  absl::StatusOr<RunFigures> run = ReadAnalyzeReport("r.json", kReport);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->source, "r.json");
  EXPECT_EQ(run->schema_major, 1);
  EXPECT_EQ(run->schema_minor, 3);
  EXPECT_EQ(run->tool_version, "9.9");
  ASSERT_EQ(run->pipelines.size(), 2u);
  const PipelineFigures& first = run->pipelines[0];
  EXPECT_THAT(first.ranks, ElementsAre(2, 0, 1));
  EXPECT_EQ(first.stages, 3);
  EXPECT_EQ(first.microbatches, 6);
  EXPECT_EQ(first.schedule, "1f1b");
  EXPECT_EQ(first.bubble_fraction, 0.4);
  EXPECT_EQ(first.theoretical_bubble_fraction, 0.25);
  EXPECT_EQ(first.latency_p50_us, 1000.5);
  EXPECT_EQ(first.latency_max_us, 1200.0);
  EXPECT_EQ(first.complete_iterations, 2);
  ASSERT_EQ(first.iterations.size(), 2u);
  EXPECT_FALSE(first.iterations[1].complete);
  ASSERT_EQ(first.stage_figures.size(), 1u);
  EXPECT_EQ(first.stage_figures[0].stage, 0);
  EXPECT_EQ(first.stage_figures[0].peak_allocated_bytes, 2048.0);
  EXPECT_FALSE(first.stage_figures[0].peak_reserved_bytes.has_value());
  EXPECT_EQ(first.stage_figures[0].forward_us, 10.5);
  EXPECT_FALSE(first.stage_figures[0].weight_grad_us.has_value());
  ASSERT_EQ(first.links.size(), 1u);
  EXPECT_EQ(first.links[0].transfer_us_median, 7.25);
  EXPECT_FALSE(first.links[0].gbps_median.has_value());
  EXPECT_TRUE(first.links[0].slow);
  ASSERT_EQ(first.findings.size(), 1u);
  EXPECT_EQ(first.findings[0].kind, "stage_imbalance");
  const PipelineFigures& second = run->pipelines[1];
  EXPECT_FALSE(second.stages.has_value());
  EXPECT_FALSE(second.schedule.has_value());
  EXPECT_FALSE(second.excess_bubble_fraction.has_value());
  ASSERT_EQ(second.findings.size(), 1u);
  EXPECT_EQ(second.findings[0].message, "m1");
}

std::string ErrorOf(std::string_view json) {
  absl::StatusOr<RunFigures> run = ReadAnalyzeReport("r.json", json);
  return run.ok() ? "ok" : std::string(run.status().message());
}

TEST(ReadAnalyzeReportTest, ErrorsNameTheFileAndTheByte) {
  EXPECT_EQ(ErrorOf(R"({"schema": "bubblescope.analyze/2", "pipelines": []})"),
            "r.json: byte 11: schema \"bubblescope.analyze/2\" has major version 2; this "
            "bubblescope reads bubblescope.analyze/1.x (a report of another major version needs "
            "the bubblescope that wrote it)");
  EXPECT_EQ(ErrorOf(R"({"schema": "bubblescope.analyze/x", "pipelines": []})"),
            "r.json: byte 11: schema \"bubblescope.analyze/x\" is not "
            "bubblescope.analyze/MAJOR[.MINOR]");
  EXPECT_EQ(ErrorOf(R"({"schema": "bubblescope.analyze/1", "pipelines": [{"ranks": [0, "1"]}]})"),
            "r.json: byte 64: \"ranks\" is a string, expected a whole number in range");
  EXPECT_EQ(ErrorOf(R"({"schema": "bubblescope.analyze/1", "pipelines": {}})"),
            "r.json: byte 49: \"pipelines\" is an object, expected an array");
  EXPECT_EQ(ErrorOf(R"(  {"pipelines": []})"),
            "r.json: byte 2: no \"schema\" member: not a bubblescope analyze report");
  EXPECT_EQ(ErrorOf(R"({"schema": "bubblescope.analyze/1"})"),
            "r.json: byte 0: no \"pipelines\" member");
  EXPECT_EQ(ErrorOf("[1, 2]"), "r.json: byte 0: not a JSON object");
  EXPECT_THAT(ErrorOf(R"({"schema": "bubblescope.analyze/1", "pipelines": []} {})"),
              HasSubstr("r.json: byte 53: more JSON after"));
  EXPECT_THAT(ErrorOf(R"({"schema": "bubblescope.analyze/1", "pipelines": [{"ranks": [0)"),
              HasSubstr("r.json: byte "));
  EXPECT_EQ(ErrorOf("{\"schema\": \"bubblescope.analyze/1\", \"x\": \"\xff\", \"pipelines\": []}"),
            "r.json: byte 42: invalid UTF-8");
  EXPECT_THAT(ErrorOf(""), HasSubstr("r.json: byte 0: "));
}

// A string the error quotes is one line however the report escaped it (found by
// report_file_fuzzer: a schema holding "\n").
TEST(ReadAnalyzeReportTest, AQuotedStringKeepsTheErrorOnOneLine) {
  EXPECT_EQ(ErrorOf(R"({"schema": "bubblescope.\nalyze/1.2", "pipelines": []})"),
            "r.json: byte 11: schema \"bubblescope. alyze/1.2\" is not "
            "bubblescope.analyze/MAJOR[.MINOR]");
  EXPECT_EQ(ErrorOf(R"({"schema": "bubblescope.analyze/1", "pipelines": [{"whatif_model": )"
                    R"({"schedule": "1f1b\r\u001b[2J"}}]})"),
            "r.json: byte 80: \"whatif_model.schedule\" is \"1f1b \\x1b[2J\", not a schedule "
            "this bubblescope simulates");
}

// Each message says what is wrong and where (Hardening III, item 8): NaN is no JSON number
// (it read "is a number, expected a number"); a figure out of range is quoted as written (it
// read "is 1, outside 0 to 1"); a report cut short says so (not "byte 0: not a JSON object");
// a raw control character is named at its own byte (simdjson's position is past it); a UTF-8
// byte-order mark is passed over, the offsets still the file's.
TEST(ReadAnalyzeReportTest, MessagesSayWhatIsWrongWhere) {
  constexpr char kHead[] =
      R"({"schema": "bubblescope.analyze/1", "pipelines": [{"bubble_fraction": )";
  const size_t value_at = std::string(kHead).size();
  EXPECT_EQ(ErrorOf(std::string(kHead) + "NaN}]}"),
            "r.json: byte " + std::to_string(value_at) +
                ": \"bubble_fraction\" is NaN, not a JSON value, expected a number");
  EXPECT_EQ(ErrorOf(std::string(kHead) + "1.00000001}]}"),
            "r.json: byte " + std::to_string(value_at) +
                ": \"bubble_fraction\" is 1.00000001, outside 0 to 1");
  const std::string cut = R"({"schema": "bubblescope.analyze/1", "pipelines": [{"ranks": [0, 1)";
  EXPECT_THAT(ErrorOf(cut), Not(HasSubstr("not a JSON object")));
  EXPECT_EQ(ErrorOf(cut), "r.json: byte " + std::to_string(cut.size()) +
                              ": the document ends early (cut short?)");
  const std::string control =
      "{\"schema\": \"bubblescope.analyze/1\", \"x\": \"a\x01b\", "
      "\"pipelines\": []}";
  EXPECT_EQ(ErrorOf(control),
            "r.json: byte 43: raw control character inside a string (JSON writes it escaped, as "
            "\\u00XX)");
  EXPECT_EQ(ErrorOf("\xEF\xBB\xBF" + std::string(kHead) + "2}]}"),
            "r.json: byte " + std::to_string(value_at + 3) +
                ": \"bubble_fraction\" is 2, outside 0 to 1");
  absl::StatusOr<RunFigures> marked =
      ReadAnalyzeReport("r.json", "\xEF\xBB\xBF" + std::string(kReport));
  ASSERT_TRUE(marked.ok()) << marked.status();
  ASSERT_EQ(marked->pipelines.size(), 2u);
  EXPECT_DOUBLE_EQ(marked->pipelines[0].bubble_fraction, 0.4);
}

// A report cut anywhere is an error naming the file, never a crash (run under the sanitizers).
TEST(ReadAnalyzeReportTest, EveryCutOfAReportIsAnErrorNotACrash) {
  const std::string report = kReport;
  for (size_t length = 0; length < report.size(); ++length) {
    absl::StatusOr<RunFigures> run = ReadAnalyzeReport("r.json", report.substr(0, length));
    ASSERT_FALSE(run.ok()) << length;
    ASSERT_THAT(std::string(run.status().message()), ::testing::StartsWith("r.json: byte "))
        << length;
  }
}

}  // namespace
}  // namespace bubblescope::compare
