#include "report/summary_report.h"

#include <sstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "simdjson.h"

namespace bubblescope {
namespace {

using rank_summary::RankFigures;
using rank_summary::Result;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

Result TwoRanks() {
  Result result;
  RankFigures gpu;
  gpu.rank = 0;
  gpu.source_path = "/data/rank0.json";
  gpu.span = 1234567;
  gpu.compute = 1000000;
  gpu.comm = 200000;
  gpu.memcpy = 4500;
  gpu.idle = 30067;
  gpu.kernels = 10;
  gpu.comm_ops = 3;
  gpu.memcpys = 2;
  gpu.steps = 1;
  gpu.peak_allocated_bytes = 1610612736;  // 1.5 GiB
  gpu.peak_reserved_bytes = 2147483648;   // 2 GiB
  result.ranks.push_back(gpu);

  RankFigures cpu;
  cpu.rank = 1;
  cpu.source_path = "/data/r\xC3\xA4nk1.json";
  cpu.cpu_timeline = true;
  cpu.span = 2000000000;
  cpu.compute = 1500000001;
  cpu.idle = 499999999;
  cpu.kernels = 7;
  cpu.import_stats.Bump(ImportCounter::kNegativeDuration, 100);
  cpu.import_stats.Bump(ImportCounter::kNegativeDuration, 200);
  cpu.import_stats.Bump(ImportCounter::kUnknownPhase, 5);
  cpu.import_stats.Bump(ImportCounter::kTruncated, 777);
  cpu.import_stats.set_truncation_detail("cut inside an event at byte 777");
  result.ranks.push_back(cpu);
  return result;
}

SummaryReportOptions Options() {
  SummaryReportOptions options;
  options.tool_version = "9.8.7";
  return options;
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::vector<std::string> Tokens(const std::string& line) {
  std::vector<std::string> tokens;
  std::istringstream in(line);
  for (std::string token; in >> token;) tokens.push_back(token);
  return tokens;
}

// The first line whose first token is `first`, or "" when none.
std::string LineStartingWith(const std::string& text, const std::string& first) {
  for (const std::string& line : Lines(text)) {
    std::vector<std::string> tokens = Tokens(line);
    if (!tokens.empty() && tokens[0] == first) return line;
  }
  return "";
}

TEST(SummaryJsonTest, CarriesEveryFigureWithExactMicroseconds) {
  absl::StatusOr<std::string> json = SummaryJson(TwoRanks(), Options());
  ASSERT_TRUE(json.ok()) << json.status();
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(*json).get(doc), simdjson::SUCCESS);

  EXPECT_EQ(std::string_view(doc["schema"]), "bubblescope.analyze/1");
  EXPECT_EQ(std::string_view(doc["tool"]["name"]), "bubblescope");
  EXPECT_EQ(std::string_view(doc["tool"]["version"]), "9.8.7");

  simdjson::dom::array ranks = doc["ranks"];
  ASSERT_EQ(ranks.size(), 2u);
  simdjson::dom::element r0 = ranks.at(0);
  EXPECT_EQ(int64_t(r0["rank"]), 0);
  EXPECT_EQ(std::string_view(r0["source"]), "/data/rank0.json");
  EXPECT_EQ(std::string_view(r0["timeline"]), "gpu");
  EXPECT_DOUBLE_EQ(double(r0["span_us"]), 1234.567);
  EXPECT_DOUBLE_EQ(double(r0["compute_us"]), 1000.0);
  EXPECT_DOUBLE_EQ(double(r0["comm_us"]), 200.0);
  EXPECT_DOUBLE_EQ(double(r0["memcpy_us"]), 4.5);
  EXPECT_DOUBLE_EQ(double(r0["idle_us"]), 30.067);
  EXPECT_EQ(int64_t(r0["kernels"]), 10);
  EXPECT_EQ(int64_t(r0["comm_ops"]), 3);
  EXPECT_EQ(int64_t(r0["memcpy_ops"]), 2);
  EXPECT_EQ(int64_t(r0["steps"]), 1);
  EXPECT_EQ(int64_t(r0["peak_allocated_bytes"]), 1610612736);
  EXPECT_EQ(int64_t(r0["peak_reserved_bytes"]), 2147483648);
  EXPECT_EQ(simdjson::dom::object(r0["import"]).size(), 0u);

  simdjson::dom::element r1 = ranks.at(1);
  EXPECT_EQ(std::string_view(r1["source"]), "/data/r\xC3\xA4nk1.json");
  EXPECT_EQ(std::string_view(r1["timeline"]), "cpu");
  EXPECT_DOUBLE_EQ(double(r1["span_us"]), 2000000.0);
  EXPECT_DOUBLE_EQ(double(r1["compute_us"]), 1500000.001);
  EXPECT_DOUBLE_EQ(double(r1["idle_us"]), 499999.999);
  EXPECT_TRUE(r1["peak_allocated_bytes"].is_null());
  EXPECT_TRUE(r1["peak_reserved_bytes"].is_null());
  simdjson::dom::object import = r1["import"];
  EXPECT_EQ(import.size(), 3u);
  EXPECT_EQ(uint64_t(import["negative_duration"]["count"]), 2u);
  EXPECT_EQ(std::string_view(import["negative_duration"]["severity"]), "error");
  EXPECT_EQ(int64_t(import["negative_duration"]["first_offset"]), 100);
  EXPECT_EQ(uint64_t(import["unknown_phase"]["count"]), 1u);
  EXPECT_EQ(std::string_view(import["unknown_phase"]["severity"]), "info");
  EXPECT_EQ(uint64_t(import["truncated"]["count"]), 1u);
  EXPECT_EQ(std::string_view(import["truncated"]["severity"]), "warning");
  EXPECT_EQ(int64_t(import["truncated"]["first_offset"]), 777);
  EXPECT_EQ(std::string_view(import["truncated"]["detail"]), "cut inside an event at byte 777");

  EXPECT_EQ(uint64_t(doc["import_issues"]["error"]), 2u);
  EXPECT_EQ(uint64_t(doc["import_issues"]["warning"]), 1u);
  EXPECT_EQ(uint64_t(doc["import_issues"]["info"]), 1u);
}

TEST(SummaryJsonTest, MicrosecondsAreWrittenExactlyNotThroughADouble) {
  Result result;
  RankFigures f;
  f.span = 9007199254740993;  // 2^53 + 1 ns
  result.ranks.push_back(f);
  absl::StatusOr<std::string> json = SummaryJson(result, Options());
  ASSERT_TRUE(json.ok());
  EXPECT_THAT(*json, HasSubstr("\"span_us\": 9007199254740.993"));
}

TEST(SummaryJsonTest, EmptyResultIsValid) {
  SummaryReportOptions options = Options();
  options.json_indent = 0;
  absl::StatusOr<std::string> json = SummaryJson(Result{}, options);
  ASSERT_TRUE(json.ok());
  EXPECT_EQ(*json,
            "{\"schema\":\"bubblescope.analyze/1\",\"tool\":{\"name\":\"bubblescope\","
            "\"version\":\"9.8.7\"},\"ranks\":[],\"import_issues\":{\"error\":0,\"warning\":0,"
            "\"info\":0}}\n");
}

TEST(SummaryTextTest, HeaderCountsRanksAndNamesProblemsNotInfo) {
  std::string text = SummaryText(TwoRanks(), Options());
  // Errors and warnings briefly; the info counter only in the import block below.
  EXPECT_EQ(Lines(text).at(0),
            "bubblescope 9.8.7 analyze: 2 ranks (1 gpu, 1 cpu); import issues: 2 error, "
            "1 warning (listed below)");
  Result clean = TwoRanks();
  for (RankFigures& figures : clean.ranks) {
    figures.import_stats = ImportStats();
    figures.import_stats.Add(ImportCounter::kUnknownPhase, 1004, 1);
  }
  EXPECT_EQ(Lines(SummaryText(clean, Options())).at(0),
            "bubblescope 9.8.7 analyze: 2 ranks (1 gpu, 1 cpu)");
}

TEST(SummaryTextTest, OneRowPerRankInMillisecondsWithIdlePercent) {
  std::string text = SummaryText(TwoRanks(), Options());
  // idle 30.067 µs rounds to 30 µs; 30067 / 1234567 = 2.435 %. Sources by their shortest
  // unique suffix.
  EXPECT_THAT(Tokens(LineStartingWith(text, "0")),
              ElementsAre("0", "gpu", "1.235", "1.000", "0.200", "0.030", "2.4", "1.50", "GiB",
                          "2.00", "GiB", "rank0.json"));
  // idle 499999999 ns is 499999.999 µs, which rounds to 500 ms; 25.0 % of the 2 s span.
  EXPECT_THAT(Tokens(LineStartingWith(text, "1")),
              ElementsAre("1", "cpu", "2000.000", "1500.000", "0.000", "500.000", "25.0", "-", "-",
                          "r\xC3\xA4nk1.json"));
  // A GPU rank's idle is said to be no kernel running, not the bubble.
  EXPECT_THAT(text, HasSubstr("\ndev_idle: no kernel running; NCCL kernels spin while they wait"));
  // Without a pipeline there is no bubble% below to point to: no note.
  EXPECT_THAT(SummaryText(TwoRanks(), Options(), {}, "", /*pipelines_follow=*/false),
              ::testing::Not(HasSubstr("dev_idle: no kernel running")));
}

// Without a pipeline, ranks with profiler steps lead with the idle inside them: 40 steps of
// 595.812 ms with 197.5 ms idle is 33.1%, beside 93.8% over the 7.3 s span (the collector's
// training-loop sample). With pipelines following, the table is as before.
TEST(SummaryTextTest, WithoutAPipelineIdleInsideTheStepsLeads) {
  Result result;
  RankFigures f;
  f.rank = 0;
  f.source_path = "/data/loop.json";
  f.span = 7314566000;
  f.compute = 444752000;
  f.idle = 6863913000;
  f.steps = 40;
  f.step_time = 595812000;
  f.step_idle = 197214000;
  result.ranks.push_back(f);
  const std::string text = SummaryText(result, Options(), {}, "", /*pipelines_follow=*/false);
  EXPECT_THAT(
      Tokens(LineStartingWith(text, "rank")),
      ElementsAre("rank", "device", "steps", "step_ms", "step_idle%", "span_ms", "compute_ms",
                  "comm_ms", "dev_idle_ms", "dev_idle%", "peak_alloc", "peak_reserved", "source"));
  EXPECT_THAT(Tokens(LineStartingWith(text, "0")),
              ElementsAre("0", "gpu", "40", "595.812", "33.1", "7314.566", "444.752", "0.000",
                          "6863.913", "93.8", "-", "-", "loop.json"));
  EXPECT_THAT(text, HasSubstr("step_idle%: device idle inside the profiler steps"));
  const std::string with_pipelines = SummaryText(result, Options());
  EXPECT_THAT(with_pipelines, ::testing::Not(HasSubstr("step_idle%")));
}

TEST(SummaryTextTest, ColumnsAreAligned) {
  std::string text = SummaryText(TwoRanks(), Options());
  std::string header = LineStartingWith(text, "rank");
  std::string row0 = LineStartingWith(text, "0");
  std::string row1 = LineStartingWith(text, "1");
  ASSERT_FALSE(header.empty());
  // Numbers are right-aligned: "span_ms" ends where each row's span value ends.
  size_t header_end = header.find("span_ms") + std::string("span_ms").size();
  EXPECT_EQ(row0.find("1.235") + 5, header_end);
  EXPECT_EQ(row1.find("2000.000") + 8, header_end);
  // The source column starts at the same place on every line.
  EXPECT_EQ(row0.find("rank0.json"), header.find("source"));
  EXPECT_EQ(row1.find("r\xC3\xA4nk1.json"), header.find("source"));
}

TEST(SummaryTextTest, ListsProblemsPerFileAndInfoSummedOverRanks) {
  std::string text = SummaryText(TwoRanks(), Options());
  EXPECT_THAT(text, HasSubstr("import issues:\n  rank 1: /data/r\xC3\xA4nk1.json\n"));
  EXPECT_THAT(text, ::testing::Not(HasSubstr("rank 0: /data/rank0.json")));
  EXPECT_THAT(Tokens(LineStartingWith(text, "error")),
              ElementsAre("error", "negative_duration", "2", "100", "event", "with", "a",
                          "negative", "duration"));
  EXPECT_THAT(Tokens(LineStartingWith(text, "warning")),
              ElementsAre("warning", "truncated", "1", "777", "file", "cut", "short;", "events",
                          "after", "the", "cut", "are", "lost"));
  // Info counters are not repeated under each file: one row per counter, summed over ranks.
  EXPECT_THAT(text, HasSubstr("  info, summed over ranks (skipped on purpose, not damage):\n"));
  EXPECT_THAT(Tokens(LineStartingWith(text, "unknown_phase")),
              ElementsAre("unknown_phase", "1", "1", "event", "phase", "bubblescope", "does", "not",
                          "model"));
  EXPECT_THAT(text, HasSubstr("truncated: cut inside an event at byte 777\n"));
}

TEST(SummaryTextTest, InfoOnlyFilesHaveOneLineAndNoTable) {
  Result result = TwoRanks();
  result.ranks[1].import_stats = ImportStats();
  result.ranks[0].import_stats.Add(ImportCounter::kUnknownPhase, 40, 9);
  result.ranks[1].import_stats.Add(ImportCounter::kUnknownPhase, 2, 3);
  std::string text = SummaryText(result, Options());
  // A clean import: the info counters summed on one line in words, no table.
  EXPECT_THAT(text, HasSubstr("\nimport issues: no errors or warnings (skipped on purpose: "
                              "42 events of a phase bubblescope does not model)\n"));
  // The category torch's python and trace-marker events fall in, as words, never its key.
  result.ranks[1].import_stats.Add(ImportCounter::kIgnoredCategory, 812, 5);
  const std::string categories = SummaryText(result, Options());
  EXPECT_THAT(categories, HasSubstr("(skipped on purpose: 42 events of a phase bubblescope does "
                                    "not model, 812 events of a kind bubblescope does not use "
                                    "(not an op, kernel, copy, annotation or memory sample))\n"));
  EXPECT_THAT(categories, ::testing::Not(HasSubstr("ignored_category")));
  EXPECT_THAT(text, ::testing::Not(HasSubstr("rank 0: /data/rank0.json")));
  EXPECT_THAT(text, ::testing::Not(HasSubstr("first_byte")));
  EXPECT_THAT(text, ::testing::Not(HasSubstr("info, summed over ranks")));
}

TEST(SummaryTextTest, SaysSoWhenThereAreNoImportIssues) {
  Result result = TwoRanks();
  result.ranks.pop_back();
  std::string text = SummaryText(result, Options());
  EXPECT_THAT(text, HasSubstr("\nimport issues: none\n"));
  EXPECT_THAT(Lines(text).at(0), HasSubstr("1 rank (1 gpu, 0 cpu)"));
}

TEST(SummaryTextTest, ZeroSpanHasNoIdlePercent) {
  Result result;
  result.ranks.push_back(RankFigures{});
  std::string text = SummaryText(result, Options());
  std::vector<std::string> tokens = Tokens(LineStartingWith(text, "-1"));
  ASSERT_GE(tokens.size(), 8u);
  EXPECT_EQ(tokens[7], "-");
}

}  // namespace
}  // namespace bubblescope
