#include "schedule_engine/config.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace bubblescope::sim {
namespace {

// Bounds that keep the simulation small enough to hold in memory and every timestamp far from
// int64 overflow. They are generous for any realistic test or demo job.
constexpr int64_t kMaxKernels = 4'000'000;
constexpr int64_t kMaxWrittenKernels = 64 * kMaxKernels;
constexpr double kMaxSpanNs = 4e18;
constexpr int64_t kMaxBytes = int64_t{1} << 50;

absl::Status Invalid(std::string message) {
  return absl::InvalidArgumentError(absl::StrCat("simulator config: ", message));
}

// Chunk cost must be at least 1 ns so every op takes time on the device.
absl::Status CheckCost(const char* field, int32_t stage, TimeNs cost, int32_t chunks) {
  if (cost < chunks) {
    return Invalid(absl::StrCat("costs[", stage, "].", field, " = ", cost, " must be >= ", chunks,
                                chunks > 1 ? " (virtual_stages: every chunk needs >= 1 ns)" : ""));
  }
  if (cost > int64_t{1'000'000'000'000}) {
    return Invalid(absl::StrCat("costs[", stage, "].", field, " = ", cost, " exceeds 1000 s"));
  }
  return absl::OkStatus();
}

absl::Status CheckLink(const std::string& what, const Link& link) {
  // The floor keeps every transfer time of a valid payload inside int64 (and rejects NaN).
  if (!(link.gbps >= 0.01)) {
    return Invalid(absl::StrCat(what, ".gbps = ", link.gbps, " must be >= 0.01 (or +inf)"));
  }
  if (link.latency_ns < 0 || link.latency_ns > int64_t{1'000'000'000'000}) {
    return Invalid(absl::StrCat(what, ".latency_ns = ", link.latency_ns, " must be in [0, 1e12]"));
  }
  return absl::OkStatus();
}

absl::Status CheckShape(const Config& config) {
  const int32_t p = config.stages;
  if (p < 1 || p > 4096) return Invalid(absl::StrCat("stages = ", p, " must be in [1, 4096]"));
  if (config.microbatches < 1) {
    return Invalid(absl::StrCat("microbatches = ", config.microbatches, " must be >= 1"));
  }
  if (config.virtual_stages < 1 || config.virtual_stages > 1024) {
    return Invalid(
        absl::StrCat("virtual_stages = ", config.virtual_stages, " must be in [1, 1024]"));
  }
  if (config.schedule == Schedule::kInterleaved1F1B) {
    if (config.microbatches % p != 0) {
      return Invalid(absl::StrCat("interleaved schedule needs microbatches (", config.microbatches,
                                  ") to be a multiple of stages (", p, ")"));
    }
  } else if (config.virtual_stages != 1 && config.schedule != Schedule::kGpipe) {
    return Invalid(absl::StrCat(
        "virtual_stages = ", config.virtual_stages, " needs the interleaved or gpipe schedule (",
        std::string(ScheduleName(config.schedule)), " has one chunk per rank)"));
  } else if (config.virtual_stages != 1 && config.p2p == P2pStyle::kBatched) {
    // Batches pair transfers as Megatron-LM's schedules do; looped GPipe is torch's
    // ScheduleLoopedBFS, whose runtime posts each action's transfers on their own, and pairing
    // them Megatron's way would queue a wrap-around receive behind the sends it waits for.
    return Invalid(absl::StrCat(
        "p2p = batched is not modelled for gpipe with virtual_stages = ", config.virtual_stages,
        " (torch's ScheduleLoopedBFS posts each transfer on its own)"));
  }
  if (config.iterations < 1) {
    return Invalid(absl::StrCat("iterations = ", config.iterations, " must be >= 1"));
  }
  if (config.kernels_per_op < 1 || config.kernels_per_op > 1024) {
    return Invalid(
        absl::StrCat("kernels_per_op = ", config.kernels_per_op, " must be in [1, 1024]"));
  }
  // Ops per rank per iteration: m * v forwards, as many B's and (zb) W's. Every replica
  // (tensor, context, data) is a copy of the pipeline's ranks, written out as its own files.
  double ops = 3.0 * config.microbatches * config.virtual_stages;
  // One pipeline's kernels; every replica's together are bounded below.
  double kernels = ops * (config.kernels_per_op + 2.0) * p * config.iterations;
  if (kernels > static_cast<double>(kMaxKernels)) {
    return Invalid(absl::StrCat("job too large to simulate: about ", kernels, " kernels (limit ",
                                kMaxKernels, ")"));
  }
  // Every replica's ranks are written: up to 1,024 replicas of a small pipeline, or as many
  // kernels as 64 replicas of the largest one.
  const double written =
      kernels * std::max(1.0, static_cast<double>(config.parallel.tensor) *
                                  config.parallel.context * config.parallel.data);
  if (written > static_cast<double>(kMaxWrittenKernels)) {
    return Invalid(absl::StrCat("job too large to simulate: about ", written,
                                " kernels over every replica (limit ", kMaxWrittenKernels, ")"));
  }
  return absl::OkStatus();
}

absl::Status CheckCostsAndLinks(const Config& config) {
  const int32_t p = config.stages;
  if (config.costs.size() != static_cast<size_t>(p)) {
    return Invalid(
        absl::StrCat("costs has ", config.costs.size(), " entries, need one per stage (", p, ")"));
  }
  const int32_t v = config.virtual_stages;
  for (int32_t s = 0; s < p; ++s) {
    const StageCost& cost = config.costs[s];
    BUBBLESCOPE_RETURN_IF_ERROR(CheckCost("forward", s, cost.forward, v));
    if (config.schedule != Schedule::kForwardOnly) {
      if (absl::Status status = CheckCost("backward", s, cost.backward, v); !status.ok()) {
        return status;
      }
    }
    if (config.schedule == Schedule::kZeroBubbleH1) {
      if (absl::Status status = CheckCost("weight_grad", s, cost.weight_grad, v); !status.ok()) {
        return status;
      }
    }
  }
  if (config.activation_bytes < 0 || config.activation_bytes > kMaxBytes) {
    return Invalid(
        absl::StrCat("activation_bytes = ", config.activation_bytes, " must be in [0, 2^50]"));
  }
  BUBBLESCOPE_RETURN_IF_ERROR(CheckLink("link", config.link));
  for (size_t i = 0; i < config.link_overrides.size(); ++i) {
    const LinkOverride& entry = config.link_overrides[i];
    std::string what = absl::StrCat("link_overrides[", i, "]");
    if (entry.src_rank < 0 || entry.src_rank >= p || entry.dst_rank < 0 || entry.dst_rank >= p ||
        entry.src_rank == entry.dst_rank) {
      return Invalid(absl::StrCat(what, " (", entry.src_rank, " -> ", entry.dst_rank,
                                  ") must join two different ranks in [0, ", p, ")"));
    }
    for (size_t j = 0; j < i; ++j) {
      if (config.link_overrides[j].src_rank == entry.src_rank &&
          config.link_overrides[j].dst_rank == entry.dst_rank) {
        return Invalid(
            absl::StrCat(what, " repeats the link ", entry.src_rank, " -> ", entry.dst_rank));
      }
    }
    BUBBLESCOPE_RETURN_IF_ERROR(CheckLink(what, entry.link));
  }
  return absl::OkStatus();
}

absl::Status CheckTimingAndLayout(const Config& config) {
  const int32_t p = config.stages;
  if (config.launch_gap_ns < 0 || config.launch_gap_ns > 1'000'000'000) {
    return Invalid(absl::StrCat("launch_gap_ns = ", config.launch_gap_ns, " must be in [0, 1e9]"));
  }
  if (config.optimizer_ns < 0 || config.optimizer_ns > int64_t{1'000'000'000'000}) {
    return Invalid(absl::StrCat("optimizer_ns = ", config.optimizer_ns, " must be in [0, 1e12]"));
  }
  if (!(config.jitter >= 0.0 && config.jitter < 1.0)) {
    return Invalid(absl::StrCat("jitter = ", config.jitter, " must be in [0, 1)"));
  }
  if (!config.clock_offsets_ns.empty()) {
    if (config.clock_offsets_ns.size() != static_cast<size_t>(p)) {
      return Invalid(absl::StrCat("clock_offsets_ns has ", config.clock_offsets_ns.size(),
                                  " entries, need none or one per rank (", p, ")"));
    }
    for (size_t r = 0; r < config.clock_offsets_ns.size(); ++r) {
      TimeNs offset = config.clock_offsets_ns[r];
      if (offset < -int64_t{1'000'000'000'000'000} || offset > int64_t{1'000'000'000'000'000}) {
        return Invalid(
            absl::StrCat("clock_offsets_ns[", r, "] = ", offset, " must be within +-1e15"));
      }
    }
  }
  const int32_t world = p * config.parallel.replicas();
  if (config.ranks_per_host < 0 || config.ranks_per_host > world) {
    return Invalid(
        absl::StrCat("ranks_per_host = ", config.ranks_per_host, " must be in [0, ", world, "]"));
  }
  if (!config.host_clocks.empty()) {
    if (config.host_clocks.size() != static_cast<size_t>(HostCount(config))) {
      return Invalid(absl::StrCat("host_clocks has ", config.host_clocks.size(),
                                  " entries, need none or one per host (", HostCount(config),
                                  "; ranks_per_host must be set)"));
    }
    for (size_t h = 0; h < config.host_clocks.size(); ++h) {
      const Config::HostClock& clock = config.host_clocks[h];
      if (clock.offset_ns < -int64_t{1'000'000'000'000} ||
          clock.offset_ns > int64_t{1'000'000'000'000}) {
        return Invalid(absl::StrCat("host_clocks[", h, "].offset_ns = ", clock.offset_ns,
                                    " must be within +-1e12"));
      }
      if (!(clock.drift_ppm >= -1000.0 && clock.drift_ppm <= 1000.0)) {
        return Invalid(absl::StrCat("host_clocks[", h, "].drift_ppm = ", clock.drift_ppm,
                                    " must be within +-1000"));
      }
    }
  }
  if (config.iteration_gap_ns < 0 || config.iteration_gap_ns > int64_t{3'600'000'000'000}) {
    return Invalid(
        absl::StrCat("iteration_gap_ns = ", config.iteration_gap_ns, " must be in [0, 3.6e12]"));
  }
  if (!(config.transfer_spread >= 0.0 && config.transfer_spread < 1.0)) {
    return Invalid(
        absl::StrCat("transfer_spread = ", config.transfer_spread, " must be in [0, 1)"));
  }
  if (config.collective_tail_ns < 0 || config.collective_tail_ns > 1'000'000'000) {
    return Invalid(
        absl::StrCat("collective_tail_ns = ", config.collective_tail_ns, " must be in [0, 1e9]"));
  }
  if (config.ranks_per_host > 0 && !config.clock_offsets_ns.empty()) {
    // One host, one clock.
    for (size_t r = 0; r < config.clock_offsets_ns.size(); ++r) {
      const size_t first = r - r % static_cast<size_t>(config.ranks_per_host);
      if (config.clock_offsets_ns[r] != config.clock_offsets_ns[first]) {
        return Invalid(absl::StrCat("clock_offsets_ns[", r, "] differs from rank ", first,
                                    "'s on the same host (ranks_per_host = ", config.ranks_per_host,
                                    "): one host has one clock"));
      }
    }
  }
  if (!config.stage_to_rank.empty()) {
    if (config.stage_to_rank.size() != static_cast<size_t>(p)) {
      return Invalid(absl::StrCat("stage_to_rank has ", config.stage_to_rank.size(),
                                  " entries, need none or one per stage (", p, ")"));
    }
    std::vector<bool> used(static_cast<size_t>(p), false);
    for (size_t s = 0; s < config.stage_to_rank.size(); ++s) {
      int32_t rank = config.stage_to_rank[s];
      if (rank < 0 || rank >= p || used[static_cast<size_t>(rank)]) {
        return Invalid(absl::StrCat("stage_to_rank must be a permutation of 0..", p - 1, "; entry ",
                                    s, " = ", rank));
      }
      used[static_cast<size_t>(rank)] = true;
    }
  }
  if (!config.weights_bytes.empty() && config.weights_bytes.size() != static_cast<size_t>(p)) {
    return Invalid(absl::StrCat("weights_bytes has ", config.weights_bytes.size(),
                                " entries, need none or one per stage (", p, ")"));
  }
  for (size_t s = 0; s < config.weights_bytes.size(); ++s) {
    if (config.weights_bytes[s] < 0 || config.weights_bytes[s] > kMaxBytes) {
      return Invalid(absl::StrCat("weights_bytes[", s, "] = ", config.weights_bytes[s],
                                  " must be in [0, 2^50]"));
    }
  }
  if (config.activation_stash_bytes < 0 || static_cast<double>(config.activation_stash_bytes) *
                                                   config.microbatches * config.virtual_stages >
                                               static_cast<double>(kMaxBytes)) {
    return Invalid(absl::StrCat("activation_stash_bytes = ", config.activation_stash_bytes,
                                " must be >= 0 and a full stash must stay under 2^50 bytes"));
  }
  if (config.start_time_ns < 0 || config.start_time_ns > int64_t{3'000'000'000'000'000'000}) {
    return Invalid(absl::StrCat("start_time_ns = ", config.start_time_ns, " must be in [0, 3e18]"));
  }
  return absl::OkStatus();
}

// A bound on the whole simulated span: no device or CPU ever waits while nothing anywhere runs,
// so the span is at most the sum of all kernel durations, transfers and launches.
absl::Status CheckSpan(const Config& config) {
  double per_iteration = 0.0;
  double ops_per_stage = static_cast<double>(config.microbatches);
  double slowest_link = static_cast<double>(TransferNs(config.link, config.activation_bytes));
  for (const LinkOverride& entry : config.link_overrides) {
    slowest_link = std::max(slowest_link,
                            static_cast<double>(TransferNs(entry.link, config.activation_bytes)));
  }
  for (const StageCost& cost : config.costs) {
    double work = static_cast<double>(cost.forward) + static_cast<double>(cost.backward) +
                  static_cast<double>(cost.weight_grad);
    per_iteration += ops_per_stage * (work * (1.0 + config.jitter) + 2.0 * slowest_link);
    per_iteration += static_cast<double>(config.optimizer_ns) * (1.0 + config.jitter);
  }
  double launches = 3.0 * ops_per_stage * config.virtual_stages * (config.kernels_per_op + 2.0);
  per_iteration += launches * static_cast<double>(config.launch_gap_ns) * config.stages;
  double span = per_iteration * config.iterations;
  double latest = static_cast<double>(config.start_time_ns) + span + 1e15;
  if (latest > kMaxSpanNs) {
    return Invalid(absl::StrCat("the simulated span (up to ", span, " ns after start_time_ns) ",
                                "would overflow int64 nanosecond timestamps"));
  }
  return absl::OkStatus();
}

}  // namespace

