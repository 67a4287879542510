// The MPI calls of `analyze --mpi`, and nothing else: joining the world, broadcasts from process
// 0 (an int, or bytes), and gathering every process's bytes on process 0. Built with MPI when the
// build found it (BUBBLESCOPE_MPI); without it, Join says so and nothing else exists.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace bubblescope::distributed {

// True when this build has MPI.
bool HaveMpi();

class MpiWorld {
 public:
  // MPI_Init_thread (threads that never call MPI); MPI_Finalize when the world is destroyed.
  // Without MPI in the build: FailedPrecondition "this bubblescope was built without MPI ...".
  static absl::StatusOr<std::unique_ptr<MpiWorld>> Join();
  ~MpiWorld();
  MpiWorld(const MpiWorld&) = delete;
  MpiWorld& operator=(const MpiWorld&) = delete;

  int process() const { return process_; }
  int processes() const { return processes_; }

  // Process 0's `value`, on every process.
  int Broadcast(int value) const;
  // Process 0's `bytes` (any size), on every process; the others' are ignored.
  std::string BroadcastBytes(std::string bytes) const;
  // On process 0 every process's `mine`, in process order; on the others, nothing. Any size
  // (gather_rounds.h).
  std::vector<std::string> Gather(const std::string& mine) const;

 private:
  MpiWorld(int process, int processes) : process_(process), processes_(processes) {}
  int process_ = 0;
  int processes_ = 1;
};

}  // namespace bubblescope::distributed
