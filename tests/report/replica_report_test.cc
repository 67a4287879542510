// The text and JSON reports of data-parallel replicas (report/replica_report.h,
// report/large_job.h) on a DP 4 x PP 2 job whose replica 3 runs stage 1's forward at 1.5 ms
// instead of 1 ms: the folded block's figures against the simulated costs, which pipelines are
// printed in full, and a small job's text left as it was.
#include "report/replica_report.h"

#include <cctype>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "job/job.h"
#include "job/replica_job.h"
#include "report/pipeline_report.h"
#include "simdjson.h"

namespace bubblescope {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

struct Analyzed {
  job::Result result;
  int32_t slow = -1;  // the slow replica's pipeline
};

Analyzed AnalyzeOneSlowReplica() {
  replica_testing::OneSlowReplica job = replica_testing::MakeOneSlowReplica();
  absl::StatusOr<job::Result> result = job::Analyze(job.trace, job::Options{});
  EXPECT_TRUE(result.ok()) << result.status();
  Analyzed out;
  if (!result.ok()) return out;
  out.result = *std::move(result);
  for (size_t i = 0; i < out.result.pipelines.size(); ++i) {
    if (out.result.pipelines[i].crossrank.pipeline.stage_order().front() ==
        replica_testing::kSlowReplica) {
      out.slow = static_cast<int32_t>(i);
    }
  }
  return out;
}

SummaryReportOptions Folded() {
  SummaryReportOptions options;
  options.fold_above_ranks = 0;  // fold this 8-rank job as if it were large
  return options;
}

size_t Count(const std::string& text, const std::string& what) {
  size_t count = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) {
    ++count;
  }
  return count;
}

// The cell of the per-stage table under `column` in the row of `stage` labelled `label`
// ("min", "median", "max", "max in"); "" when absent. The table is the one whose first figure
// column is `first_column`.
std::string SpreadCell(const std::string& text, int32_t stage, const std::string& label,
                       const std::string& column, const std::string& first_column = "bubble%") {
  std::vector<std::string> lines = absl::StrSplit(text, '\n');
  std::vector<std::string> header;
  int32_t current = -1;
  for (const std::string& line : lines) {
    std::vector<std::string> tokens = absl::StrSplit(line, ' ', absl::SkipEmpty());
    if (tokens.empty()) continue;
    if (tokens[0] == "stage" && tokens.size() > 1) {
      // "stage" then the figure columns (the label column has no header); another table ends it.
      header = tokens[1] == first_column ? tokens : std::vector<std::string>{};
      continue;
    }
    if (header.empty()) continue;
    size_t at = 0;
    if (std::isdigit(static_cast<unsigned char>(tokens[0][0])) != 0) {
      current = std::stoi(tokens[0]);  // a stage's first row starts with its number
      at = 1;
    }
    if (at >= tokens.size()) continue;
    std::string row_label = tokens[at];
    if (row_label == "max" && at + 1 < tokens.size() && tokens[at + 1] == "in") {
      row_label = "max in";
      ++at;
    }
    ++at;
    if (current != stage || row_label != label) continue;
    // Values with a unit ("2.75 GiB") take two tokens; the figures asked for here take one.
    for (size_t c = 1; c < header.size(); ++c) {
      if (header[c] == column && at + c - 1 < tokens.size()) return tokens[at + c - 1];
    }
  }
  return "";
}

TEST(ReplicaReportTest, TextFoldsTheReplicasIntoOneBlock) {
  const Analyzed job = AnalyzeOneSlowReplica();
  ASSERT_EQ(job.result.replica_sets.size(), 1u);
  ASSERT_GE(job.slow, 0);
  const std::string text = AnalyzeText(job.result, Folded());
  EXPECT_THAT(text, HasSubstr("replica set 0: pipelines 0-3, 4 data-parallel copies of p=2 m=4 "
                              "v=1 1f1b (each stage's ranks share a group described as "
                              "DATA_PARALLEL_GROUP_WITH_CP)"));
  EXPECT_THAT(text, HasSubstr(absl::StrCat("worst replica (largest bubble): pipeline ", job.slow,
                                           ", ranks 3,7; printed in full below")));
  // The worst replica is the one pipeline printed in full.
  EXPECT_EQ(Count(text, "\npipeline "), 1u);
  EXPECT_THAT(text, HasSubstr(absl::StrCat("\npipeline ", job.slow, ": ranks 3,7\n")));

  // Stage 1: forward 1 ms on three replicas, 1.5 ms on the slow one; compute per iteration
  // m x (F + B) = 4 x 3 = 12 ms against 4 x 3.5 = 14 ms.
  EXPECT_EQ(SpreadCell(text, 1, "min", "forward_ms"), "1.000");
  EXPECT_EQ(SpreadCell(text, 1, "median", "forward_ms"), "1.000");
  EXPECT_EQ(SpreadCell(text, 1, "max", "forward_ms"), "1.500");
  EXPECT_EQ(SpreadCell(text, 1, "max in", "forward_ms"), absl::StrCat("p", job.slow));
  EXPECT_EQ(SpreadCell(text, 1, "min", "compute_ms"), "12.000");
  EXPECT_EQ(SpreadCell(text, 1, "median", "compute_ms"), "12.000");
  EXPECT_EQ(SpreadCell(text, 1, "max", "compute_ms"), "14.000");
  EXPECT_EQ(SpreadCell(text, 1, "max in", "backward_ms"), "-");  // 2 ms everywhere
  EXPECT_EQ(SpreadCell(text, 0, "max", "forward_ms"), "1.000");
}

