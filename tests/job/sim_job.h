// Test helpers for cross-rank tests: a DP x PP job built by merging independently simulated
// pipelines under disjoint rank ids (replica j's rank r becomes j * p + r), and lookups into the
// simulator's truth.
#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "bubblescope/trace.h"
#include "simulator/simulator.h"

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
