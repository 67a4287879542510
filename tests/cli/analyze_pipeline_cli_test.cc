// End-to-end: `bubblescope analyze --format json` on the bundled sample traces, checked against
// each set's truth.json (written by the simulator from its own records, or by the recording
// script for the real CPU runs), never against the analyzer's own output.
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

double Round4(double value) { return std::round(value * 1e4) / 1e4; }

// `bubblescope analyze DIR --format json EXTRA...` and DIR/truth.json, both parsed.
struct ReportAndTruth {
  ReportAndTruth(const std::string& dir, const std::vector<std::string>& extra) {
    std::vector<std::string> command = {BUBBLESCOPE_BINARY, "analyze", dir, "--format", "json"};
    command.insert(command.end(), extra.begin(), extra.end());
    CommandResult run = RunCommand(command);
    report_text = run.out;
    truth_text = ReadFile(dir + "/truth.json");
    if (run.exit_status != 0) {
      error = "analyze exited " + std::to_string(run.exit_status) + ": " + run.err;
    } else if (report_parser.parse(report_text).get(report) != simdjson::SUCCESS) {
      error = "the report is not JSON";
    } else if (truth_parser.parse(truth_text).get(truth) != simdjson::SUCCESS) {
      error = "truth.json is not JSON";
    }
  }
  bool ok() const { return error.empty(); }

  std::string error;
  std::string report_text;
  std::string truth_text;
  simdjson::dom::parser report_parser;
  simdjson::dom::parser truth_parser;
  simdjson::dom::element report;
  simdjson::dom::element truth;
};

class SimulatedSetTest : public ::testing::TestWithParam<std::string> {};

TEST_P(SimulatedSetTest, MatchesTruth) {
  const std::string dir = SampleDir(GetParam());
  ReportAndTruth parsed(dir, {});
  ASSERT_TRUE(parsed.ok()) << parsed.error;
  simdjson::dom::element report = parsed.report;
  simdjson::dom::element truth = parsed.truth;

  EXPECT_EQ(std::string_view(report["schema"]), "bubblescope.analyze/1");
  simdjson::dom::array pipelines = report["pipelines"];
  ASSERT_EQ(pipelines.size(), 1u);
  simdjson::dom::element pipeline = pipelines.at(0);
  simdjson::dom::element config = truth["config"];

  EXPECT_EQ(int64_t(pipeline["stages"]), int64_t(config["stages"]));
  EXPECT_EQ(int64_t(pipeline["microbatches"]), int64_t(config["microbatches"]));
  EXPECT_EQ(int64_t(pipeline["virtual_stages"]), int64_t(config["virtual_stages"]));
  EXPECT_EQ(std::string_view(pipeline["schedule"]), std::string_view(config["schedule"]));
  EXPECT_DOUBLE_EQ(double(pipeline["theoretical_bubble_fraction"]),
                   double(truth["theoretical_bubble_fraction"]));

  double bubble = pipeline["bubble_fraction"];
  double truth_bubble = truth["bubble_fraction"];
  EXPECT_NEAR(bubble, truth_bubble, 0.005);
  EXPECT_EQ(Round4(bubble), Round4(truth_bubble));

  simdjson::dom::element latency = pipeline["latency_us"];
  simdjson::dom::element truth_latency = truth["latency_us"];
  for (const char* key : {"p50", "p90", "max"}) {
    EXPECT_DOUBLE_EQ(double(latency[key]), double(truth_latency[key])) << key;
  }

  simdjson::dom::array iterations = pipeline["iterations"];
  simdjson::dom::array truth_iterations = truth["iterations"];
  ASSERT_EQ(iterations.size(), truth_iterations.size());
  EXPECT_EQ(int64_t(pipeline["complete_iterations"]), int64_t(truth_iterations.size()));
  for (size_t i = 0; i < iterations.size(); ++i) {
    EXPECT_DOUBLE_EQ(double(iterations.at(i)["window_us"]),
                     double(truth_iterations.at(i)["window_us"]));
  }

  // Each rank's window summed over the iterations: capacity / p.
  double rank_window_us = double(truth["capacity_us"]) / double(int64_t(config["stages"]));
  simdjson::dom::array ranks = pipeline["rank_stats"];
  simdjson::dom::array truth_ranks = truth["rank_stats"];
  ASSERT_EQ(ranks.size(), truth_ranks.size());
  for (size_t i = 0; i < ranks.size(); ++i) {
    simdjson::dom::element rank = ranks.at(i);
    simdjson::dom::element truth_rank = truth_ranks.at(i);
    ASSERT_EQ(int64_t(rank["rank"]), int64_t(truth_rank["rank"]));
    EXPECT_EQ(int64_t(rank["stage"]), int64_t(truth_rank["stage"]));
    for (const char* key : {"fill_us", "drain_us", "stall_us"}) {
      EXPECT_NEAR(double(rank[key]), double(truth_rank[key]), 0.01 * rank_window_us)
          << "rank " << i << " " << key;
    }
  }

  if (GetParam() == "sim_1f1b_imbalanced_p4_m8") {
    EXPECT_EQ(int64_t(pipeline["slowest_stage"]), int64_t(truth["slowest_stage"]));
  }
}

