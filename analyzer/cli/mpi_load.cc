#include "cli/mpi_load.h"

#include <string>
#include <utility>
#include <vector>

#include "cli/command.h"
#include "distributed/distributed_load.h"

namespace bubblescope {

TraceLoader MpiProcessZeroLoader(const distributed::MpiWorld& world) {
  return [&world](const std::vector<std::string>& paths,
                  const LoadOptions& options) -> absl::StatusOr<Trace> {
    const absl::StatusOr<TraceFileList> list = ListTraceFiles(paths, options);
    // Every process sends its bundle, whatever happened here, so none waits for ever.
    std::vector<std::string> bundles =
        world.Gather(distributed::ReadShare(list, 0, world.processes(), options));
    absl::StatusOr<Trace> trace =
        list.ok() ? distributed::AssembleShares(*list, std::move(bundles), options)
                  : absl::StatusOr<Trace>(list.status());
    world.Broadcast(trace.ok() ? kExitOk : kExitBadInput);
    return trace;
  };
}

int RunMpiReader(const distributed::MpiWorld& world, const JobSource& source) {
  if (const int go = world.Broadcast(kExitOk); go != kExitOk) return go;
  const absl::StatusOr<TraceFileList> list = ListTraceFiles(source.paths, source.load);
  world.Gather(
      distributed::ReadShare(list, world.process(), world.processes(), source.load));
  return world.Broadcast(kExitOk);
}

}  // namespace bubblescope
