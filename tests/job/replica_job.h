// A data-parallel job with one slow replica, for the tests of the replica fold
// (job/replica_sets.h) and of the reports that show it: DP 4 x PP 2, 1F1B, m = 4, laid out as
// Megatron-Core does (global rank = replica + 4 * stage), each rank declaring its
// DATA_PARALLEL_GROUP_WITH_CP through the gradient all-reduce. Replica 3 (ranks 3 and 7) comes from
// a second simulation of the same job in which stage 1's forward takes 1.5 ms instead of 1 ms;
// every other rank from the first. Each pipeline's ranks come from one simulation, so each
// pipeline is internally consistent and its truth is that simulation's.
#pragma once

#include <cstdint>
#include <utility>

#include "bubblescope/trace.h"
#include "synth/synthetic_job.h"

namespace bubblescope::replica_testing {

inline constexpr int32_t kReplicas = 4;
inline constexpr int32_t kSlowReplica = 3;
inline constexpr TimeNs kForwardNs = 1'000'000;
inline constexpr TimeNs kSlowForwardNs = 1'500'000;
inline constexpr TimeNs kBackwardNs = 2'000'000;
inline constexpr int32_t kMicrobatches = 4;

inline sim::Config DataParallelJob(TimeNs stage1_forward_ns) {
  sim::Config config;
  config.schedule = sim::Schedule::k1F1B;
  config.stages = 2;
  config.microbatches = kMicrobatches;
  config.iterations = 3;
  config.costs = {sim::StageCost{.forward = kForwardNs, .backward = kBackwardNs},
                  sim::StageCost{.forward = stage1_forward_ns, .backward = kBackwardNs}};
  config.activation_bytes = 16 << 20;
  config.link = sim::Link{.gbps = 400.0, .latency_ns = 5'000};
  config.launch_gap_ns = 5'000;
  config.weights_bytes.assign(2, int64_t{2} << 30);   // simulate's defaults: 2 GiB of weights,
  config.activation_stash_bytes = int64_t{96} << 20;  // 96 MiB per in-flight microbatch
  config.parallel = sim::ModelParallel{.tensor = 1, .data = kReplicas, .dp_sync_ns = 300'000};
  return config;
}

// The 1,024-rank job: the job above grown to 128 replicas of 8 stages x 8 microbatches,
// with 2% jitter (`bubblescope simulate --data-parallel 128 --stages 8 -m 8 -k 3 --dp-sync-us
// 300 --jitter 0.02`, as near as the flags go).
inline sim::Config ThousandRanks() {
  sim::Config config = DataParallelJob(kForwardNs);
  config.stages = 8;
  config.microbatches = 8;
  config.costs.assign(8, config.costs[0]);
  config.weights_bytes.assign(8, config.weights_bytes[0]);
  config.jitter = 0.02;
  config.parallel.data = 128;
  return config;
}

struct OneSlowReplica {
  sim::Truth normal;  // of the job with every replica at the normal speed
  sim::Truth slow;    // of the job with every replica's stage 1 slow
  Trace trace;        // the normal job's, but replica kSlowReplica's ranks from the slow one
};

// `into`'s ranks of data-parallel replica `replica`, replaced by `from`'s ranks of the same ids.
inline void TakeReplica(Trace& from, int32_t replica, Trace& into) {
  for (Rank& rank : into.ranks) {
    if (rank.rank % kReplicas != replica) continue;
    for (Rank& replacement : from.ranks) {
      if (replacement.rank == rank.rank) std::swap(rank, replacement);
    }
  }
}

// Empty traces when a simulation fails (the caller's assertions then fail).
inline OneSlowReplica MakeOneSlowReplica() {
  OneSlowReplica job;
  absl::StatusOr<sim::Simulation> normal = sim::Simulate(DataParallelJob(kForwardNs));
  absl::StatusOr<sim::Simulation> slow = sim::Simulate(DataParallelJob(kSlowForwardNs));
  if (!normal.ok() || !slow.ok()) return job;
  job.normal = normal->truth;
  job.slow = slow->truth;
  job.trace = std::move(normal->trace);
  TakeReplica(slow->trace, kSlowReplica, job.trace);
  return job;
}

}  // namespace bubblescope::replica_testing
