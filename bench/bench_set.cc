#include "bench_set.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <system_error>
#include <utility>

#include "absl/strings/str_cat.h"
#include "synth/simulated_set.h"
#include "synth/synthetic_job.h"

namespace bubblescope::bench {
namespace {

constexpr TimeNs kMicrosecond = 1000;
constexpr TimeNs kMillisecond = 1000 * kMicrosecond;
constexpr int64_t kMiB = int64_t{1} << 20;

sim::SetWriteOptions WriteOptions(const BenchSetOptions& options) {
  sim::SetWriteOptions write;
  write.kineto.layout = options.layout;
  write.kineto.bulk_args = options.bulk_args;
  write.gzip = options.gzip;
  write.overwrite = true;
  return write;
}

// Uncompressed bytes of every rank file of a job of `iterations` steps, serialised exactly as
// WriteSimulationSet writes them (each file names itself in its traceName).
absl::StatusOr<double> SetBytes(const BenchSetOptions& options, int32_t iterations) {
  absl::StatusOr<sim::Simulation> simulation = sim::Simulate(BenchConfig(options, iterations));
  if (!simulation.ok()) return simulation.status();
  const sim::SetWriteOptions write = WriteOptions(options);
  double bytes = 0;
  for (Rank& rank : simulation->trace.ranks) {
    rank.source_path = sim::RankFileName(rank.rank, options.gzip);
    bytes += static_cast<double>(KinetoJson(rank, write.kineto).size());
  }
  return bytes;
}

}  // namespace

std::map<std::string, sim::Schedule> SchedulesByName() {
  std::map<std::string, sim::Schedule> schedules;
  for (sim::Schedule schedule :
       {sim::Schedule::kGpipe, sim::Schedule::k1F1B, sim::Schedule::kInterleaved1F1B,
        sim::Schedule::kZeroBubbleH1, sim::Schedule::kForwardOnly}) {
    schedules.emplace(sim::ScheduleName(schedule), schedule);
  }
  return schedules;
}

sim::Config BenchConfig(const BenchSetOptions& options, int32_t iterations) {
  const int32_t p = options.ranks;
  const bool interleaved = options.schedule == sim::Schedule::kInterleaved1F1B;
  const bool training = options.schedule != sim::Schedule::kForwardOnly;
  const bool split_backward = options.schedule == sim::Schedule::kZeroBubbleH1;
  sim::Config config;
  config.schedule = options.schedule;
  config.stages = p;
  // Twice as many microbatches as stages: the ratio Megatron-style jobs run at when memory is
  // tight, and a multiple of p as the interleaved schedule needs.
  config.microbatches = 2 * p;
  config.virtual_stages = interleaved ? 2 : 1;
  config.iterations = iterations;
  // A microbatch takes 1 ms forward and 2 ms backward on every stage (zb-h1 splits the backward
  // into 1 ms input gradient and 1 ms weight gradient). The last stage also runs the LM head and
  // the loss, 20% more: the imbalance real transformer pipelines have, which makes the slowest
  // stage an actual finding rather than whichever stage the jitter favoured.
  for (int32_t stage = 0; stage < p; ++stage) {
    const TimeNs scale_percent = stage == p - 1 ? 120 : 100;
    const TimeNs forward = kMillisecond * scale_percent / 100;
    const TimeNs backward = training ? 2 * forward / (split_backward ? 2 : 1) : 0;
    const TimeNs weight_grad = split_backward ? forward : 0;
    config.costs.push_back(
        sim::StageCost{.forward = forward, .backward = backward, .weight_grad = weight_grad});
  }
  // Eight kernels per op: a forward of a few transformer layers is that many GEMM / attention /
  // norm kernels of ~125 us, far longer than the 5 us a cudaLaunchKernel takes, so the CPU runs
  // ahead of the device as in a healthy job.
  config.kernels_per_op = 8;
  config.launch_gap_ns = 5 * kMicrosecond;
  // 16 MiB activations over 400 Gb/s links (NVLink-class inside a node, 340 us a transfer);
  // the hop in the middle of the pipeline crosses nodes at 100 Gb/s in both directions, the slow
  // link the analysis should point at.
  config.activation_bytes = 16 * kMiB;
  config.link = sim::Link{.gbps = 400.0, .latency_ns = 5 * kMicrosecond};
  config.optimizer_ns = training ? 300 * kMicrosecond : 0;
  config.jitter = 0.05;
  config.seed = options.seed;
  // Stage s runs on rank p-1-s, so rank numbers say nothing about the order, and the ranks'
  // clocks disagree by up to 5 ms, as unsynchronised hosts' do: both must be recovered from the
  // traffic before any figure can match.
  for (int32_t stage = 0; stage < p; ++stage) config.stage_to_rank.push_back(p - 1 - stage);
  for (int32_t rank = 0; rank < p; ++rank) {
    config.clock_offsets_ns.push_back((rank % 3 - 1) * 2500 * kMicrosecond);
  }
  const int32_t before_hop = config.stage_to_rank[static_cast<size_t>(p / 2 - 1)];
  const int32_t after_hop = config.stage_to_rank[static_cast<size_t>(p / 2)];
  const sim::Link cross_node{.gbps = 100.0, .latency_ns = 10 * kMicrosecond};
  config.link_overrides.push_back(
      sim::LinkOverride{.src_rank = before_hop, .dst_rank = after_hop, .link = cross_node});
  config.link_overrides.push_back(
      sim::LinkOverride{.src_rank = after_hop, .dst_rank = before_hop, .link = cross_node});
  // 2 GiB of weights and optimizer state per stage, 96 MiB of stashed activations per
  // microbatch in flight: the memory samples rise and fall with the schedule.
  config.weights_bytes.assign(static_cast<size_t>(p), 2048 * kMiB);
  config.activation_stash_bytes = 96 * kMiB;
  config.annotations = sim::AnnotationStyle::kNone;  // the shape must come from the traffic
  return config;
}

absl::StatusOr<int32_t> IterationsForTargetBytes(const BenchSetOptions& options,
                                                 double target_bytes) {
  if (options.ranks < 2) {
    return absl::InvalidArgumentError(
        absl::StrCat("ranks = ", options.ranks, ": a pipeline needs at least 2 stages"));
  }
  absl::StatusOr<double> one = SetBytes(options, 1);
  if (!one.ok()) return one.status();
  absl::StatusOr<double> two = SetBytes(options, 2);
  if (!two.ok()) return two.status();
  const double per_iteration = *two - *one;
  if (per_iteration <= 0) {
    return absl::InternalError("a second iteration added no bytes to the set");
  }
  const double fixed = *one - per_iteration;  // metadata every file carries once
  const double wanted = std::ceil((target_bytes - fixed) / per_iteration);
  const double iterations = std::max(static_cast<double>(kMinIterations), wanted);
  if (iterations > 1e6) {
    return absl::InvalidArgumentError(absl::StrCat("a set of ", target_bytes / 1e6,
                                                   " MB would need ", iterations, " iterations"));
  }
  const auto count = static_cast<int32_t>(iterations);
  // Reports a job too large to simulate now, before anything is written.
  if (absl::Status status = sim::ValidateConfig(BenchConfig(options, count)); !status.ok()) {
    return status;
  }
  return count;
}

absl::StatusOr<WrittenSet> WriteBenchSet(const BenchSetOptions& options, int32_t iterations,
                                         const std::string& directory) {
  if (options.ranks < 2) {
    return absl::InvalidArgumentError(
        absl::StrCat("ranks = ", options.ranks, ": a pipeline needs at least 2 stages"));
  }
  WrittenSet set;
  set.config = BenchConfig(options, iterations);
  absl::StatusOr<sim::Simulation> simulation = sim::Simulate(set.config);
  if (!simulation.ok()) return simulation.status();
  absl::StatusOr<std::vector<std::string>> written =
      sim::WriteSimulationSet(set.config, *simulation, directory, WriteOptions(options));
  if (!written.ok()) return written.status();
  // WriteSimulationSet lists the rank files by rank, then truth.json.
  set.trace_files.assign(written->begin(), written->end() - 1);
  for (const std::string& file : set.trace_files) {
    std::error_code error;
    const uintmax_t bytes = std::filesystem::file_size(file, error);
    if (error) return absl::InternalError(absl::StrCat(file, ": ", error.message()));
    set.trace_bytes += static_cast<int64_t>(bytes);
  }
  return set;
}

}  // namespace bubblescope::bench