std::string_view ScheduleName(Schedule schedule) {
  switch (schedule) {
    case Schedule::kGpipe:
      return "gpipe";
    case Schedule::k1F1B:
      return "1f1b";
    case Schedule::kInterleaved1F1B:
      return "interleaved";
    case Schedule::kZeroBubbleH1:
      return "zb-h1";
    case Schedule::kForwardOnly:
      return "fwd-only";
  }
  return "unknown";
}

std::string_view AnnotationStyleName(AnnotationStyle style) {
  switch (style) {
    case AnnotationStyle::kNone:
      return "none";
    case AnnotationStyle::kPpGpu:
      return "pp-gpu";
    case AnnotationStyle::kPpCpu:
      return "pp-cpu";
    case AnnotationStyle::kPpShortCpu:
      return "pp-short";
    case AnnotationStyle::kPpMirrored:
      return "pp-mirrored";
  }
  return "unknown";
}

std::string_view P2pStyleName(P2pStyle style) {
  switch (style) {
    case P2pStyle::kPerOp:
      return "per-op";
    case P2pStyle::kBatched:
      return "batched";
  }
  return "unknown";
}

std::string_view LaunchStyleName(LaunchStyle style) {
  switch (style) {
    case LaunchStyle::kOneThread:
      return "one-thread";
    case LaunchStyle::kTorch:
      return "torch";
  }
  return "unknown";
}

