// What-if predictions against the truth. A job is simulated, its trace analysed as `analyze`
// does, and the what-if model built from that measurement predicts other configurations; each
// prediction must match simulating that configuration directly (the same stage costs and links,
// the new m, schedule or v) within 1 point of bubble and 2% of iteration time (the issue's
// bounds), and its memory per stage within 1%, over a grid of schedules, p, m and imbalances.
#include "whatif/whatif.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "job/job.h"
#include "synth/synthetic_job.h"

namespace bubblescope::whatif {
namespace {

using sim::Schedule;

struct Job {
  Schedule schedule;
  int32_t p;
  int32_t m;
  bool imbalanced;
  sim::P2pStyle p2p = sim::P2pStyle::kPerOp;
  int32_t v = 0;  // chunks per rank; 0: 2 for interleaved, else 1
};

sim::Config Measured(const Job& job) {
  sim::Config config;
  config.schedule = job.schedule;
  config.stages = job.p;
  config.microbatches = job.m;
  config.virtual_stages = job.v > 0 ? job.v : job.schedule == Schedule::kInterleaved1F1B ? 2 : 1;
  config.iterations = 2;
  const bool zb = job.schedule == Schedule::kZeroBubbleH1;
  config.costs.assign(static_cast<size_t>(job.p),
                      sim::StageCost{.forward = 1'000'000,
                                     .backward = zb ? 1'000'000 : 2'000'000,
                                     .weight_grad = zb ? 1'000'000 : 0});
  if (job.imbalanced) {
    config.costs[static_cast<size_t>(job.p / 2)] =
        sim::StageCost{.forward = 1'300'000,
                       .backward = zb ? 1'300'000 : 2'600'000,
                       .weight_grad = zb ? 1'300'000 : 0};
  }
  config.kernels_per_op = 2;
  config.activation_bytes = int64_t{8} << 20;
  config.link = sim::Link{.gbps = 200.0, .latency_ns = 10'000};
  config.p2p = job.p2p;
  // Batched jobs as torch runs Megatron-LM's: the backward launched from the autograd thread,
  // each launch and c10d call taking host time (the CLI's default 5 us).
  if (job.p2p == sim::P2pStyle::kBatched) {
    config.launch_gap_ns = 5'000;
  }
  config.weights_bytes.assign(static_cast<size_t>(job.p), int64_t{2} << 30);
  config.activation_stash_bytes = int64_t{64} << 20;
  return config;
}

constexpr int32_t kLayersPerStage = 4;

// One layer off the middle stage (the slow one of an imbalanced job) onto the stage before it.
std::vector<int32_t> MovedLayers(int32_t p) {
  std::vector<int32_t> layers(static_cast<size_t>(p), kLayersPerStage);
  --layers[static_cast<size_t>(p / 2)];
  ++layers[static_cast<size_t>(p / 2 - 1)];
  return layers;
}

// The configuration a candidate names, simulated directly: the measured job's stage costs and
// links with the candidate's schedule, m and v; a whole backward split evenly into B and W for
// a zero-bubble candidate (the model's stated assumption), B and W merged for the others, and
// a microbatch's activations spread over the candidate's chunks.
sim::Config Direct(const sim::Config& measured, const Candidate& candidate) {
  sim::Config config = measured;
  config.schedule = candidate.schedule;
  config.microbatches = candidate.microbatches;
  config.virtual_stages = candidate.virtual_stages;
  config.iterations = 1;
  // Megatron-LM batches transfers in its 1F1B and interleaved schedules only; other schedules
  // post one kernel per transfer (whatif.h, Model::batched_p2p).
  if (candidate.schedule != Schedule::k1F1B && candidate.schedule != Schedule::kInterleaved1F1B) {
    config.p2p = sim::P2pStyle::kPerOp;
  }
  // A chunk holds 1/v of a stage's layers, so it stashes 1/v of a microbatch's activations; the
  // same samples in m' microbatches make each microbatch's compute, activations and messages
  // m / m' of the measured ones.
  const int64_t samples = candidate.same_global_batch ? measured.microbatches : 1;
  const int64_t split = candidate.same_global_batch ? candidate.microbatches : 1;
  config.activation_stash_bytes = measured.activation_stash_bytes * measured.virtual_stages *
                                  samples / (candidate.virtual_stages * split);
  config.activation_bytes = measured.activation_bytes * samples / split;
  for (sim::StageCost& cost : config.costs) {
    cost.forward = cost.forward * samples / split;
    cost.backward = cost.backward * samples / split;
    cost.weight_grad = cost.weight_grad * samples / split;
  }
  if (!candidate.layers_per_stage.empty()) {
    // The first of the middle stage's four layers moves back: it leaves 3/4 of its cost and
    // the stage before gains that 1/4 (every cost here divides by 4).
    sim::StageCost& giver = config.costs[static_cast<size_t>(measured.stages / 2)];
    sim::StageCost& taker = config.costs[static_cast<size_t>(measured.stages / 2 - 1)];
    taker.forward += giver.forward / 4;
    taker.backward += giver.backward / 4;
    taker.weight_grad += giver.weight_grad / 4;
    giver.forward -= giver.forward / 4;
    giver.backward -= giver.backward / 4;
    giver.weight_grad -= giver.weight_grad / 4;
  }
  const bool zb = candidate.schedule == Schedule::kZeroBubbleH1;
  for (sim::StageCost& cost : config.costs) {
    const TimeNs whole = cost.backward + cost.weight_grad;
    cost.weight_grad =
        zb ? (measured.schedule == Schedule::kZeroBubbleH1 ? cost.weight_grad : whole / 2) : 0;
    cost.backward = whole - cost.weight_grad;
  }
  return config;
}

// The largest errors over the grid, printed at the end (the issue asks for them).
struct Worst {
  double bubble_points = 0.0;
  double iteration_relative = 0.0;
  double memory_relative = 0.0;
  int predictions = 0;
};

void CheckJob(const Job& job, Worst* worst) {
  const sim::Config measured = Measured(job);
  SCOPED_TRACE(absl::StrCat(std::string(sim::ScheduleName(job.schedule)), " p=", job.p,
                            " m=", job.m, " v=", measured.virtual_stages,
                            job.imbalanced ? " imbalanced" : ""));
  absl::StatusOr<sim::Simulation> simulation = sim::Simulate(measured);
  ASSERT_TRUE(simulation.ok()) << simulation.status();
  job::Options options;
  options.layers_per_stage.assign(static_cast<size_t>(job.p), kLayersPerStage);
  absl::StatusOr<job::Result> analysed = job::Analyze(simulation->trace, options);
  ASSERT_TRUE(analysed.ok()) << analysed.status();
  ASSERT_EQ(analysed->pipelines.size(), 1u);
  const job::Pipeline& pipeline = analysed->pipelines[0];
  ASSERT_TRUE(pipeline.model.has_value()) << pipeline.model_problem;
  // The defaults, twice the microbatches over the same samples, and one layer moved off the
  // middle stage to the one before it.
  std::vector<Candidate> candidates = DefaultCandidates(*pipeline.model);
  candidates.push_back(Candidate{job.schedule, 2 * job.m, measured.virtual_stages, true, {}});
  candidates.push_back(
      Candidate{job.schedule, job.m, measured.virtual_stages, false, MovedLayers(job.p)});
  absl::StatusOr<Result> result = Analyze(*pipeline.model, candidates);
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_FALSE(result->candidates.empty());

  // The baseline reproduces the measured job.
  EXPECT_NEAR(result->baseline.bubble_fraction, simulation->truth.bubble_fraction, 0.01);
  EXPECT_NEAR(static_cast<double>(result->baseline.iteration_ns),
              static_cast<double>(simulation->truth.latency_p50_ns),
              0.02 * static_cast<double>(simulation->truth.latency_p50_ns));
  // Every transfer free (the transfer_time cause's saving): the job on infinitely fast links.
  absl::StatusOr<Prediction> free_links = PredictAsMeasured(WithFreeLinks(*pipeline.model));
  ASSERT_TRUE(free_links.ok()) << free_links.status();
  sim::Config free_config = measured;
  free_config.iterations = 1;
  free_config.link = sim::Link{.gbps = std::numeric_limits<double>::infinity(), .latency_ns = 0};
  absl::StatusOr<sim::Simulation> free_direct = sim::Simulate(free_config);
  ASSERT_TRUE(free_direct.ok()) << free_direct.status();
  const double free_truth = static_cast<double>(free_direct->truth.latency_max_ns);
  EXPECT_NEAR(static_cast<double>(free_links->iteration_ns), free_truth, 0.02 * free_truth);

  for (const Prediction& prediction : result->candidates) {
    SCOPED_TRACE(CandidateLabel(prediction.candidate));
    ASSERT_TRUE(prediction.problem.empty()) << prediction.problem;
    absl::StatusOr<sim::Simulation> direct = sim::Simulate(Direct(measured, prediction.candidate));
    ASSERT_TRUE(direct.ok()) << direct.status();
    EXPECT_NEAR(prediction.bubble_fraction, direct->truth.bubble_fraction, 0.01);
    const double truth_iteration = static_cast<double>(direct->truth.latency_max_ns);
    ++worst->predictions;
    worst->bubble_points =
        std::max(worst->bubble_points,
                 100.0 * std::abs(prediction.bubble_fraction - direct->truth.bubble_fraction));
    worst->iteration_relative = std::max(
        worst->iteration_relative,
        std::abs(static_cast<double>(prediction.iteration_ns) - truth_iteration) / truth_iteration);
    EXPECT_NEAR(static_cast<double>(prediction.iteration_ns), truth_iteration,
                0.02 * truth_iteration);
    ASSERT_EQ(prediction.memory.size(), static_cast<size_t>(job.p));
    // The simulator stashes the same activation on every stage, so it cannot hold a layer
    // move's; WhatIfTest.LayerMoveMemoryByHand checks that.
    if (!prediction.candidate.layers_per_stage.empty()) continue;
    for (const StageMemory& stage : prediction.memory) {
      const double truth_peak = static_cast<double>(
          direct->truth.memory[static_cast<size_t>(stage.rank)].peak_allocated_bytes);
      EXPECT_NEAR(static_cast<double>(stage.peak_allocated_bytes), truth_peak, 0.01 * truth_peak)
          << "stage " << stage.stage;
      worst->memory_relative = std::max(
          worst->memory_relative,
          std::abs(static_cast<double>(stage.peak_allocated_bytes) - truth_peak) / truth_peak);
    }
  }
}

TEST(WhatIfTest, PredictionsMatchDirectSimulationOverTheGrid) {
  Worst worst;
  for (Schedule schedule :
       {Schedule::kGpipe, Schedule::k1F1B, Schedule::kInterleaved1F1B, Schedule::kZeroBubbleH1}) {
    for (int32_t p : {2, 4, 8}) {
      for (int32_t m : {8, 16}) {
        for (bool imbalanced : {false, true}) CheckJob(Job{schedule, p, m, imbalanced}, &worst);
      }
    }
  }
  std::cout << worst.predictions << " predictions; largest errors: bubble " << worst.bubble_points
            << " points, iteration " << 100.0 * worst.iteration_relative << "%, peak memory "
            << 100.0 * worst.memory_relative << "%\n";
}

// GPipe over v chunks per rank (torch's ScheduleLoopedBFS) is modelled on its own program: the
// as-measured baseline reproduces the job and every candidate (more microbatches, interleaved
// 1F1B on the same chunks, zero bubble, a layer moved) matches its direct simulation.
TEST(WhatIfTest, LoopedGpipePredictionsMatchDirectSimulation) {
  Worst worst;
  for (int32_t v : {2, 3}) {
    for (int32_t p : {2, 4}) {
      for (int32_t m : {8, 16}) {
        for (bool imbalanced : {false, true}) {
          CheckJob(Job{Schedule::kGpipe, p, m, imbalanced, sim::P2pStyle::kPerOp, v}, &worst);
        }
      }
    }
  }
  // The interleaved candidate is offered on the same v.
  absl::StatusOr<sim::Simulation> simulation =
      sim::Simulate(Measured(Job{Schedule::kGpipe, 4, 8, false, sim::P2pStyle::kPerOp, 2}));
  ASSERT_TRUE(simulation.ok()) << simulation.status();
  absl::StatusOr<job::Result> analysed = job::Analyze(simulation->trace, job::Options{});
  ASSERT_TRUE(analysed.ok()) << analysed.status();
  ASSERT_EQ(analysed->pipelines.size(), 1u);
  ASSERT_TRUE(analysed->pipelines[0].model.has_value());
  const Model& model = *analysed->pipelines[0].model;
  EXPECT_EQ(model.schedule, Schedule::kGpipe);
  EXPECT_EQ(model.v, 2);
  bool interleaved = false;
  for (const Candidate& candidate : DefaultCandidates(model)) {
    interleaved |=
        candidate.schedule == Schedule::kInterleaved1F1B && candidate.virtual_stages == 2;
  }
  EXPECT_TRUE(interleaved);
}

// Megatron-LM's batched p2p (batch_isend_irecv: the transfers a rank posts between two ops share
// one kernel, which ends with the last of them) in its 1F1B and interleaved schedules. Modelled
// as one kernel per transfer, p = 8 interleaved m = 64 came out 292.1 ms against 253.5 ms
// measured, and free transfers were predicted to save 89.6 ms instead of 50.7 ms.
TEST(WhatIfTest, BatchedTransfersMatchDirectSimulation) {
  Worst worst;
  for (Schedule schedule : {Schedule::k1F1B, Schedule::kInterleaved1F1B}) {
    for (int32_t p : {4, 8}) {
      for (bool imbalanced : {false, true}) {
        CheckJob(Job{schedule, p, 16, imbalanced, sim::P2pStyle::kBatched}, &worst);
      }
    }
  }
  std::cout << worst.predictions << " batched predictions; largest errors: bubble "
            << worst.bubble_points << " points, iteration " << 100.0 * worst.iteration_relative
            << "%\n";
}

// A layer move's memory, worked by hand. p=2 1F1B: stage 0 holds 2 microbatches in flight,
// stage 1 holds 1. Stage 0: floor 1000, 100 per microbatch (peak 1200); stage 1: floor 2000, 60
// (peak 2060); 2 layers each. Moving to 1,3 gives stage 0 half of its own (floor 500,
// activation 50: peak 600) and stage 1 the other half plus its own (floor 2500, activation 110:
// peak 2610), a rise of 550 over its 500 bytes of headroom.
TEST(WhatIfTest, LayerMoveMemoryByHand) {
  Model model;
  model.schedule = Schedule::k1F1B;
  model.p = 2;
  model.m = 4;
  model.stages = {StageModel{.rank = 0,
                             .forward_ns = 1e6,
                             .backward_ns = 2e6,
                             .weight_grad_ns = 0,
                             .memory_floor_bytes = 1000,
                             .memory_peak_bytes = 1200,
                             .memory_headroom_bytes = 10000,
                             .layers = 2},
                  StageModel{.rank = 1,
                             .forward_ns = 1e6,
                             .backward_ns = 2e6,
                             .weight_grad_ns = 0,
                             .memory_floor_bytes = 2000,
                             .memory_peak_bytes = 2060,
                             .memory_headroom_bytes = 500,
                             .layers = 2}};
  model.links = {LinkCost{0, 1, 1000}, LinkCost{1, 0, 1000}};
  Candidate moved = AsMeasured(model);
  moved.layers_per_stage = {1, 3};
  absl::StatusOr<Result> result = Analyze(model, {moved});
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_EQ(result->baseline.memory.size(), 2u);
  EXPECT_EQ(result->baseline.memory[0].peak_allocated_bytes, 1200);
  EXPECT_EQ(result->baseline.memory[1].peak_allocated_bytes, 2060);
  const Prediction& after = result->candidates.at(0);
  ASSERT_TRUE(after.problem.empty()) << after.problem;
  ASSERT_EQ(after.memory.size(), 2u);
  EXPECT_EQ(after.memory[0].peak_allocated_bytes, 600);
  EXPECT_EQ(after.memory[1].peak_allocated_bytes, 2610);
  EXPECT_EQ(after.fits_memory, std::optional<bool>(false));

  // Without the measured split there is no move to make.
  model.stages[1].layers = 0;
  result = Analyze(model, {moved});
  ASSERT_TRUE(result.ok());
  EXPECT_NE(result->candidates.at(0).problem.find("layers per stage are unknown"),
            std::string::npos);
}

// Memory figures beyond 2^53 bytes (a hand-made model, a damaged report) are refused, and every
// prediction of memory stays in range: a peak of 2^63 - 1 bytes became -2^63.
TEST(WhatIfTest, MemoryFiguresOutOfRangeAreRefusedAndPredictionsNeverWrap) {
  Model model;
  model.schedule = Schedule::k1F1B;
  model.p = 1;
  model.m = 2;
  model.stages = {StageModel{.rank = 0,
                             .forward_ns = 1e6,
                             .backward_ns = 2e6,
                             .weight_grad_ns = 0,
                             .memory_floor_bytes = 0,
                             .memory_peak_bytes = std::numeric_limits<int64_t>::max(),
                             .memory_headroom_bytes = -1,
                             .layers = 0}};
  absl::Status valid = ValidateModel(model);
  EXPECT_NE(std::string(valid.message()).find("memory figure outside 0 to 2^53 bytes"),
            std::string::npos)
      << valid;
  // At the bound itself, GPipe with four times the microbatches holds 8 in flight where 1F1B
  // on one stage held 1: 2^56 bytes, past the bound. Written, such a figure (2^55 or a peak
  // saturated at 2^63 - 1) would be refused by the report's own readers, so the candidate has
  // no memory figure, fits no device, and a note says why; a candidate within the bound keeps
  // its figure.
  model.stages[0].memory_peak_bytes = kMaxMemoryBytes;
  ASSERT_TRUE(ValidateModel(model).ok());
  Candidate more = AsMeasured(model);
  more.microbatches = 8;
  more.schedule = Schedule::kGpipe;
  Candidate fewer = AsMeasured(model);
  fewer.microbatches = 1;
  absl::StatusOr<Result> result = Analyze(model, {more, fewer});
  ASSERT_TRUE(result.ok()) << result.status();
  const Prediction& past = result->candidates.at(0);
  EXPECT_TRUE(past.problem.empty()) << past.problem;
  EXPECT_TRUE(past.memory.empty());
  EXPECT_TRUE(past.memory_past_bound);
  EXPECT_EQ(past.fits_memory, std::optional<bool>(false));
  EXPECT_THAT(result->notes,
              ::testing::Contains("gpipe m=8 v=1: a predicted peak past 2^53 bytes (8 PiB, the "
                                  "most a memory figure holds): no memory figure, and it fits no "
                                  "device"));
  ASSERT_EQ(result->candidates.at(1).memory.size(), 1u);
  EXPECT_EQ(result->candidates.at(1).memory[0].peak_allocated_bytes, kMaxMemoryBytes);
  ASSERT_EQ(result->baseline.memory.size(), 1u);
  EXPECT_EQ(result->baseline.memory[0].peak_allocated_bytes, kMaxMemoryBytes);
}

// Two stages are each other's only neighbour: an inference job measures 0 -> 1 only, and the
// unmeasured 1 -> 0 is added once (twice was a simulator error: a repeated link).
TEST(WhatIfTest, TwoStageInferenceIsModelled) {
  sim::Config config;
  config.schedule = Schedule::kForwardOnly;
  config.stages = 2;
  config.microbatches = 4;
  config.iterations = 2;
  config.costs.assign(2, sim::StageCost{.forward = 1'000'000, .backward = 0});
  config.activation_bytes = int64_t{8} << 20;
  config.link = sim::Link{.gbps = 200.0, .latency_ns = 10'000};
  absl::StatusOr<sim::Simulation> simulation = sim::Simulate(config);
  ASSERT_TRUE(simulation.ok()) << simulation.status();
  absl::StatusOr<job::Result> analysed = job::Analyze(simulation->trace, job::Options{});
  ASSERT_TRUE(analysed.ok()) << analysed.status();
  ASSERT_TRUE(analysed->pipelines.at(0).model.has_value());
  absl::StatusOr<Result> result = Analyze(*analysed->pipelines[0].model, {});
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_NEAR(static_cast<double>(result->baseline.iteration_ns),
              static_cast<double>(simulation->truth.latency_p50_ns),
              0.02 * static_cast<double>(simulation->truth.latency_p50_ns));
}

// A zero-bubble job with two chunks per rank is modelled as ZB-H1, whose one chunk holds the
// rank's whole time: the measured configuration and every default candidate have v = 1.
TEST(WhatIfTest, MultiChunkZeroBubbleIsModelledWithOneChunk) {
  Model model;
  model.schedule = Schedule::kZeroBubbleH1;
  model.multi_chunk_zero_bubble = true;
  model.p = 2;
  model.m = 4;
  model.v = 2;
  model.separate_weight_grad = true;
  for (int32_t rank : {0, 1}) {
    model.stages.push_back(
        StageModel{.rank = rank, .forward_ns = 2e6, .backward_ns = 2e6, .weight_grad_ns = 2e6});
  }
  EXPECT_EQ(AsMeasured(model).virtual_stages, 1);
  absl::StatusOr<Result> result = Analyze(model, {});
  ASSERT_TRUE(result.ok()) << result.status();
  // ZB-H1 with F = B = W = 2 ms, p = 2, m = 4: (p-1)/(3m+p-1) = 1/13 of the window idle.
  EXPECT_NEAR(result->baseline.bubble_fraction, 1.0 / 13.0, 1e-9);
  ASSERT_FALSE(result->candidates.empty());
  for (const Prediction& prediction : result->candidates) {
    EXPECT_EQ(prediction.candidate.virtual_stages, 1);
    EXPECT_TRUE(prediction.problem.empty()) << prediction.problem;
  }
}

}  // namespace
}  // namespace bubblescope::whatif