INSTANTIATE_TEST_SUITE_P(SampleTraces, SimulatedSetTest,
                         ::testing::Values("sim_1f1b_p4_m8", "sim_gpipe_p4_m8",
                                           "sim_interleaved_p4_v2_m8", "sim_1f1b_imbalanced_p4_m8",
                                           "sim_1f1b_batched_p4_m8"));

// The real CPU run whose stage 2 has twice the layers (torch_cpu/README.md).
TEST(AnalyzePipelineCliTest, RealCpuRunFindsHeavyStage) {
  const std::string dir = SampleDir("torch_cpu/1f1b_p4_m8_heavy2");
  CommandResult run = RunCommand({BUBBLESCOPE_BINARY, "analyze", dir, "--format", "json"});
  ASSERT_EQ(run.exit_status, 0) << run.err;
  simdjson::dom::parser parser;
  simdjson::dom::element report;
  ASSERT_EQ(parser.parse(run.out).get(report), simdjson::SUCCESS);
  simdjson::dom::element pipeline = simdjson::dom::array(report["pipelines"]).at(0);
  // truth.json of this run: p 4, m 8, schedule 1f1b, slowest stage 2.
  EXPECT_EQ(int64_t(pipeline["stages"]), 4);
  EXPECT_EQ(int64_t(pipeline["microbatches"]), 8);
  EXPECT_EQ(std::string_view(pipeline["schedule"]), "1f1b");
  EXPECT_EQ(int64_t(pipeline["slowest_stage"]), 2);
  bool imbalance_named = false;
  for (simdjson::dom::element finding : simdjson::dom::array(report["findings"])) {
    if (std::string_view(finding["kind"]) != "stage_imbalance") continue;
    imbalance_named =
        std::string(std::string_view(finding["message"])).find("stage 2") != std::string::npos;
  }
  EXPECT_TRUE(imbalance_named) << run.out;
}

TEST(AnalyzePipelineCliTest, TextReportHasPipelineBlock) {
  CommandResult run = RunCommand({BUBBLESCOPE_BINARY, "analyze", SampleDir("sim_gpipe_p4_m8")});
  ASSERT_EQ(run.exit_status, 0) << run.err;
  EXPECT_THAT(run.out, HasSubstr("p=4 m=8 v=1 schedule gpipe"));
  // truth.json: bubble 0.3954, theoretical 3/11 = 27.3 %.
  EXPECT_THAT(run.out, HasSubstr("bubble 39.5% measured vs 27.3% theoretical"));
  EXPECT_THAT(run.out, HasSubstr("pipeline_depth"));
}

TEST(AnalyzePipelineCliTest, BadIterationMarkerIsOneLineUsageError) {
  CommandResult run = RunCommand({BUBBLESCOPE_BINARY, "analyze", SampleDir("sim_gpipe_p4_m8"),
                                  "--iteration-marker", "(unclosed"});
  EXPECT_EQ(run.exit_status, 2);
  EXPECT_TRUE(run.out.empty());
  EXPECT_THAT(run.err, HasSubstr("not a valid regular expression"));
  std::string last_line = run.err.substr(run.err.rfind("bubblescope:"));
  EXPECT_EQ(last_line.find('\n'), last_line.size() - 1);
}

// Complete iterations counted with --iteration-marker REGEX.
int64_t CompleteIterationsWithMarker(const std::string& marker) {
  CommandResult run = RunCommand({BUBBLESCOPE_BINARY, "analyze", SampleDir("sim_1f1b_p4_m8"),
                                  "--format", "json", "--iteration-marker", marker});
  EXPECT_EQ(run.exit_status, 0) << run.err;
  simdjson::dom::parser parser;
  simdjson::dom::element report;
  if (parser.parse(run.out).get(report) != simdjson::SUCCESS) return -1;
  return int64_t(simdjson::dom::array(report["pipelines"]).at(0)["complete_iterations"]);
}