std::string_view VendorName(Vendor vendor) {
  switch (vendor) {
    case Vendor::kCuda:
      return "cuda";
    case Vendor::kRocm:
      return "rocm";
  }
  return "unknown";
}

static absl::Status CheckParallel(const ModelParallel& parallel) {
  // tensor * context * data: files per stage; 128 data-parallel copies of 8 stages make the
  // 1,024-rank job the scale work is measured on (docs/benchmarks.md).
  constexpr int64_t kMaxReplicas = 1024;
  if (parallel.tensor < 1 || parallel.context < 1 || parallel.data < 1 ||
      int64_t{parallel.tensor} * parallel.context * parallel.data > kMaxReplicas) {
    return Invalid(absl::StrCat("tensor parallel ", parallel.tensor, " x context parallel ",
                                parallel.context, " x data parallel ", parallel.data,
                                " must each be >= 1 with a product <= ", kMaxReplicas));
  }
  if (parallel.expert < 1 || (parallel.context * parallel.data) % parallel.expert != 0) {
    return Invalid(absl::StrCat("expert parallel ", parallel.expert,
                                " must be >= 1 and divide context x data parallel (",
                                parallel.context * parallel.data, ")"));
  }
  for (const auto& [name, share] :
       {std::pair{"tensor", parallel.tensor_share}, std::pair{"expert", parallel.expert_share}}) {
    if (!(share >= 0.0 && share < 1.0)) {
      return Invalid(absl::StrCat(name, "-parallel share = ", share, " must be in [0, 1)"));
    }
  }
  for (const auto& [name, ns] : {std::pair{"dp sync", parallel.dp_sync_ns},
                                 std::pair{"context exchange", parallel.context_exchange_ns}}) {
    if (ns < 0 || ns > int64_t{1'000'000'000'000}) {
      return Invalid(absl::StrCat(name, " = ", ns, " ns must be in [0, 1000 s]"));
    }
  }
  if (parallel.dp_sync_coalesced &&
      (parallel.dp_sync_ns == 0 || parallel.data * parallel.context < 2)) {
    return Invalid(
        "a coalesced dp sync needs a dp sync (> 0 ns) and data x context parallel ranks (> 1)");
  }
  if (parallel.tensor_elements < 1 || parallel.tensor_elements > (int64_t{1} << 40)) {
    return Invalid(absl::StrCat("tensor-parallel elements = ", parallel.tensor_elements,
                                " must be in [1, 2^40]"));
  }
  return absl::OkStatus();
}

