// Tensor and data parallelism beside the pipeline (the simulator's ModelParallel, laid out and
// named as Megatron-Core does): every one of the tensor x data pipelines is found with the
// simulated shape, its bubble within 0.5 points of the simulator's truth (which counts the
// tensor-parallel collectives as the stage's work and the DP gradient sync as idle), and the
// in-stage and DP-sync shares the report gives are the truth's, summed over the iterations.
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "job/job.h"
#include "simulator/simulator.h"

namespace bubblescope {
namespace {

struct GridCase {
  int32_t tensor;
  int32_t p;
  bool sequence_parallel;
  bool overlap;
  int32_t data;
};

TEST(ModelParallelGridTest, EveryPipelineFoundWithTheTruthsBubble) {
  int64_t jobs = 0;
  for (int32_t tensor : {2, 4, 8}) {
    for (int32_t p : {2, 4}) {
      for (bool sequence_parallel : {false, true}) {
        for (bool overlap : {false, true}) {
          for (int32_t data : {1, 2}) {
            SCOPED_TRACE(absl::StrCat("tp=", tensor, " pp=", p, " sp=", sequence_parallel,
                                      " overlap=", overlap, " dp=", data));
            sim::Config config;
            config.schedule = sim::Schedule::k1F1B;
            config.stages = p;
            config.microbatches = 8;
            config.iterations = 2;
            config.costs.assign(static_cast<size_t>(p),
                                sim::StageCost{.forward = 1'000'000, .backward = 2'000'000});
            config.activation_bytes = 16 << 20;
            config.link = sim::Link{.gbps = 400.0, .latency_ns = 5'000};
            config.launch_gap_ns = 5'000;
            config.optimizer_ns = 300'000;
            config.jitter = 0.02;
            config.parallel = sim::ModelParallel{.tensor = tensor,
                                                 .data = data,
                                                 .sequence_parallel = sequence_parallel,
                                                 .overlap = overlap,
                                                 .tensor_share = 0.15,
                                                 .dp_sync_ns = 400'000};
            absl::StatusOr<sim::Simulation> simulation = sim::Simulate(config);
            ASSERT_TRUE(simulation.ok()) << simulation.status();
            ASSERT_EQ(simulation->trace.ranks.size(), static_cast<size_t>(tensor * data * p));
            absl::StatusOr<job::Result> result = job::Analyze(simulation->trace, job::Options{});
            ASSERT_TRUE(result.ok()) << result.status();
            ASSERT_EQ(result->pipelines.size(), static_cast<size_t>(tensor * data));
            const sim::Truth& truth = simulation->truth;
            TimeNs in_stage = 0;
            TimeNs dp_sync = 0;
            for (const sim::IterationTruth& iteration : truth.iterations) {
              for (const sim::RankIterationTruth& rank : iteration.ranks) {
                in_stage += rank.in_stage_comm;
                dp_sync += rank.dp_sync;
              }
            }
            EXPECT_GT(in_stage, 0);  // forwards never overlap theirs
            EXPECT_EQ(dp_sync > 0, data > 1);
            for (const job::Pipeline& pipeline : result->pipelines) {
              ASSERT_TRUE(pipeline.shape.has_value());
              EXPECT_EQ(pipeline.shape->p, p);
              EXPECT_EQ(pipeline.shape->m, 8);
              EXPECT_EQ(pipeline.shape->v, 1);
              EXPECT_NEAR(pipeline.bubble.bubble_fraction, truth.bubble_fraction, 0.005);
              TimeNs measured_in_stage = 0;
              TimeNs measured_dp_sync = 0;
              for (const bubble::RankTotals& rank : pipeline.bubble.per_rank) {
                measured_in_stage += rank.in_stage_comm;
                measured_dp_sync += rank.dp_sync;
              }
              // Same kernels, on the truth's clock up to the pipeline's alignment.
              EXPECT_NEAR(static_cast<double>(measured_in_stage), static_cast<double>(in_stage),
                          0.01 * static_cast<double>(in_stage) + 1000.0);
              EXPECT_NEAR(static_cast<double>(measured_dp_sync), static_cast<double>(dp_sync),
                          0.01 * static_cast<double>(dp_sync) + 1000.0);
            }
            ++jobs;
          }
        }
      }
    }
  }
  EXPECT_EQ(jobs, 48);
}

}  // namespace
}  // namespace bubblescope