TEST(AnalyzePipelineCliTest, IterationMarkerSelectsSteps) {
  // The simulated steps are "ProfilerStep#0..2" annotations: 3 iterations as in truth.json. A
  // marker matching no annotation leaves no steps and so no iterations.
  EXPECT_EQ(CompleteIterationsWithMarker("^ProfilerStep#"), 3);
  EXPECT_EQ(CompleteIterationsWithMarker("^no such annotation$"), 0);
}

TEST(AnalyzePipelineCliTest, RebalanceTakesLayersOffTheTrueSlowestStage) {
  const std::string dir = SampleDir("sim_1f1b_imbalanced_p4_m8");
  ReportAndTruth parsed(dir, {"--layers-per-stage", "8,8,8,8"});
  ASSERT_TRUE(parsed.ok()) << parsed.error;
  simdjson::dom::element report = parsed.report;
  simdjson::dom::element truth = parsed.truth;

  simdjson::dom::element rebalance = simdjson::dom::array(report["pipelines"]).at(0)["rebalance"];
  EXPECT_TRUE(bool(rebalance["suggested"]));
  EXPECT_EQ(int64_t(rebalance["from_stage"]), int64_t(truth["slowest_stage"]));
  std::vector<int64_t> after;
  for (simdjson::dom::element layers : simdjson::dom::array(rebalance["layers_after"])) {
    after.push_back(int64_t(layers));
  }
  ASSERT_EQ(after.size(), 4u);
  EXPECT_EQ(after[0] + after[1] + after[2] + after[3], 32);  // layers move, none appear
  EXPECT_LT(after[static_cast<size_t>(int64_t(truth["slowest_stage"]))], 8);
  EXPECT_LT(double(rebalance["predicted_iteration_us_after"]),
            double(rebalance["predicted_iteration_us_before"]));
  EXPECT_LT(double(rebalance["predicted_bubble_fraction_after"]),
            double(rebalance["predicted_bubble_fraction_before"]));

  // The slowest stage's effect runs the what-if model the move is quoted from, on the unchanged
  // split, then the slowest stage at the mean: less bubble, a shorter iteration.
  simdjson::dom::element effect =
      simdjson::dom::array(report["pipelines"]).at(0)["slowest_stage_effect"];
  EXPECT_EQ(int64_t(effect["stage"]), int64_t(truth["slowest_stage"]));
  EXPECT_DOUBLE_EQ(double(effect["iteration_us"]),
                   double(rebalance["with_measured_links"]["iteration_us_before"]));
  EXPECT_LT(double(effect["iteration_at_mean_us"]), double(effect["iteration_us"]));
  EXPECT_LT(double(effect["bubble_fraction_at_mean"]), double(effect["bubble_fraction"]));

  CommandResult text =
      RunCommand({BUBBLESCOPE_BINARY, "analyze", dir, "--layers-per-stage", "8,8,8,8"});
  ASSERT_EQ(text.exit_status, 0) << text.err;
  EXPECT_THAT(text.out, HasSubstr("rebalance (layers 8,8,8,8 from --layers-per-stage): move "));
}

// A copy of a bundled set in which each rank declares its layers with a `bubblescope:layers=N`
// annotation (an empty record_function range at the start, as a training script would open).
std::string AnnotatedCopy(const std::string& name, const std::vector<int>& layers,
                          const TempDir& out) {
  const std::string marker = "\"traceEvents\": [";
  for (size_t rank = 0; rank < layers.size(); ++rank) {
    const std::string file = "/rank" + std::to_string(rank) + ".pt.trace.json.gz";
    std::string text = Gunzip(ReadFile(SampleDir(name) + file));
    const size_t at = text.find(marker);
    if (at == std::string::npos) return "";
    if (layers[rank] > 0) {
      text.insert(at + marker.size(),
                  "\n  {\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": "
                  "\"bubblescope:layers=" +
                      std::to_string(layers[rank]) +
                      "\", \"pid\": 10000, \"tid\": 10000, \"ts\": 0.0, \"dur\": 0.0},");
    }
    WriteFile(out.path() + file, text);
  }
  WriteFile(out.path() + "/truth.json", ReadFile(SampleDir(name) + "/truth.json"));
  return out.path();
}

