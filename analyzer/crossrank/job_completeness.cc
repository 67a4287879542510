#include "crossrank/job_completeness.h"

#include <algorithm>

namespace bubblescope::job_completeness {
namespace {

bool InTrace(const Trace& trace, int32_t rank) {
  // Trace::ranks is sorted by rank id.
  auto it = std::lower_bound(trace.ranks.begin(), trace.ranks.end(), rank,
                             [](const Rank& r, int32_t id) { return r.rank < id; });
  return it != trace.ranks.end() && it->rank == rank;
}

}  // namespace

JobResult AnalyzeJob(const Trace& trace) {
  JobResult result;
  for (const Rank& rank : trace.ranks) {
    if (rank.world_size <= 0) continue;
    if (result.world_size > 0 && rank.world_size != result.world_size) {
      result.world_sizes_disagree = true;
    }
    result.world_size = std::max(result.world_size, rank.world_size);
  }
  if (result.world_size <= 0) return result;
  // Ranks are sorted, so one merge walk lists the missing ids; a world size is bounded by the
  // reader (an int32), and the list by the ids absent, so a huge declared size with few files
  // is capped to keep the report readable and the work bounded.
  constexpr size_t kMaxListed = 4096;
  size_t next = 0;
  for (int32_t id = 0; id < result.world_size && result.missing_ranks.size() < kMaxListed; ++id) {
    while (next < trace.ranks.size() && trace.ranks[next].rank < id) ++next;
    if (next < trace.ranks.size() && trace.ranks[next].rank == id) continue;
    result.missing_ranks.push_back(id);
  }
  for (const Rank& rank : trace.ranks) {
    if (rank.rank >= 0 && rank.rank < result.world_size) {
      ++result.ranks_in_world;
    } else if (result.ranks_outside_world.size() < kMaxListed) {
      result.ranks_outside_world.push_back(rank.rank);
    }
  }
  return result;
}

std::vector<int32_t> PeersOutsideTrace(const Trace& trace, const index::TraceIndex& index,
                                       const std::vector<int32_t>& ranks) {
  std::vector<int32_t> peers;
  for (int32_t rank : ranks) {
    const int32_t position = index.PositionOf(rank);
    if (position < 0) continue;
    for (const index::DeviceOp& op : index.ranks[static_cast<size_t>(position)].ops) {
      if (!op.is_p2p() || op.in_optimizer || op.peer < 0) continue;
      if (!InTrace(trace, op.peer)) peers.push_back(op.peer);
    }
  }
  std::sort(peers.begin(), peers.end());
  peers.erase(std::unique(peers.begin(), peers.end()), peers.end());
  return peers;
}

}  // namespace bubblescope::job_completeness
