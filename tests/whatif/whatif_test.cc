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
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "job/job.h"
#include "simulator/simulator.h"

namespace bubblescope::whatif {
namespace {

using sim::Schedule;

struct Job {
  Schedule schedule;
  int32_t p;
  int32_t m;
  bool imbalanced;
};

sim::Config Measured(const Job& job) {
  sim::Config config;
  config.schedule = job.schedule;
  config.stages = job.p;
  config.microbatches = job.m;
  config.virtual_stages = job.schedule == Schedule::kInterleaved1F1B ? 2 : 1;
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
  config.weights_bytes.assign(static_cast<size_t>(job.p), int64_t{2} << 30);
  config.activation_stash_bytes = int64_t{64} << 20;
  return config;
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
  const bool zb = candidate.schedule == Schedule::kZeroBubbleH1;
  for (sim::StageCost& cost : config.costs) {
    const TimeNs whole = cost.backward + cost.weight_grad;
    cost.weight_grad = zb ? (measured.schedule == Schedule::kZeroBubbleH1 ? cost.weight_grad
                                                                          : whole / 2)
                          : 0;
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
                            " m=", job.m, job.imbalanced ? " imbalanced" : ""));
  absl::StatusOr<sim::Simulation> simulation = sim::Simulate(measured);
  ASSERT_TRUE(simulation.ok()) << simulation.status();
  absl::StatusOr<job::Result> analysed = job::Analyze(simulation->trace, job::Options{});
  ASSERT_TRUE(analysed.ok()) << analysed.status();
  ASSERT_EQ(analysed->pipelines.size(), 1u);
  const job::Pipeline& pipeline = analysed->pipelines[0];
  ASSERT_TRUE(pipeline.shape.has_value());
  const Input input{.trace = &simulation->trace,
                    .shape = &*pipeline.shape,
                    .bubble = &pipeline.bubble,
                    .links = &pipeline.crossrank.links};
  // The defaults, and twice the microbatches over the same samples.
  std::vector<Candidate> candidates = DefaultCandidates(*pipeline.shape);
  candidates.push_back(Candidate{job.schedule, 2 * job.m, measured.virtual_stages, true});
  absl::StatusOr<Result> result = Analyze(input, candidates);
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_FALSE(result->candidates.empty());

  // The baseline reproduces the measured job.
  EXPECT_NEAR(result->baseline.bubble_fraction, simulation->truth.bubble_fraction, 0.01);
  EXPECT_NEAR(static_cast<double>(result->baseline.iteration_ns),
              static_cast<double>(simulation->truth.latency_p50_ns),
              0.02 * static_cast<double>(simulation->truth.latency_p50_ns));

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
    for (const StageMemory& stage : prediction.memory) {
      const double truth_peak =
          static_cast<double>(direct->truth.memory[static_cast<size_t>(stage.rank)].peak_allocated_bytes);
      EXPECT_NEAR(static_cast<double>(stage.peak_allocated_bytes), truth_peak, 0.01 * truth_peak)
          << "stage " << stage.stage;
      worst->memory_relative =
          std::max(worst->memory_relative,
                   std::abs(static_cast<double>(stage.peak_allocated_bytes) - truth_peak) /
                       truth_peak);
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
  std::cout << worst.predictions << " predictions; largest errors: bubble "
            << worst.bubble_points << " points, iteration " << 100.0 * worst.iteration_relative
            << "%, peak memory " << 100.0 * worst.memory_relative << "%\n";
}

}  // namespace
}  // namespace bubblescope::whatif
