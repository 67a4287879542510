// How `analyze --mpi` gathers byte strings of any size on process 0 although MPI counts and
// displacements are ints: in rounds of MPI_Gatherv, each moving under 2 GiB in all. Plain
// arithmetic, so that it is tested without MPI.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace bubblescope::distributed {

// The most one MPI_Gatherv moves, all processes together: well inside INT_MAX.
inline constexpr uint64_t kGatherRoundBytes = uint64_t{1} << 30;

// What each of `processes` may send in one round, so that a round's total stays within
// `round_bytes` (at least 1 byte).
uint64_t PerProcessChunk(int processes, uint64_t round_bytes = kGatherRoundBytes);

// Rounds needed to move `sizes` (bytes per process) at `per_process` bytes a round.
size_t RoundCount(const std::vector<uint64_t>& sizes, uint64_t per_process);

// One round: process p sends its bytes [round * per_process, + counts[p]); process 0 receives
// them at displacements[p] of a buffer of `total` bytes.
struct GatherRound {
  std::vector<int> counts;
  std::vector<int> displacements;
  uint64_t total = 0;
};
GatherRound PlanRound(const std::vector<uint64_t>& sizes, uint64_t per_process, size_t round);

}  // namespace bubblescope::distributed