// The per-rank table of a large job: the replicas' ranks folded per stage, with the figures of
// the whole trace (3 iterations of 4 microbatches: stage 1 computes 3 x 4 x (1 + 2) = 36 ms, the
// slow replica 3 x 4 x (1.5 + 2) = 42 ms), and no row of their own.
TEST(ReplicaReportTest, TextFoldsThePerRankTable) {
  const Analyzed job = AnalyzeOneSlowReplica();
  ASSERT_EQ(job.result.replica_sets.size(), 1u);
  const std::string text = AnalyzeText(job.result, Folded());
  EXPECT_THAT(text, HasSubstr("the ranks of the replica sets, folded (min / median / max over the "
                              "replicas; the JSON report lists every rank):\n"
                              "replica set 0 (pipelines 0-3): its 8 ranks per stage over the 4 "
                              "replicas;"));
  EXPECT_EQ(SpreadCell(text, 1, "min", "compute_ms", "span_ms"), "36.000");
  EXPECT_EQ(SpreadCell(text, 1, "median", "compute_ms", "span_ms"), "36.000");
  EXPECT_EQ(SpreadCell(text, 1, "max", "compute_ms", "span_ms"), "42.000");
  EXPECT_EQ(SpreadCell(text, 1, "max in", "compute_ms", "span_ms"), absl::StrCat("p", job.slow));
  EXPECT_EQ(SpreadCell(text, 0, "max", "steps", "span_ms"), "3");
  // Every rank is in the set: no per-rank row, no table header of none.
  EXPECT_THAT(text, Not(HasSubstr("rank  device")));
  EXPECT_THAT(AnalyzeText(job.result, SummaryReportOptions{}), HasSubstr("rank  device"));
}

TEST(ReplicaReportTest, PickedPipelinesArePrintedInFullToo) {
  const Analyzed job = AnalyzeOneSlowReplica();
  ASSERT_NE(job.slow, 0);
  SummaryReportOptions options = Folded();
  options.show_pipelines = {0};
  const std::string text = AnalyzeText(job.result, options);
  EXPECT_EQ(Count(text, "\npipeline "), 2u);
  EXPECT_THAT(text, HasSubstr("\npipeline 0: ranks 0,4\n"));
}

TEST(ReplicaReportTest, ASmallJobKeepsEveryPipelineInFull) {
  const Analyzed job = AnalyzeOneSlowReplica();
  const std::string text = AnalyzeText(job.result, SummaryReportOptions{});  // 8 ranks <= 256
  EXPECT_THAT(text, Not(HasSubstr("replica set")));
  EXPECT_EQ(Count(text, "\npipeline "), 4u);
  SummaryReportOptions never;
  never.fold_above_ranks = -1;
  never.fold_above_ops = -1;
  EXPECT_EQ(text, AnalyzeText(job.result, never));
}

TEST(ReplicaReportTest, JsonCarriesTheSpreads) {
  const Analyzed job = AnalyzeOneSlowReplica();
  absl::StatusOr<std::string> json = AnalyzeJson(job.result, SummaryReportOptions{});
  ASSERT_TRUE(json.ok()) << json.status();
  simdjson::dom::parser parser;
  simdjson::dom::element document;
  ASSERT_EQ(parser.parse(*json).get(document), simdjson::SUCCESS);
  simdjson::dom::array sets = document["replica_sets"];
  ASSERT_EQ(sets.size(), 1u);
  simdjson::dom::element set = sets.at(0);
  std::vector<int64_t> pipelines;
  for (simdjson::dom::element member : simdjson::dom::array(set["pipelines"])) {
    pipelines.push_back(int64_t(member));
  }
  EXPECT_EQ(pipelines, (std::vector<int64_t>{0, 1, 2, 3}));
  EXPECT_EQ(int64_t(set["worst_pipeline"]), job.slow);
  simdjson::dom::element stage = simdjson::dom::array(set["stages"]).at(1);
  EXPECT_EQ(int64_t(stage["stage"]), 1);
  simdjson::dom::element forward = stage["fwd_us_per_microbatch"];
  EXPECT_NEAR(double(forward["min"]), 1000.0, 1.0);
  EXPECT_NEAR(double(forward["median"]), 1000.0, 1.0);
  EXPECT_NEAR(double(forward["max"]), 1500.0, 1.0);
  EXPECT_EQ(int64_t(forward["max_pipeline"]), job.slow);
  EXPECT_NEAR(double(stage["compute_us_per_iteration"]["max"]), 14000.0, 1.0);
  EXPECT_TRUE(stage["wgt_us_per_microbatch"].is_null());
  const job::ReplicaSet& figures = job.result.replica_sets[0];
  EXPECT_DOUBLE_EQ(double(set["bubble_fraction"]["max"]), figures.bubble_fraction.max);
  EXPECT_EQ(int64_t(stage["peak_allocated_bytes"]["max"]),
            static_cast<int64_t>(figures.stages[1].peak_allocated_bytes->max));
}

TEST(ReplicaReportTest, IndexRunsJoinsConsecutiveIndices) {
  EXPECT_EQ(IndexRuns({0, 1, 2, 3}), "0-3");
  EXPECT_EQ(IndexRuns({0, 1, 3, 5, 6, 7, 9}), "0,1,3,5-7,9");
  EXPECT_EQ(IndexRuns({4}), "4");
  EXPECT_EQ(IndexRuns({}), "");
}

}  // namespace
}  // namespace bubblescope
