// The what-if model through analyze's JSON report and back (report/whatif_model_json.h writes it,
// compare::ReadAnalyzeReport reads it): every field of a simulated job's model comes back equal,
// doubles exactly, so `whatif REPORT.json` predicts what `whatif TRACES` does.
#include "report/whatif_model_json.h"

#include <string>

#include "compare/report_reader.h"
#include "gtest/gtest.h"
#include "job/job.h"
#include "report/pipeline_report.h"
#include "synth/synthetic_job.h"

namespace bubblescope {
namespace {

TEST(WhatIfModelJsonTest, ModelRoundTripsThroughTheReport) {
  sim::Config config;
  config.schedule = sim::Schedule::k1F1B;
  config.stages = 3;
  config.microbatches = 6;
  config.iterations = 2;
  config.costs = {sim::StageCost{.forward = 1'000'001, .backward = 2'000'003},
                  sim::StageCost{.forward = 1'300'007, .backward = 2'600'011},
                  sim::StageCost{.forward = 999'991, .backward = 1'999'993}};
  config.activation_bytes = int64_t{8} << 20;
  config.link = sim::Link{.gbps = 200.0, .latency_ns = 10'000};
  config.weights_bytes.assign(3, int64_t{1} << 30);
  config.activation_stash_bytes = int64_t{32} << 20;
  config.jitter = 0.03;
  absl::StatusOr<sim::Simulation> simulation = sim::Simulate(config);
  ASSERT_TRUE(simulation.ok()) << simulation.status();
  job::Options options;
  options.layers_per_stage = {4, 5, 3};
  absl::StatusOr<job::Result> analysed = job::Analyze(simulation->trace, options);
  ASSERT_TRUE(analysed.ok()) << analysed.status();
  ASSERT_EQ(analysed->pipelines.size(), 1u);
  const job::Pipeline& pipeline = analysed->pipelines[0];
  ASSERT_TRUE(pipeline.model.has_value()) << pipeline.model_problem;
  const whatif::Model& written = *pipeline.model;

  absl::StatusOr<std::string> json = AnalyzeJson(*analysed, SummaryReportOptions{});
  ASSERT_TRUE(json.ok()) << json.status();
  absl::StatusOr<compare::RunFigures> run = compare::ReadAnalyzeReport("report.json", *json);
  ASSERT_TRUE(run.ok()) << run.status();
  const std::vector<ReportedPipeline> reported = ReportedPipelinesOf(*run);
  ASSERT_EQ(reported.size(), 1u);
  ASSERT_TRUE(reported[0].model.ok()) << reported[0].model.status();
  const whatif::Model& read = *reported[0].model;
  EXPECT_EQ(read.schedule, written.schedule);
  EXPECT_EQ(read.p, written.p);
  EXPECT_EQ(read.m, written.m);
  EXPECT_EQ(read.v, written.v);
  EXPECT_EQ(read.separate_weight_grad, written.separate_weight_grad);
  EXPECT_EQ(read.measured_iteration_ns, written.measured_iteration_ns);
  EXPECT_EQ(read.measured_bubble_fraction, written.measured_bubble_fraction);
  ASSERT_EQ(read.stages.size(), written.stages.size());
  for (size_t s = 0; s < read.stages.size(); ++s) {
    SCOPED_TRACE(s);
    EXPECT_EQ(read.stages[s].rank, written.stages[s].rank);
    EXPECT_EQ(read.stages[s].forward_ns, written.stages[s].forward_ns);  // exact doubles
    EXPECT_EQ(read.stages[s].backward_ns, written.stages[s].backward_ns);
    EXPECT_EQ(read.stages[s].weight_grad_ns, written.stages[s].weight_grad_ns);
    EXPECT_EQ(read.stages[s].recompute_ns, written.stages[s].recompute_ns);
    EXPECT_EQ(read.stages[s].memory_floor_bytes, written.stages[s].memory_floor_bytes);
    EXPECT_EQ(read.stages[s].memory_peak_bytes, written.stages[s].memory_peak_bytes);
    EXPECT_EQ(read.stages[s].memory_headroom_bytes, written.stages[s].memory_headroom_bytes);
    EXPECT_EQ(read.stages[s].layers, written.stages[s].layers);
  }
  EXPECT_EQ(read.stages[1].layers, 5);
  ASSERT_EQ(read.links.size(), written.links.size());
  for (size_t i = 0; i < read.links.size(); ++i) {
    EXPECT_EQ(read.links[i].src_stage, written.links[i].src_stage);
    EXPECT_EQ(read.links[i].dst_stage, written.links[i].dst_stage);
    EXPECT_EQ(read.links[i].transfer_ns, written.links[i].transfer_ns);
  }
  // The rebalance move the report suggests comes back as the default layer candidate.
  ASSERT_TRUE(pipeline.rebalance.has_value() && pipeline.rebalance->result.ok());
  if (pipeline.rebalance->result->suggested) {
    EXPECT_EQ(reported[0].rebalance_layers_after, pipeline.rebalance->result->layers_after);
  } else {
    EXPECT_TRUE(reported[0].rebalance_layers_after.empty());
  }
}

}  // namespace
}  // namespace bubblescope
