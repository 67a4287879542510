// Deterministically builds a pipeline-parallel training job in the timeline model: one rank per
// pipeline stage, each with a CPU thread (nested aten ops, cudaLaunchKernel calls, ProfilerStep#N
// ranges), a compute stream, a communication stream carrying NCCL SendRecv kernels to the
// neighbouring stages, memcpys/memsets and device-memory samples. The schedule is 1F1B and is
// simulated across ranks, so receives wait for their sends and the pipeline has real bubbles.
// Alongside the trace it reports the exact figures it generated (GeneratedJob::truth).
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "bubblescope/trace.h"
#include "generator_truth.h"

namespace bubblescope::bench {

struct GeneratorOptions {
  int ranks = 4;  // pipeline stages, one rank (GPU) each
  int steps = 2;  // profiled training steps
  int microbatches = 8;
  int layers_per_stage = 4;  // each layer is 4 forward and 8 backward kernels
  uint64_t seed = 1;
  bool jitter = true;  // false: every duration is its nominal value
  TimeNs start_time_ns = 1700000000000000000;
  int64_t first_step_number = 10;  // ProfilerStep# of the first profiled step
};

struct GeneratedJob {
  Trace trace;
  std::vector<RankTruth> truth;  // in rank order
};

// Fails only on options it cannot honour (non-positive counts).
absl::StatusOr<GeneratedJob> GenerateJob(const GeneratorOptions& options);

}  // namespace bubblescope::bench