TEST(AnalyzePipelineCliTest, RebalanceFromTheRanksOwnLayerAnnotations) {
  TempDir annotated_dir;
  const std::string annotated =
      AnnotatedCopy("sim_1f1b_imbalanced_p4_m8", {8, 8, 8, 8}, annotated_dir);
  ASSERT_FALSE(annotated.empty());
  ReportAndTruth from_annotations(annotated, {});
  ASSERT_TRUE(from_annotations.ok()) << from_annotations.error;
  ReportAndTruth from_user(SampleDir("sim_1f1b_imbalanced_p4_m8"),
                           {"--layers-per-stage", "8,8,8,8"});
  ASSERT_TRUE(from_user.ok()) << from_user.error;

  simdjson::dom::element declared =
      simdjson::dom::array(from_annotations.report["pipelines"]).at(0)["rebalance"];
  simdjson::dom::element given =
      simdjson::dom::array(from_user.report["pipelines"]).at(0)["rebalance"];
  EXPECT_EQ(std::string_view(declared["layers_source"]), "annotations");
  EXPECT_EQ(std::string_view(given["layers_source"]), "user");
  // The same counts give the same suggestion, whoever gave them; the annotation itself changes
  // no measured figure.
  EXPECT_TRUE(bool(declared["suggested"]));
  for (const char* key : {"from_stage", "to_stage", "layers"}) {
    EXPECT_EQ(int64_t(declared[key]), int64_t(given[key])) << key;
  }
  EXPECT_EQ(int64_t(declared["from_stage"]), int64_t(from_user.truth["slowest_stage"]));
  EXPECT_DOUBLE_EQ(double(declared["predicted_iteration_us_after"]),
                   double(given["predicted_iteration_us_after"]));
  const double bubble =
      simdjson::dom::array(from_annotations.report["pipelines"]).at(0)["bubble_fraction"];
  EXPECT_DOUBLE_EQ(
      bubble, double(simdjson::dom::array(from_user.report["pipelines"]).at(0)["bubble_fraction"]));
  EXPECT_EQ(Round4(bubble), Round4(double(from_user.truth["bubble_fraction"])));

  // The user's counts win over the annotations.
  ReportAndTruth overridden(annotated, {"--layers-per-stage", "4,4,12,4"});
  ASSERT_TRUE(overridden.ok()) << overridden.error;
  simdjson::dom::element user =
      simdjson::dom::array(overridden.report["pipelines"]).at(0)["rebalance"];
  EXPECT_EQ(std::string_view(user["layers_source"]), "user");
  EXPECT_EQ(int64_t(simdjson::dom::array(user["layers_per_stage"]).at(2)), 12);
}

TEST(AnalyzePipelineCliTest, IncompleteLayerAnnotationsAreReportedNotGuessed) {
  TempDir annotated_dir;
  const std::string annotated =
      AnnotatedCopy("sim_1f1b_imbalanced_p4_m8", {8, 8, 0, 8}, annotated_dir);
  ASSERT_FALSE(annotated.empty());
  CommandResult text = RunCommand({BUBBLESCOPE_BINARY, "analyze", annotated});
  ASSERT_EQ(text.exit_status, 0) << text.err;
  EXPECT_THAT(text.out, HasSubstr("rebalance (layer annotations): not possible: rank 2 declares "
                                  "no 'bubblescope:layers=N' annotation while other ranks of the "
                                  "pipeline do"));
  // No annotations and no flag: no rebalance block at all.
  CommandResult plain = RunCommand({BUBBLESCOPE_BINARY, "analyze", SampleDir("sim_1f1b_p4_m8")});
  ASSERT_EQ(plain.exit_status, 0) << plain.err;
  EXPECT_THAT(plain.out, ::testing::Not(HasSubstr("rebalance")));
}

TEST(AnalyzePipelineCliTest, LayerCountsThatDoNotFitAreUsageErrors) {
  const std::string dir = SampleDir("sim_1f1b_p4_m8");
  CommandResult wrong_count =
      RunCommand({BUBBLESCOPE_BINARY, "analyze", dir, "--layers-per-stage", "8,8,8"});
  EXPECT_EQ(wrong_count.exit_status, 2);
  EXPECT_THAT(wrong_count.err, HasSubstr("has 3 entries but the pipeline has 4 stages"));
  CommandResult zero =
      RunCommand({BUBBLESCOPE_BINARY, "analyze", dir, "--layers-per-stage", "8,0,8,8"});
  EXPECT_EQ(zero.exit_status, 2);
  EXPECT_THAT(zero.err, HasSubstr("'0' is not a whole number >= 1"));
}

}  // namespace
}  // namespace bubblescope::testing
