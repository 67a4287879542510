// The cases of the file grid (tests/job/file_grid_test.cc), shared with the tests that write
// the same jobs in other formats (tests/job/nsys_same_job_test.cc): each (schedule, p, m) in
// several file variants, the simulator's configuration of each, and the whole analysis of a set
// written to files and loaded back as `analyze` loads it.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "job/job.h"
#include "loader/trace_loader.h"
#include "support/test_files.h"
#include "synth/simulated_set.h"
#include "synth/synthetic_job.h"

namespace bubblescope::file_grid {

using sim::Schedule;

// The three file variants of each (schedule, p, m).
enum class Variant {
  kNewer,       // relative timestamps, no annotations, balanced stages
  kOlder,       // absolute microseconds, PP annotations, one stage 15% slower, gzip
  kNoNcclArgs,  // newer layout without NCCL's args: no peers, p2p direction from c10d ops
  kBatchedP2p,  // newer layout, batch_isend_irecv: peers and sizes only on the CPU side
  kRocm,        // newer layout as Kineto writes it on ROCm: hip* runtime calls, text streams
};

struct Case {
  Schedule schedule;
  int32_t p;
  int32_t m;
  Variant variant;
  bool older_layout = variant == Variant::kOlder;
};

inline std::string Name(const Case& c) {
  const char* variant = c.variant == Variant::kNewer   ? " newer layout, no annotations, balanced"
                        : c.variant == Variant::kOlder ? " older layout, annotated, imbalanced"
                        : c.variant == Variant::kNoNcclArgs ? " no NCCL args, no annotations"
                        : c.variant == Variant::kBatchedP2p ? " batched p2p, no annotations"
                                                            : " ROCm, no annotations";
  return absl::StrCat(std::string(sim::ScheduleName(c.schedule)), " p=", c.p, " m=", c.m, variant);
}

inline int32_t HeavyStage(const Case& c) { return (c.m + 1) % c.p; }

inline sim::Config MakeConfig(const Case& c) {
  sim::Config config;
  config.schedule = c.schedule;
  config.stages = c.p;
  config.microbatches = c.m;
  config.virtual_stages = c.schedule == Schedule::kInterleaved1F1B ? 2 : 1;
  config.iterations = 3;
  const bool training = c.schedule != Schedule::kForwardOnly;
  const int64_t weight_grad = c.schedule == Schedule::kZeroBubbleH1 ? 1500 : 0;
  config.costs.assign(
      static_cast<size_t>(c.p),
      sim::StageCost{.forward = 4000, .backward = training ? 8000 : 0, .weight_grad = weight_grad});
  if (c.older_layout) {
    config.costs[static_cast<size_t>(HeavyStage(c))] =
        sim::StageCost{.forward = 4600,
                       .backward = training ? 9200 : 0,
                       .weight_grad = weight_grad == 0 ? 0 : 1725};
  }
  config.kernels_per_op = 2;
  config.activation_bytes = 1 << 18;
  config.link = sim::Link{.gbps = 200.0, .latency_ns = 2000};
  config.launch_gap_ns = 60;
  config.optimizer_ns = training ? 3000 : 0;
  config.jitter = 0.05;
  config.seed = static_cast<uint64_t>(c.p * 100 + c.m + (c.older_layout ? 7 : 0));
  // Megatron's interleaved batches each hold transfers with both neighbours and end with
  // whichever finished last, so they give the clocks no sample; the iteration-end all-reduce
  // does (docs/cross-rank.md, "Clocks").
  for (int32_t r = 0; r < c.p; ++r) config.clock_offsets_ns.push_back((r % 3 - 1) * 2'500'000LL);
  config.weights_bytes.assign(static_cast<size_t>(c.p), int64_t{1} << 30);
  config.activation_stash_bytes = int64_t{16} << 20;
  // The older layout's `PP:` ranges as Kineto writes record_function on a GPU job: the CPU range
  // and its copy on the compute stream.
  config.annotations =
      c.older_layout ? sim::AnnotationStyle::kPpMirrored : sim::AnnotationStyle::kNone;
  // Stage s on rank p-1-s: rank numbers say nothing about the order.
  for (int32_t s = 0; s < c.p; ++s) config.stage_to_rank.push_back(c.p - 1 - s);
  if (c.variant == Variant::kBatchedP2p) config.p2p = sim::P2pStyle::kBatched;
  // The variants without peers or with batched p2p launch as torch does on a GPU job: backward
  // from the autograd thread, GEMM kernel names without a phase, so the forward/backward split
  // rests on the launching thread. Not zb-h1: its B and W both run on that thread under GEMM
  // names, and nothing in such a trace tells them apart (docs/trace-sources.md).
  if ((c.variant == Variant::kNoNcclArgs || c.variant == Variant::kBatchedP2p ||
       c.variant == Variant::kRocm) &&
      c.schedule != Schedule::kZeroBubbleH1) {
    config.launches = sim::LaunchStyle::kTorch;
  }
  if (c.variant == Variant::kRocm) config.vendor = sim::Vendor::kRocm;
  return config;
}

inline std::string ExpectedFamily(const Case& c) {
  if (c.schedule == Schedule::kZeroBubbleH1) return "zb";
  if (c.schedule == Schedule::k1F1B && c.m == 1) return "gpipe";  // the same order at m = 1
  return std::string(sim::ScheduleName(c.schedule));
}

// `simulation` written as a set with `write`, loaded back and analysed as `analyze` does.
inline absl::StatusOr<job::Result> FromFiles(const sim::Config& config, sim::Simulation& simulation,
                                             const sim::SetWriteOptions& write) {
  testing::TempDir dir;
  if (auto written = sim::WriteSimulationSet(config, simulation, dir.path(), write);
      !written.ok()) {
    return written.status();
  }
  LoadOptions load;
  load.jobs = 1;
  absl::StatusOr<Trace> trace = LoadTrace({dir.path()}, load);
  if (!trace.ok()) return trace.status();
  return job::Analyze(*trace, job::Options{});
}

}  // namespace bubblescope::file_grid
