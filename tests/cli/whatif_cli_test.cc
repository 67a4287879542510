// End-to-end: `bubblescope whatif` on bundled simulated sets. The measured configuration through
// the model must come within 2% of the truth's iteration (the model leaves out launch gaps and
// the optimizer step, which these sets have); the candidates and flags behave as documented.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "simdjson.h"
#include "support/subprocess.h"
#include "support/test_files.h"

namespace bubblescope::testing {
namespace {

using ::testing::HasSubstr;

std::string SampleDir(const std::string& name) {
  return std::string(BUBBLESCOPE_SOURCE_DIR) + "/sample_traces/" + name;
}

TEST(WhatIfCliTest, DefaultCandidatesOnAnImbalancedJob) {
  const std::string dir = SampleDir("sim_1f1b_imbalanced_p4_m8");
  CommandResult run = RunCommand({BUBBLESCOPE_BINARY, "whatif", dir, "--format", "json"});
  ASSERT_EQ(run.exit_status, 0) << run.err;
  simdjson::dom::parser parser;
  simdjson::dom::element report;
  ASSERT_EQ(parser.parse(run.out).get(report), simdjson::SUCCESS) << run.out;
  EXPECT_EQ(std::string_view(report["schema"]), "bubblescope.whatif/1");
  simdjson::dom::array pipelines = report["pipelines"];
  ASSERT_EQ(pipelines.size(), 1u);
  simdjson::dom::element pipeline = pipelines.at(0);

  simdjson::dom::parser truth_parser;
  simdjson::dom::element truth;
  const std::string truth_text = ReadFile(dir + "/truth.json");
  ASSERT_EQ(truth_parser.parse(truth_text).get(truth), simdjson::SUCCESS);
  const double measured = double(truth["latency_us"]["p50"]);
  EXPECT_DOUBLE_EQ(double(pipeline["measured_iteration_us"]), measured);
  EXPECT_NEAR(double(pipeline["measured_modelled"]["iteration_us"]), measured, 0.02 * measured);

  // 1f1b, m=8, p=4: m x2, m x4, interleaved v=2 (8 is a multiple of 4), zb-h1.
  simdjson::dom::array candidates = pipeline["candidates"];
  ASSERT_EQ(candidates.size(), 4u);
  std::vector<std::string> labels;
  for (simdjson::dom::element candidate : candidates) {
    labels.push_back(std::string(std::string_view(candidate["schedule"])) +
                     " m=" + std::to_string(int64_t(candidate["microbatches"])) +
                     " v=" + std::to_string(int64_t(candidate["virtual_stages"])));
    EXPECT_EQ(simdjson::dom::array(candidate["peak_allocated_bytes_by_stage"]).size(), 4u);
  }
  EXPECT_THAT(labels, ::testing::ElementsAre("1f1b m=16 v=1", "1f1b m=32 v=1",
                                             "interleaved m=8 v=2", "zb-h1 m=8 v=1"));
  // More microbatches shrink 1F1B's bubble without raising its peak memory (at most p in
  // flight); the set's 96 MiB per microbatch over 2 GiB of weights puts stage 0 at 2 GiB + 4 x
  // 96 MiB.
  const double bubble_m8 = double(pipeline["measured_modelled"]["bubble_fraction"]);
  EXPECT_LT(double(candidates.at(0)["bubble_fraction"]), bubble_m8);
  EXPECT_LT(double(candidates.at(1)["bubble_fraction"]),
            double(candidates.at(0)["bubble_fraction"]));
  EXPECT_EQ(int64_t(simdjson::dom::array(candidates.at(1)["peak_allocated_bytes_by_stage"]).at(0)),
            (int64_t{2048} + 4 * 96) << 20);
}

// The analyze text report opens with the diagnosis, before any table: headline figures, where
// the bubble is, the costliest warning (here the slow stage, whose predicted saving outweighs
// its symptoms) and the next step for it, wrapped to 120 columns.
TEST(WhatIfCliTest, AnalyzeOpensWithTheDiagnosis) {
  CommandResult run =
      RunCommand({BUBBLESCOPE_BINARY, "analyze", SampleDir("sim_1f1b_imbalanced_p4_m8")});
  ASSERT_EQ(run.exit_status, 0) << run.err;
  std::vector<std::string> lines;
  size_t start = 0;
  for (size_t end = run.out.find('\n'); end != std::string::npos && lines.size() < 9;
       start = end + 1, end = run.out.find('\n', start)) {
    lines.push_back(run.out.substr(start, end - start));
  }
  ASSERT_EQ(lines.size(), 9u);
  EXPECT_THAT(lines[0], ::testing::EndsWith(" analyze: 4 ranks (4 gpu, 0 cpu)"));
  EXPECT_EQ(lines[1],
            "diagnosis: pipeline 0 (p=4 m=8 v=1 1f1b): bubble 45.8% against 27.3% for its "
            "schedule alone, iteration");
  // The value moves on with its unit and qualifier: "(median)" is never alone on a line.
  EXPECT_EQ(lines[2], "  50.423 ms (median)");
  EXPECT_EQ(lines[3],
            "  where: stage 0 (rank 0) idles most, 51.8% of its time; stage 2 (rank 2) "
            "least, 27.8%");
  EXPECT_THAT(lines[4], ::testing::StartsWith("  top cause: stage_imbalance (stage 2 (rank 2) "
                                              "computes longer per microbatch than the "
                                              "others): fixing it"));
  EXPECT_THAT(lines[6], HasSubstr("(modelled 50.064 ms -> 42.107 ms)"));
  EXPECT_THAT(lines[7], ::testing::StartsWith("  next step: move layers off the slow stage"));
  EXPECT_THAT(lines[8], ::testing::StartsWith("rank  device"));  // the tables come after
  for (const std::string& line : lines) EXPECT_LE(line.size(), 120u) << line;
}

TEST(WhatIfCliTest, OneCandidateFromTheFlags) {
  CommandResult run = RunCommand({BUBBLESCOPE_BINARY, "whatif", SampleDir("sim_1f1b_p4_m8"),
                                  "--microbatches", "32", "--same-global-batch"});
  ASSERT_EQ(run.exit_status, 0) << run.err;
  EXPECT_THAT(run.out, HasSubstr("as measured, modelled"));
  EXPECT_THAT(run.out, HasSubstr("1f1b m=32 v=1 (same global batch)"));
  EXPECT_THAT(run.out, ::testing::Not(HasSubstr("zb-h1")));
}

TEST(WhatIfCliTest, BadScheduleIsAUsageError) {
  CommandResult run = RunCommand(
      {BUBBLESCOPE_BINARY, "whatif", SampleDir("sim_1f1b_p4_m8"), "--schedule", "pipedream"});
  EXPECT_EQ(run.exit_status, 2);
  EXPECT_THAT(run.err, HasSubstr("--schedule: 'pipedream' is not one of"));
  EXPECT_TRUE(run.out.empty());
}

TEST(WhatIfCliTest, FromAnAnalyzeReportAsFromTheTraces) {
  // The report holds each pipeline's model, so predicting from it needs no trace and gives the
  // same table, layer move included.
  const std::string dir = SampleDir("sim_1f1b_imbalanced_p4_m8");
  TempDir temp;
  const std::string report = temp.path() + "/report.json";
  CommandResult analyzed = RunCommand({BUBBLESCOPE_BINARY, "analyze", dir, "--format", "json",
                                       "--layers-per-stage", "8,8,8,8", "-o", report});
  ASSERT_EQ(analyzed.exit_status, 0) << analyzed.err;
  CommandResult from_report = RunCommand({BUBBLESCOPE_BINARY, "whatif", report});
  ASSERT_EQ(from_report.exit_status, 0) << from_report.err;
  CommandResult from_traces =
      RunCommand({BUBBLESCOPE_BINARY, "whatif", dir, "--layers-per-stage", "8,8,8,8"});
  ASSERT_EQ(from_traces.exit_status, 0) << from_traces.err;
  EXPECT_EQ(from_report.out, from_traces.out);
  EXPECT_THAT(from_report.out, HasSubstr("1f1b m=8 v=1 layers "));  // the best move

  CommandResult tried = RunCommand(
      {BUBBLESCOPE_BINARY, "whatif", report, "--try-layers", "9,9,6,8", "--format", "json"});
  ASSERT_EQ(tried.exit_status, 0) << tried.err;
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(tried.out).get(doc), simdjson::SUCCESS) << tried.out;
  simdjson::dom::array candidates = doc["pipelines"].at(0)["candidates"];
  ASSERT_EQ(candidates.size(), 1u);
  EXPECT_EQ(candidates.at(0)["problem"].error(), simdjson::NO_SUCH_FIELD);
  EXPECT_EQ(simdjson::dom::array(candidates.at(0)["layers_per_stage"]).size(), 4u);