absl::Status ValidateConfig(const Config& config) {
  BUBBLESCOPE_RETURN_IF_ERROR(CheckShape(config));
  BUBBLESCOPE_RETURN_IF_ERROR(CheckParallel(config.parallel));
  BUBBLESCOPE_RETURN_IF_ERROR(CheckCostsAndLinks(config));
  BUBBLESCOPE_RETURN_IF_ERROR(CheckTimingAndLayout(config));
  return CheckSpan(config);
}

int32_t RankOfStage(const Config& config, int32_t stage) {
  return config.stage_to_rank.empty() ? stage : config.stage_to_rank[static_cast<size_t>(stage)];
}

const Link& LinkBetween(const Config& config, int32_t src_rank, int32_t dst_rank) {
  for (const LinkOverride& entry : config.link_overrides) {
    if (entry.src_rank == src_rank && entry.dst_rank == dst_rank) return entry.link;
  }
  return config.link;
}

TimeNs TransferNs(const Link& link, int64_t bytes) {
  if (std::isinf(link.gbps) || bytes == 0) return link.latency_ns;
  double bits = static_cast<double>(bytes) * 8.0;
  return link.latency_ns + static_cast<TimeNs>(std::ceil(bits / link.gbps));
}

int32_t HostCount(const Config& config) {
  if (config.ranks_per_host <= 0) return 0;
  const int32_t world = config.stages * config.parallel.replicas();
  return (world + config.ranks_per_host - 1) / config.ranks_per_host;
}

TimeNs RecordedTime(const Config& config, int32_t pipeline_rank, int32_t global_rank,
                    TimeNs true_time) {
  TimeNs recorded = true_time;
  if (!config.clock_offsets_ns.empty()) {
    recorded += config.clock_offsets_ns[static_cast<size_t>(pipeline_rank)];
  }
  if (!config.host_clocks.empty() && config.ranks_per_host > 0) {
    const Config::HostClock& host =
        config.host_clocks[static_cast<size_t>(global_rank / config.ranks_per_host)];
    const double since_start = static_cast<double>(true_time - config.start_time_ns);
    recorded +=
        host.offset_ns + static_cast<TimeNs>(std::llround(host.drift_ppm * 1e-6 * since_start));
  }
  return recorded;
}

double KeyedUniform(uint64_t seed, uint64_t a, uint64_t b, uint64_t c) {
  // splitmix64 over the key's words: a fixed, well-mixed function of the key.
  uint64_t x = seed ^ 0x9e3779b97f4a7c15ULL;
  for (uint64_t word : {a, b, c}) {
    x += word + 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    x ^= x >> 31;
  }
  return 2.0 * (static_cast<double>(x >> 11) * 0x1.0p-53) - 1.0;
}

}  // namespace bubblescope::sim
