#include "distributed/mpi_world.h"

#include <mpi.h>

#include <algorithm>
#include <cstdint>

#include "distributed/gather_rounds.h"

namespace bubblescope::distributed {

bool HaveMpi() { return true; }

absl::StatusOr<std::unique_ptr<MpiWorld>> MpiWorld::Join() {
  int provided = 0;
  // Errors abort the job (MPI's default handler), which mpirun and srun report.
  MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
  int process = 0;
  int processes = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &process);
  MPI_Comm_size(MPI_COMM_WORLD, &processes);
  return std::unique_ptr<MpiWorld>(new MpiWorld(process, processes));
}

MpiWorld::~MpiWorld() { MPI_Finalize(); }

int MpiWorld::Broadcast(int value) const {
  MPI_Bcast(&value, 1, MPI_INT, 0, MPI_COMM_WORLD);
  return value;
}

std::string MpiWorld::BroadcastBytes(std::string bytes) const {
  uint64_t size = bytes.size();
  MPI_Bcast(&size, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  bytes.resize(size);
  // In pieces whose counts fit MPI's ints.
  for (uint64_t done = 0; done < size; done += kGatherRoundBytes) {
    const auto count = static_cast<int>(std::min<uint64_t>(kGatherRoundBytes, size - done));
    MPI_Bcast(bytes.data() + done, count, MPI_BYTE, 0, MPI_COMM_WORLD);
  }
  return bytes;
}

std::vector<std::string> MpiWorld::Gather(const std::string& mine) const {
  const auto count = static_cast<size_t>(processes_);
  std::vector<uint64_t> sizes(count, 0);
  uint64_t my_size = mine.size();
  MPI_Allgather(&my_size, 1, MPI_UINT64_T, sizes.data(), 1, MPI_UINT64_T, MPI_COMM_WORLD);
  std::vector<std::string> gathered;
  std::string round_bytes;
  if (process_ == 0) {
    gathered.resize(count);
    for (size_t p = 0; p < count; ++p) gathered[p].reserve(sizes[p]);
  }
  const uint64_t per_process = PerProcessChunk(processes_);
  const size_t rounds = RoundCount(sizes, per_process);
  for (size_t round = 0; round < rounds; ++round) {
    const GatherRound plan = PlanRound(sizes, per_process, round);
    const char* send = mine.data() + std::min<uint64_t>(per_process * round, mine.size());
    if (process_ == 0) round_bytes.resize(plan.total);
    MPI_Gatherv(send, plan.counts[static_cast<size_t>(process_)], MPI_BYTE, round_bytes.data(),
                plan.counts.data(), plan.displacements.data(), MPI_BYTE, 0, MPI_COMM_WORLD);
    if (process_ != 0) continue;
    for (size_t p = 0; p < count; ++p) {
      gathered[p].append(round_bytes, static_cast<size_t>(plan.displacements[p]),
                         static_cast<size_t>(plan.counts[p]));
    }
  }
  return gathered;
}

}  // namespace bubblescope::distributed