  // Never written over the report it read.
  CommandResult over = RunCommand({BUBBLESCOPE_BINARY, "whatif", report, "-o", report});
  EXPECT_NE(over.exit_status, 0);
  EXPECT_THAT(ReadFile(report), HasSubstr("\"whatif_model\""));
}

TEST(WhatIfCliTest, UnreadableReportsAreOneLineErrors) {
  TempDir temp;
  struct Case {
    std::string body;
    std::string message;
  };
  for (const Case& bad : std::vector<Case>{
           {R"({"schema": "bubblescope.analyze/2", "pipelines": []})",
            "byte 11: schema \"bubblescope.analyze/2\" has major version 2; this bubblescope "
            "reads bubblescope.analyze/1.x"},
           {R"({"schema": "bubblescope.analyze/1", "pipelines": [{"pipeline": 0, "whatif)",
            "byte 73: malformed JSON (A string is opened, but never closed.)"},
           {R"({"schema": "bubblescope.analyze/1", "pipelines": [{"whatif_model": {"p": "x"}}]})",
            "byte 73: \"whatif_model.p\" is a string, expected a whole number in range"},
           {R"({"schema": "bubblescope.analyze/1", "pipelines": [{"whatif_model": {"p": 2}}]})",
            "byte 67: \"whatif_model\" is not a usable model: m is 0 and v is 1"}}) {
    const std::string path = temp.Write("report.json", bad.body);
    CommandResult run = RunCommand({BUBBLESCOPE_BINARY, "whatif", path});
    EXPECT_EQ(run.exit_status, 2) << bad.body;
    EXPECT_THAT(run.err, ::testing::StartsWith("bubblescope: " + path + ": "));
    EXPECT_THAT(run.err, HasSubstr(bad.message));
    EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.err;
    EXPECT_TRUE(run.out.empty());
  }
  // A newer minor version with members this version does not know is read.
  const std::string newer = temp.Write(
      "newer.json", R"({"schema": "bubblescope.analyze/1.4", "added": {"x": [1]}, "pipelines":)"
                    R"( [{"pipeline": 0, "ranks": [0, 1], "whatif_model": null,)"
                    R"( "bubble_fraction": 0.5, "latency_us": {"p50": 9, "p90": 9, "max": 9},)"
                    R"( "whatif_model_problem": "the pipeline's shape is unknown"}]})");
  CommandResult run = RunCommand({BUBBLESCOPE_BINARY, "whatif", newer});
  EXPECT_EQ(run.exit_status, 0) << run.err;
  EXPECT_THAT(run.out, HasSubstr("pipeline 0: ranks 0,1\n  no prediction: the pipeline's shape "
                                 "is unknown"));
}

}  // namespace
}  // namespace bubblescope::testing
