// Test helpers for cross-rank tests: a DP x PP job built by merging independently simulated
// pipelines under disjoint rank ids (replica j's rank r becomes j * p + r), and lookups into the
// simulator's truth.
#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "bubblescope/trace.h"
#include "gtest/gtest.h"
#include "synth/synthetic_job.h"

namespace bubblescope::crossrank_testing {

// Moves every rank of `replicas` into one trace; replica j's ranks (and the peers and process
// groups they name) are renumbered by j * (ranks per replica).
inline Trace MergeReplicas(std::vector<sim::Simulation>& replicas) {
  Trace job;
  int32_t total = 0;
  for (const sim::Simulation& replica : replicas) {
    total += static_cast<int32_t>(replica.trace.ranks.size());
  }
  int32_t base = 0;
  for (sim::Simulation& replica : replicas) {
    const int32_t size = static_cast<int32_t>(replica.trace.ranks.size());
    for (Rank& rank : replica.trace.ranks) {
      rank.rank += base;
      rank.world_size = total;
      for (CommInfo& comm : rank.comms) {
        if (comm.peer >= 0) comm.peer += base;
      }
      for (ProcessGroup& group : rank.process_groups) {
        for (int32_t& member : group.ranks) member += base;
      }
      job.ranks.push_back(std::move(rank));
    }
    replica.trace.ranks.clear();
    base += size;
  }
  return job;
}

// A 4-stage 1F1B pipeline of 8 microbatches whose transfers take about a tenth of a forward pass
// (8 MiB at 100 Gbit/s beside 300 us forwards): the base of the multi-host clock cases, which add
// their hosts, clocks and replicas.
inline sim::Config FourStageHostJob() {
  sim::Config config;
  config.stages = 4;
  config.microbatches = 8;
  config.costs.assign(4, sim::StageCost{.forward = 300000, .backward = 600000, .weight_grad = 0});
  config.activation_bytes = 8 << 20;
  config.link = sim::Link{.gbps = 100, .latency_ns = 5000};
  config.jitter = 0.05;
  return config;
}

// `replicas` pipelines of p = 4 (a DP x PP job), each replica with its own costs, clock offsets
// and seed, so that every pipeline's figures differ from the others'.
inline Trace DataParallelJob(int32_t replicas, sim::Schedule schedule) {
  std::vector<sim::Simulation> simulations;
  for (int32_t j = 0; j < replicas; ++j) {
    sim::Config config;
    config.schedule = schedule;
    config.stages = 4;
    config.microbatches = 8;
    config.virtual_stages = schedule == sim::Schedule::kInterleaved1F1B ? 2 : 1;
    config.iterations = 3;
    config.costs.assign(
        4,
        sim::StageCost{.forward = 200000 + 30000 * j, .backward = 400000, .weight_grad = 150000});
    config.activation_bytes = 8 << 20;
    config.link = sim::Link{.gbps = 100, .latency_ns = 0};
    config.launch_gap_ns = 2000;
    config.optimizer_ns = 50000;
    config.jitter = 0.05;
    config.seed = static_cast<uint64_t>(j + 1);
    config.clock_offsets_ns = {1000 * j, -20'000'000 + j, 30'000'000, 5'000 * j};
    absl::StatusOr<sim::Simulation> simulation = sim::Simulate(config);
    EXPECT_TRUE(simulation.ok()) << simulation.status();
    if (simulation.ok()) simulations.push_back(*std::move(simulation));
  }
  return MergeReplicas(simulations);
}

// The first compute kernel start of `rank` in the engine's records (true clock): later the
// further down the pipeline the rank's stage is.
inline TimeNs FirstComputeStart(const sim::Records& records, int32_t rank) {
  TimeNs first = INT64_MAX;
  for (const sim::KernelRecord& kernel : records.ranks[static_cast<size_t>(rank)].kernels) {
    if (kernel.role == sim::KernelRole::kCompute) first = std::min(first, kernel.start);
  }
  return first;
}

}  // namespace bubblescope::crossrank_testing
