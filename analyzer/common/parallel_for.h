// Work spread over threads, for the loader's files and the job driver's ranks and pipelines.
#pragma once

#include <cstddef>

#include "absl/functional/function_ref.h"

namespace bubblescope {

// How many threads `jobs` asks for over `items` pieces of work: 0 means one per core; never more
// threads than pieces, and at least one.
size_t WorkerCount(int jobs, size_t items);

// Calls body(worker, index) once for every index in [0, count), on `workers` threads (the
// calling thread is one of them), and returns when every call has returned. Indices are handed
// out one at a time in increasing order to whichever thread is free, so a long piece of work
// holds up only its own thread. `worker` (below `workers`) names the thread making the call:
// state kept per worker (a parser, a buffer) is never used by two threads at once.
//
// Which thread runs which index is not fixed: a body writes only its own index's result (and its
// worker's state), so that the outcome is the same for any number of workers. A thread the
// system refuses only means fewer workers. The first exception a body throws is rethrown here
// once every thread has stopped; the other threads take no new index after it.
void ParallelFor(size_t count, size_t workers,
                 absl::FunctionRef<void(size_t worker, size_t index)> body);

}  // namespace bubblescope
