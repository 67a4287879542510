// The benchmark's trace sets: one simulated pipeline-parallel training job (sim::Simulate) with
// the irregularities real jobs have, written as per-rank Kineto files plus its truth.json
// (sim::WriteSimulationSet). A set is sized by its iteration count; everything else is fixed by
// the stage count, the schedule and the seed, so the same options always write the same bytes.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "schedule_engine/config.h"
#include "writers/kineto_writer.h"

namespace bubblescope::bench {

struct BenchSetOptions {
  int32_t ranks = 8;  // pipeline stages, one rank each (>= 2: one stage has no pipeline)
  sim::Schedule schedule = sim::Schedule::k1F1B;
  uint64_t seed = 1;  // of the kernel-time jitter
  KinetoLayout layout = KinetoLayout::kRelativeWithBase;
  bool gzip = false;
  // The launch geometry and op arguments real profilers record and no analysis reads: without
  // them a generated file is a third lighter per event than a real one.
  bool bulk_args = true;
};

// Every schedule by its simulator name ("gpipe", "1f1b", ...), for the command-line options.
std::map<std::string, sim::Schedule> SchedulesByName();

// The job a set of `iterations` profiler steps records (docs/benchmarks.md lists every value).
sim::Config BenchConfig(const BenchSetOptions& options, int32_t iterations);

// The fewest iterations (at least kMinIterations) whose files add up to `target_bytes`
// uncompressed, measured from the sizes of a one- and a two-iteration job: every iteration
// writes about the same bytes. InvalidArgumentError when the options are unusable or the target
// would need a job beyond the simulator's limits.
inline constexpr int32_t kMinIterations = 3;
absl::StatusOr<int32_t> IterationsForTargetBytes(const BenchSetOptions& options,
                                                 double target_bytes);

struct WrittenSet {
  sim::Config config;
  std::vector<std::string> trace_files;  // by rank
  int64_t trace_bytes = 0;               // on disk (compressed size with gzip)
};

// Simulates the job and writes it into `directory` (created if needed), replacing an earlier
// set of rank files and truth.json there and leaving every other file alone.
absl::StatusOr<WrittenSet> WriteBenchSet(const BenchSetOptions& options, int32_t iterations,
                                         const std::string& directory);

}  // namespace bubblescope::bench
