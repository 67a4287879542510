// `analyze --mpi`'s two sides of loading (docs/scale.md): process 0 reads its share, gathers
// every other process's and assembles the Trace; every other process reads its share, sends it
// and takes process 0's verdict on the load as its exit status. Neither prints anything; process
// 0 reports as a single process does.
#pragma once

#include "cli/job_input.h"
#include "distributed/mpi_world.h"

namespace bubblescope {

// Process 0's TraceLoader: LoadTrace's result and errors, the files read by every process.
TraceLoader MpiProcessZeroLoader(const distributed::MpiWorld& world);

// Any other process: after process 0 has said go (`Broadcast` of kExitOk; any other value is
// returned at once), reads its share of `source`'s files and sends it; returns kExitOk when
// process 0 loaded the trace, else kExitBadInput.
int RunMpiReader(const distributed::MpiWorld& world, const JobSource& source);

}  // namespace bubblescope
