// MpiWorld in a build without MPI: Join says so; nothing else can be reached.
#include "absl/status/status.h"
#include "distributed/mpi_world.h"

namespace bubblescope::distributed {

bool HaveMpi() { return false; }

absl::StatusOr<std::unique_ptr<MpiWorld>> MpiWorld::Join() {
  return absl::FailedPreconditionError(
      "--mpi: this bubblescope was built without MPI (install an MPI such as OpenMPI and "
      "rebuild; CMake option BUBBLESCOPE_MPI)");
}

MpiWorld::~MpiWorld() = default;

int MpiWorld::Broadcast(int value) const { return value; }

std::string MpiWorld::BroadcastBytes(std::string bytes) const { return bytes; }

std::vector<std::string> MpiWorld::Gather(const std::string& mine) const { return {mine}; }

}  // namespace bubblescope::distributed
