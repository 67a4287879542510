// Tensor, context, expert and data parallelism beside the pipeline (the simulator's
// ModelParallel, laid out and named as Megatron-Core does): every one of the tensor x context x
// data pipelines is found with the simulated shape and stage order, its bubble within 0.5 points
// of the simulator's truth (which counts tensor-parallel collectives, ring attention's KV
// exchanges and MoE all-to-alls as the stage's work and the DP gradient sync as idle), and the
// in-stage and DP-sync shares the report gives are the truth's, summed over the iterations. No
// context-parallel ring (p2p inside a stage) forms a pipeline or leaves a transfer unmatched.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "job/job.h"
#include "synth/synthetic_job.h"

namespace bubblescope {
namespace {

// A Megatron-style job: equal stages, 8 microbatches, two iterations, a little noise.
sim::Config GridConfig(sim::Schedule schedule, int32_t p, const sim::ModelParallel& parallel) {
  sim::Config config;
  config.schedule = schedule;
  config.stages = p;
  config.virtual_stages = schedule == sim::Schedule::kInterleaved1F1B ? 2 : 1;
  config.microbatches = 8;
  config.iterations = 2;
  config.costs.assign(static_cast<size_t>(p),
                      sim::StageCost{.forward = 1'000'000, .backward = 2'000'000});
  config.activation_bytes = 16 << 20;
  config.link = sim::Link{.gbps = 400.0, .latency_ns = 5'000};
  config.launch_gap_ns = 5'000;
  config.optimizer_ns = 300'000;
  config.jitter = 0.02;
  config.parallel = parallel;
  return config;
}

// Simulates `config`, analyzes its trace and checks every pipeline against the truth.
void ExpectEveryPipelineMatchesTruth(const sim::Config& config) {
  const sim::ModelParallel& parallel = config.parallel;
  const int32_t replicas = parallel.tensor * parallel.context * parallel.data;
  absl::StatusOr<sim::Simulation> simulation = sim::Simulate(config);
  ASSERT_TRUE(simulation.ok()) << simulation.status();
  ASSERT_EQ(simulation->trace.ranks.size(), static_cast<size_t>(replicas * config.stages));
  absl::StatusOr<job::Result> result = job::Analyze(simulation->trace, job::Options{});
  ASSERT_TRUE(result.ok()) << result.status();
  // One pipeline per replica, none of them a context-parallel ring.
  ASSERT_EQ(result->pipelines.size(), static_cast<size_t>(replicas));
  const sim::Truth& truth = simulation->truth;
  TimeNs in_stage = 0;
  TimeNs dp_sync = 0;
  for (const sim::IterationTruth& iteration : truth.iterations) {
    for (const sim::RankIterationTruth& rank : iteration.ranks) {
      in_stage += rank.split.in_stage_comm;
      dp_sync += rank.split.dp_sync;
    }
  }
  EXPECT_GT(in_stage, 0);  // every job exposes some of its in-stage communication
  EXPECT_EQ(dp_sync > 0, parallel.data * parallel.context > 1 && parallel.dp_sync_ns > 0);
  std::vector<int32_t> first_ranks;
  for (const job::Pipeline& pipeline : result->pipelines) {
    ASSERT_TRUE(pipeline.shape.has_value()) << pipeline.shape_problem;
    EXPECT_EQ(pipeline.shape->p, config.stages);
    EXPECT_EQ(pipeline.shape->m, config.microbatches);
    EXPECT_EQ(pipeline.shape->v, config.virtual_stages);
    // Megatron-Core's order tp-cp-dp-pp: a pipeline's stage s runs on its first rank plus
    // s x (tensor x context x data).
    ASSERT_EQ(pipeline.shape->stage_order.size(), static_cast<size_t>(config.stages));
    const int32_t first = pipeline.shape->stage_order[0];
    for (int32_t s = 0; s < config.stages; ++s) {
      EXPECT_EQ(pipeline.shape->stage_order[static_cast<size_t>(s)], first + s * replicas);
    }
    first_ranks.push_back(first);
    EXPECT_NEAR(pipeline.bubble.bubble_fraction, truth.bubble_fraction, 0.005);
    TimeNs measured_in_stage = 0;
    TimeNs measured_dp_sync = 0;
    for (const bubble::RankTotals& rank : pipeline.bubble.per_rank) {
      measured_in_stage += rank.split.in_stage_comm;
      measured_dp_sync += rank.split.dp_sync;
    }
    // Same kernels, on the truth's clock up to the pipeline's alignment.
    EXPECT_NEAR(static_cast<double>(measured_in_stage), static_cast<double>(in_stage),
                0.01 * static_cast<double>(in_stage) + 1000.0);
    EXPECT_NEAR(static_cast<double>(measured_dp_sync), static_cast<double>(dp_sync),
                0.01 * static_cast<double>(dp_sync) + 1000.0);
    // Every pipeline hand-off matched, and no ring transfer taken for one: each link joins two
    // of the pipeline's stages, one hop apart (interleaved: the last stage also feeds the first).
    EXPECT_TRUE(pipeline.crossrank.unmatched.empty());
    EXPECT_FALSE(pipeline.crossrank.links.empty());
    for (const link_stats::Link& link : pipeline.crossrank.links) {
      const int32_t hop = (link.dst - link.src) / replicas;
      EXPECT_EQ((link.src - first) % replicas, 0) << link.src << "->" << link.dst;
      EXPECT_TRUE(hop == 1 || hop == -1 || std::abs(hop) == config.stages - 1)
          << link.src << "->" << link.dst;
    }
    for (const findings::Finding& finding : pipeline.findings.findings) {
      EXPECT_NE(finding.kind, findings::Kind::kUnmatchedP2p) << finding.message;
    }
  }
  // Every replica's pipeline, each once.
  std::sort(first_ranks.begin(), first_ranks.end());
  for (int32_t r = 0; r < static_cast<int32_t>(first_ranks.size()); ++r) {
    EXPECT_EQ(first_ranks[static_cast<size_t>(r)], r);
  }
}

TEST(ModelParallelGridTest, TensorAndDataParallelPipelinesMatchTheTruth) {
  int64_t jobs = 0;
  for (int32_t tensor : {2, 4, 8}) {
    for (int32_t p : {2, 4}) {
      for (bool sequence_parallel : {false, true}) {
        for (bool overlap : {false, true}) {
          for (int32_t data : {1, 2}) {
            SCOPED_TRACE(absl::StrCat("tp=", tensor, " pp=", p, " sp=", sequence_parallel,
                                      " overlap=", overlap, " dp=", data));
            ExpectEveryPipelineMatchesTruth(
                GridConfig(sim::Schedule::k1F1B, p,
                           sim::ModelParallel{.tensor = tensor,
                                              .data = data,
                                              .sequence_parallel = sequence_parallel,
                                              .overlap = overlap,
                                              .tensor_share = 0.15,
                                              .dp_sync_ns = 400'000}));
            ++jobs;
          }
        }
      }
    }
  }
  EXPECT_EQ(jobs, 48);
}

// Ring attention's exchanges are p2p on the context-parallel group: in-stage work that must
// neither form a pipeline nor be taken for a pipeline's hand-off. A 200 us exchange is longer
// than some attention steps (exposed) and shorter than others (hidden).
TEST(ModelParallelGridTest, ContextParallelRingsStayInsideTheirStage) {
  int64_t jobs = 0;
  for (int32_t context : {2, 4}) {
    for (int32_t p : {2, 4}) {
      for (sim::Schedule schedule : {sim::Schedule::k1F1B, sim::Schedule::kInterleaved1F1B}) {
        for (int32_t tensor : {1, 2}) {
          for (int32_t data : {1, 2}) {
            SCOPED_TRACE(absl::StrCat("cp=", context, " pp=", p, " ",
                                      std::string(sim::ScheduleName(schedule)), " tp=", tensor,
                                      " dp=", data));
            sim::Config config = GridConfig(schedule, p,
                                            sim::ModelParallel{.tensor = tensor,
                                                               .data = data,
                                                               .sequence_parallel = tensor > 1,
                                                               .dp_sync_ns = 400'000,
                                                               .context = context,
                                                               .context_exchange_ns = 200'000});
            // Half the jobs hand off in Megatron's batches (coalesced kernels, like the two-rank
            // ring's), half launch their backward from torch's autograd thread.
            if (tensor > 1) config.p2p = sim::P2pStyle::kBatched;
            if (data > 1) config.launches = sim::LaunchStyle::kTorch;
            ExpectEveryPipelineMatchesTruth(config);
            ++jobs;
          }
        }
      }
    }
  }
  EXPECT_EQ(jobs, 32);
}

// MoE all-to-alls over the expert-parallel group (laid over context x data ranks), beside
// tensor and context parallelism.
TEST(ModelParallelGridTest, ExpertParallelAllToAllsAreStageWork) {
  int64_t jobs = 0;
  for (int32_t expert : {2, 4}) {
    for (int32_t p : {2, 4}) {
      for (int32_t context : {1, 2}) {
        SCOPED_TRACE(absl::StrCat("ep=", expert, " pp=", p, " cp=", context));
        ExpectEveryPipelineMatchesTruth(
            GridConfig(sim::Schedule::k1F1B, p,
                       sim::ModelParallel{.tensor = 2,
                                          .data = 4 / context,
                                          .dp_sync_ns = 400'000,
                                          .context = context,
                                          .context_exchange_ns = 200'000,
                                          .expert = expert,
                                          .expert_share = 0.2}));
        ++jobs;
      }
    }
  }
  EXPECT_EQ(jobs, 8);
}

}  // namespace
}  // namespace bubblescope
