#include "cli/simulate_command.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "simulator/simulator.h"

namespace bubblescope {
namespace {

constexpr char kSimulateFooter[] = R"(
Writes DIR/rank<r>.pt.trace.json (or .json.gz with --gzip), one Kineto trace per rank as the
PyTorch profiler would have written it, and DIR/truth.json with the exact bubble figures of the
simulated job (schema bubblescope.truth/1, see docs/simulator.md). Times are microseconds with
up to three decimals (ns). Per-stage values (--fwd-us, --bwd-us, --wgrad-us, --weights-mb) are one
number for every stage or a comma list with one per stage.

Examples:
  bubblescope simulate -o sim/ --schedule 1f1b --stages 4 --microbatches 8
  bubblescope simulate -o sim/ --schedule interleaved --virtual-stages 2 --fwd-us 1000,1000,1500,1000
  bubblescope simulate -o sim/ --slow-link 1:2:25 --jitter 0.02 --annotations pp-gpu --gzip

Exit status: 0 written; 1 a file could not be written; 2 a bad option value, or DIR already
holds a simulated set (use --force to replace it).
)";

constexpr int64_t kMiB = int64_t{1} << 20;

absl::Status FlagError(absl::string_view flag, absl::string_view message) {
  return absl::InvalidArgumentError(absl::StrCat(flag, ": ", message));
}

// Adds the flag's name to a value's error.
template <typename T>
absl::StatusOr<T> Flagged(absl::string_view flag, absl::StatusOr<T> value) {
  if (!value.ok()) return FlagError(flag, value.status().message());
  return value;
}

absl::StatusOr<int32_t> ParseInt(absl::string_view text, int32_t min, int32_t max) {
  int64_t value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size() || value < min ||
      value > max) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", text, "' is not a whole number from ", min, " to ", max));
  }
  return static_cast<int32_t>(value);
}

// A finite decimal number >= min ("inf" too when allow_infinity).
absl::StatusOr<double> ParseNumber(absl::string_view text, double min,
                                   bool allow_infinity = false) {
  if (allow_infinity && text == "inf") return std::numeric_limits<double>::infinity();
  double value = 0.0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size() ||
      !std::isfinite(value) || value < min) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", text, "' is not a number >= ", min, allow_infinity ? " (or inf)" : ""));
  }
  return value;
}

absl::StatusOr<int64_t> MegabytesToBytes(absl::string_view text) {
  absl::StatusOr<double> mb = ParseNumber(text, 0.0);
  if (!mb.ok()) return mb.status();
  if (*mb > 1e9) return absl::InvalidArgumentError(absl::StrCat("'", text, "' MiB is too large"));
  return static_cast<int64_t>(std::llround(*mb * static_cast<double>(kMiB)));
}

// One value for every stage, or a comma list with exactly `count` values.
template <typename T, typename ParseOne>
absl::StatusOr<std::vector<T>> PerStage(absl::string_view flag, absl::string_view text,
                                        int32_t count, ParseOne parse_one) {
  std::vector<absl::string_view> parts = absl::StrSplit(text, ',');
  if (parts.size() != 1 && parts.size() != static_cast<size_t>(count)) {
    return FlagError(flag, absl::StrCat("has ", parts.size(),
                                        " values; give one, or one per stage (", count, ")"));
  }
  std::vector<T> values;
  for (absl::string_view part : parts) {
    absl::StatusOr<T> value = parse_one(part);
    if (!value.ok()) return FlagError(flag, value.status().message());
    values.push_back(*value);
  }
  if (values.size() == 1) values.assign(static_cast<size_t>(count), values.front());
  return values;
}

// The value of `choices` spelled `text` (by `name_of`); otherwise an error listing them all.
template <typename Enum, size_t N>
absl::StatusOr<Enum> ParseNamed(absl::string_view flag, absl::string_view text,
                                const std::array<Enum, N>& choices,
                                std::string_view (*name_of)(Enum)) {
  std::vector<std::string> names;
  for (Enum choice : choices) {
    const std::string_view name = name_of(choice);
    if (text == absl::string_view(name.data(), name.size())) return choice;
    names.emplace_back(name);
  }
  return FlagError(flag,
                   absl::StrCat("'", text, "' is not one of ", absl::StrJoin(names, ", ")));
}

absl::StatusOr<KinetoLayout> ParseLayout(absl::string_view text) {
  if (text == "new") return KinetoLayout::kRelativeWithBase;
  if (text == "old") return KinetoLayout::kAbsoluteMicros;
  if (text == "array") return KinetoLayout::kBareArray;
  return FlagError("--format", absl::StrCat("'", text, "' is not one of new, old, array"));
}

// Costs per stage from the three cost flags.
absl::Status ParseCosts(const SimulateFlags& flags, sim::Config* config) {
  const int32_t p = config->stages;
  auto micros = [](absl::string_view text) { return ParseMicros(text); };
  absl::StatusOr<std::vector<int64_t>> forward =
      PerStage<int64_t>("--fwd-us", flags.forward_us, p, micros);
  if (!forward.ok()) return forward.status();
  absl::StatusOr<std::vector<int64_t>> backward =
      PerStage<int64_t>("--bwd-us", flags.backward_us, p, micros);
  if (!backward.ok()) return backward.status();
  std::vector<int64_t> weight_grad(static_cast<size_t>(p), 0);
  const bool zero_bubble = config->schedule == sim::Schedule::kZeroBubbleH1;
  if (zero_bubble != !flags.weight_grad_us.empty()) {
    return FlagError("--wgrad-us", zero_bubble ? "is required by the zb-h1 schedule"
                                               : "applies only to the zb-h1 schedule");
  }
  if (zero_bubble) {
    absl::StatusOr<std::vector<int64_t>> parsed =
        PerStage<int64_t>("--wgrad-us", flags.weight_grad_us, p, micros);
    if (!parsed.ok()) return parsed.status();
    weight_grad = *std::move(parsed);
  }
  config->costs.clear();
  for (size_t s = 0; s < static_cast<size_t>(p); ++s) {
    config->costs.push_back(sim::StageCost{(*forward)[s], (*backward)[s], weight_grad[s]});
  }
  return absl::OkStatus();
}

absl::Status ParseShape(const SimulateFlags& flags, sim::Config* config) {
  absl::StatusOr<sim::Schedule> schedule = ParseNamed("--schedule", flags.schedule, sim::kSchedules, &sim::ScheduleName);
  if (!schedule.ok()) return schedule.status();
  config->schedule = *schedule;
  absl::StatusOr<int32_t> stages = Flagged("--stages", ParseInt(flags.stages, 1, 4096));
  if (!stages.ok()) return stages.status();
  config->stages = *stages;
  absl::StatusOr<int32_t> microbatches =
      Flagged("--microbatches", ParseInt(flags.microbatches, 1, 1'000'000));
  if (!microbatches.ok()) return microbatches.status();
  config->microbatches = *microbatches;
  absl::StatusOr<int32_t> virtual_stages =
      Flagged("--virtual-stages", ParseInt(flags.virtual_stages, 1, 1024));
  if (!virtual_stages.ok()) return virtual_stages.status();
  config->virtual_stages = *virtual_stages;
  absl::StatusOr<int32_t> iterations =
      Flagged("--iterations", ParseInt(flags.iterations, 1, 1'000'000));
  if (!iterations.ok()) return iterations.status();
  config->iterations = *iterations;
  absl::StatusOr<int32_t> kernels =
      Flagged("--kernels-per-op", ParseInt(flags.kernels_per_op, 1, 1024));
  if (!kernels.ok()) return kernels.status();
  config->kernels_per_op = *kernels;
  return absl::OkStatus();
}

absl::Status ParseLinks(const SimulateFlags& flags, sim::Config* config) {
  absl::StatusOr<int64_t> activation =
      Flagged("--activation-mb", MegabytesToBytes(flags.activation_mb));
  if (!activation.ok()) return activation.status();
  config->activation_bytes = *activation;
  absl::StatusOr<double> gbps = Flagged("--link-gbps", ParseNumber(flags.link_gbps, 0.01, true));
  if (!gbps.ok()) return gbps.status();
  absl::StatusOr<int64_t> latency = ParseMicros(flags.link_latency_us);
  if (!latency.ok()) return FlagError("--link-latency-us", latency.status().message());
  config->link = sim::Link{*gbps, *latency};
  config->link_overrides.clear();
  for (const std::string& text : flags.slow_links) {
    absl::StatusOr<sim::LinkOverride> entry = ParseSlowLink(text, *latency);
    if (!entry.ok()) return FlagError("--slow-link", entry.status().message());
    if (entry->src_rank >= config->stages || entry->dst_rank >= config->stages) {
      return FlagError("--slow-link",
                       absl::StrCat("'", text, "' names a rank outside 0..", config->stages - 1));
    }
    config->link_overrides.push_back(*entry);
  }
  return absl::OkStatus();
}

absl::Status ParseTiming(const SimulateFlags& flags, sim::Config* config) {
  absl::StatusOr<int64_t> launch_gap = ParseMicros(flags.launch_gap_us);
  if (!launch_gap.ok()) return FlagError("--launch-gap-us", launch_gap.status().message());
  config->launch_gap_ns = *launch_gap;
  absl::StatusOr<int64_t> optimizer = ParseMicros(flags.optimizer_us);
  if (!optimizer.ok()) return FlagError("--optimizer-us", optimizer.status().message());
  config->optimizer_ns = *optimizer;
  absl::StatusOr<double> jitter = Flagged("--jitter", ParseNumber(flags.jitter, 0.0));
  if (!jitter.ok()) return jitter.status();
  if (*jitter >= 1.0)
    return FlagError("--jitter", absl::StrCat("'", flags.jitter, "' must be < 1"));
  config->jitter = *jitter;
  uint64_t seed = 0;
  const char* last = flags.seed.data() + flags.seed.size();
  auto [end, error] = std::from_chars(flags.seed.data(), last, seed);
  if (flags.seed.empty() || error != std::errc() || end != last) {
    return FlagError("--seed", absl::StrCat("'", flags.seed, "' is not a whole number >= 0"));
  }
  config->seed = seed;
  config->iteration_barrier = !flags.no_iteration_barrier;
  return absl::OkStatus();
}

absl::Status ParsePlacementAndMemory(const SimulateFlags& flags, sim::Config* config) {
  const int32_t p = config->stages;
  config->clock_offsets_ns.clear();
  if (!flags.clock_offsets_us.empty()) {
    absl::StatusOr<std::vector<int64_t>> offsets = PerStage<int64_t>(
        "--clock-offset-us", flags.clock_offsets_us, p,
        [](absl::string_view text) { return ParseMicros(text, /*allow_negative=*/true); });
    if (!offsets.ok()) return offsets.status();
    config->clock_offsets_ns = *std::move(offsets);
  }
  absl::StatusOr<int32_t> ranks_per_host =
      Flagged("--ranks-per-host", ParseInt(flags.ranks_per_host, 0, p));
  if (!ranks_per_host.ok()) return ranks_per_host.status();
  config->ranks_per_host = *ranks_per_host;
  config->stage_to_rank.clear();
  if (!flags.stage_to_rank.empty()) {
    for (absl::string_view part : absl::StrSplit(flags.stage_to_rank, ',')) {
      absl::StatusOr<int32_t> rank = Flagged("--stage-to-rank", ParseInt(part, 0, p - 1));
      if (!rank.ok()) return rank.status();
      config->stage_to_rank.push_back(*rank);
    }
  }
  config->weights_bytes.clear();
  if (!flags.weights_mb.empty()) {
    absl::StatusOr<std::vector<int64_t>> weights =
        PerStage<int64_t>("--weights-mb", flags.weights_mb, p,
                          [](absl::string_view text) { return MegabytesToBytes(text); });
    if (!weights.ok()) return weights.status();
    config->weights_bytes = *std::move(weights);
  }
  absl::StatusOr<int64_t> stash = Flagged("--stash-mb", MegabytesToBytes(flags.stash_mb));
  if (!stash.ok()) return stash.status();
  config->activation_stash_bytes = *stash;
  absl::StatusOr<sim::AnnotationStyle> annotations = ParseNamed("--annotations", flags.annotations, sim::kAnnotationStyles,
                 &sim::AnnotationStyleName);
  if (!annotations.ok()) return annotations.status();
  config->annotations = *annotations;
  absl::StatusOr<sim::P2pStyle> p2p = ParseNamed("--p2p", flags.p2p, sim::kP2pStyles, &sim::P2pStyleName);
  if (!p2p.ok()) return p2p.status();
  config->p2p = *p2p;
  absl::StatusOr<sim::LaunchStyle> launches = ParseNamed("--launches", flags.launches, sim::kLaunchStyles, &sim::LaunchStyleName);
  if (!launches.ok()) return launches.status();
  config->launches = *launches;
  absl::StatusOr<sim::Vendor> vendor =
      ParseNamed("--vendor", flags.vendor, sim::kVendors, &sim::VendorName);
  if (!vendor.ok()) return vendor.status();
  config->vendor = *vendor;
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<int64_t> ParseMicros(absl::string_view text, bool allow_negative) {
  absl::string_view digits = text;
  bool negative = allow_negative && !digits.empty() && digits.front() == '-';
  if (negative) digits.remove_prefix(1);
  size_t point = digits.find('.');
  absl::string_view whole = digits.substr(0, point);
  absl::string_view fraction = point == absl::string_view::npos ? "" : digits.substr(point + 1);
  auto all_digits = [](absl::string_view part) {
    return std::all_of(part.begin(), part.end(), [](char c) { return c >= '0' && c <= '9'; });
  };
  if (whole.empty() || !all_digits(whole) || !all_digits(fraction) ||
      (point != absl::string_view::npos && fraction.empty())) {
    return absl::InvalidArgumentError(absl::StrCat("'", text, "' is not a ",
                                                   allow_negative ? "" : "non-negative ",
                                                   "decimal number of microseconds"));
  }
  if (fraction.size() > 3) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", text, "' is finer than a nanosecond (at most 3 decimals)"));
  }
  if (whole.size() > 12) {
    return absl::InvalidArgumentError(absl::StrCat("'", text, "' exceeds 1e12 microseconds"));
  }
  int64_t ns = 0;
  for (char c : whole) ns = ns * 10 + (c - '0');
  for (size_t i = 0; i < 3; ++i) ns = ns * 10 + (i < fraction.size() ? fraction[i] - '0' : 0);
  return negative ? -ns : ns;
}

absl::StatusOr<sim::LinkOverride> ParseSlowLink(absl::string_view text, int64_t latency_ns) {
  std::vector<absl::string_view> parts = absl::StrSplit(text, ':');
  if (parts.size() != 3) {
    return absl::InvalidArgumentError(absl::StrCat("'", text, "' is not SRC:DST:GBPS"));
  }
  absl::StatusOr<int32_t> src = ParseInt(parts[0], 0, 4095);
  if (!src.ok()) return src.status();
  absl::StatusOr<int32_t> dst = ParseInt(parts[1], 0, 4095);
  if (!dst.ok()) return dst.status();
  if (*src == *dst) {
    return absl::InvalidArgumentError(absl::StrCat("'", text, "' links a rank to itself"));
  }
  absl::StatusOr<double> gbps = ParseNumber(parts[2], 0.01, true);
  if (!gbps.ok()) return gbps.status();
  return sim::LinkOverride{*src, *dst, sim::Link{*gbps, latency_ns}};
}

static absl::Status ParseModelParallel(const SimulateFlags& flags,
                                       sim::ModelParallel* parallel) {
  absl::StatusOr<int32_t> tensor =
      Flagged("--tensor-parallel", ParseInt(flags.tensor_parallel, 1, 64));
  if (!tensor.ok()) return tensor.status();
  absl::StatusOr<int32_t> data = Flagged("--data-parallel", ParseInt(flags.data_parallel, 1, 1024));
  if (!data.ok()) return data.status();
  absl::StatusOr<double> share = Flagged("--tp-share", ParseNumber(flags.tp_share, 0.0));
  if (!share.ok()) return share.status();
  if (*share >= 1.0) {
    return FlagError("--tp-share", absl::StrCat("'", flags.tp_share, "' must be < 1"));
  }
  absl::StatusOr<int64_t> dp_sync = ParseMicros(flags.dp_sync_us);
  if (!dp_sync.ok()) return FlagError("--dp-sync-us", dp_sync.status().message());
  parallel->tensor = *tensor;
  parallel->data = *data;
  parallel->sequence_parallel = flags.sequence_parallel;
  parallel->overlap = flags.tp_overlap;
  parallel->tensor_share = *share;
  parallel->dp_sync_ns = *dp_sync;
  return absl::OkStatus();
}

absl::StatusOr<SimulateSettings> ParseSimulateFlags(const SimulateFlags& flags) {
  SimulateSettings settings;
  sim::Config& config = settings.config;
  if (absl::Status status = ParseShape(flags, &config); !status.ok()) return status;
  if (absl::Status status = ParseCosts(flags, &config); !status.ok()) return status;
  if (absl::Status status = ParseLinks(flags, &config); !status.ok()) return status;
  if (absl::Status status = ParseTiming(flags, &config); !status.ok()) return status;
  if (absl::Status status = ParsePlacementAndMemory(flags, &config); !status.ok()) return status;
  if (absl::Status status = ParseModelParallel(flags, &config.parallel); !status.ok()) {
    return status;
  }
  absl::StatusOr<KinetoLayout> layout = ParseLayout(flags.format);
  if (!layout.ok()) return layout.status();
  settings.write.kineto.layout = *layout;
  settings.write.kineto.nccl_args = !flags.no_nccl_args;
  settings.write.gzip = flags.gzip;
  settings.write.overwrite = flags.force;
  return settings;
}

CLI::App* SimulateCommand::Define(CLI::App& app) {
  CLI::App* simulate = app.add_subcommand("simulate",
                                          "Simulate a pipeline-parallel training "
                                          "job and write its per-rank traces and "
                                          "its exact bubble figures (truth.json)");
  simulate->footer(kSimulateFooter);
  SimulateFlags& f = flags_;
  simulate->add_option("-o,--output", f.output_dir, "Directory to write (created if missing)")
      ->type_name("DIR")
      ->required();
  simulate->add_option("--schedule", f.schedule, "gpipe, 1f1b, interleaved, zb-h1 or fwd-only")
      ->type_name("NAME")
      ->capture_default_str();
  simulate->add_option("-p,--stages", f.stages, "Pipeline stages = ranks")
      ->type_name("INT")
      ->capture_default_str();
  simulate->add_option("-m,--microbatches", f.microbatches, "Microbatches per iteration")
      ->type_name("INT")
      ->capture_default_str();
  simulate
      ->add_option("--virtual-stages", f.virtual_stages, "Model chunks per rank (interleaved only)")
      ->type_name("INT")
      ->capture_default_str();
  simulate->add_option("-k,--iterations", f.iterations, "Profiler steps")
      ->type_name("INT")
      ->capture_default_str();
  simulate->add_option("--fwd-us", f.forward_us, "Forward time of one microbatch per stage")
      ->type_name("US[,US...]")
      ->capture_default_str();
  simulate->add_option("--bwd-us", f.backward_us, "Backward time (zb-h1: input gradient only)")
      ->type_name("US[,US...]")
      ->capture_default_str();
  simulate->add_option("--wgrad-us", f.weight_grad_us, "Weight-gradient time (zb-h1 only)")
      ->type_name("US[,US...]");
  simulate->add_option("--kernels-per-op", f.kernels_per_op, "Kernels each op is split into")
      ->type_name("INT")
      ->capture_default_str();
  simulate->add_option("--activation-mb", f.activation_mb, "MiB sent per p2p message")
      ->type_name("MB")
      ->capture_default_str();
  simulate->add_option("--link-gbps", f.link_gbps, "Bandwidth of every link, Gbit/s (or inf)")
      ->type_name("GBPS")
      ->capture_default_str();
  simulate->add_option("--link-latency-us", f.link_latency_us, "Latency of every transfer")
      ->type_name("US")
      ->capture_default_str();
  simulate
      ->add_option("--slow-link", f.slow_links,
                   "Directed link SRC->DST at GBPS instead (repeatable)")
      ->type_name("SRC:DST:GBPS")
      ->allow_extra_args(false);
  simulate->add_option("--launch-gap-us", f.launch_gap_us, "CPU time of one kernel launch")
      ->type_name("US")
      ->capture_default_str();
  simulate
      ->add_option("--optimizer-us", f.optimizer_us,
                   "Optimizer kernel per rank per iteration (0 = none)")
      ->type_name("US")
      ->capture_default_str();
  simulate->add_option("--jitter", f.jitter, "Relative kernel-time noise in [0, 1)")
      ->type_name("FRACTION")
      ->capture_default_str();
  simulate->add_option("--seed", f.seed, "Seed of the jitter")
      ->type_name("INT")
      ->capture_default_str();
  simulate
      ->add_option("--clock-offset-us", f.clock_offsets_us,
                   "Per-rank clock offsets written into the traces (one per rank)")
      ->type_name("US,US...");
  simulate
      ->add_option("--ranks-per-host", f.ranks_per_host,
                   "Ranks per host, each trace naming its host (host_name) as Kineto does since "
                   "2026; ranks of one host share one clock offset (0: no host named)")
      ->type_name("N")
      ->capture_default_str();
  simulate
      ->add_option("--stage-to-rank", f.stage_to_rank,
                   "Rank running each stage, a permutation (default: stage s on rank s)")
      ->type_name("R,R...");
  simulate->add_option("--weights-mb", f.weights_mb, "Device memory held by each stage's weights")
      ->type_name("MB[,MB...]")
      ->capture_default_str();
  simulate
      ->add_option("--stash-mb", f.stash_mb,
                   "Activations kept per in-flight microbatch per chunk, MiB")
      ->type_name("MB")
      ->capture_default_str();
  simulate->add_flag("--no-iteration-barrier", f.no_iteration_barrier,
                     "Do not end each iteration with an all-reduce over all ranks");
  simulate
      ->add_option("--tensor-parallel", f.tensor_parallel,
                   "Tensor-parallel ranks per stage (Megatron-Core's layout tp-dp-pp)")
      ->type_name("N")
      ->capture_default_str();
  simulate->add_option("--data-parallel", f.data_parallel, "Data-parallel copies of the pipeline")
      ->type_name("N")
      ->capture_default_str();
  simulate->add_flag("--sequence-parallel", f.sequence_parallel,
                     "Tensor-parallel all-gather before and reduce-scatter after each kernel");
  simulate->add_flag("--tp-overlap", f.tp_overlap,
                     "Backward tensor-parallel all-reduces run beside the next kernel");
  simulate->add_option("--tp-share", f.tp_share, "Share of each kernel's time in its collective")
      ->type_name("FRACTION")
      ->capture_default_str();
  simulate
      ->add_option("--dp-sync-us", f.dp_sync_us,
                   "Data-parallel gradient all-reduce after the last backward (data > 1)")
      ->type_name("US")
      ->capture_default_str();
  simulate
      ->add_option("--annotations", f.annotations,
                   "none, pp-gpu (PP:<stage><F|B|W><mb> GPU ranges), pp-cpu "
                   "(Forward <mb> CPU ranges), pp-short (PP:<F|B|W><mb> CPU ranges) or "
                   "pp-mirrored (PP:<stage><F|B|W><mb> CPU ranges and their GPU copies, as "
                   "Kineto writes record_function on GPU jobs)")
      ->type_name("STYLE")
      ->capture_default_str();
  simulate
      ->add_option("--p2p", f.p2p,
                   "per-op (one NCCL kernel per send and recv, inside its c10d op) or batched "
                   "(batch_isend_irecv as Megatron-LM and torch.distributed.pipelining issue "
                   "it: one SendRecv kernel per batch under nccl:coalesced, peers only on the "
                   "record_param_comms ops before it)")
      ->type_name("STYLE")
      ->capture_default_str();
  simulate
      ->add_option("--launches", f.launches,
                   "one-thread (every launch from one CPU thread, kernels named after their "
                   "phase) or torch (backward compute launched from the autograd engine's "
                   "thread, kernels named like cuBLAS GEMMs, without the phase)")
      ->type_name("STYLE")
      ->capture_default_str();
  simulate
      ->add_option("--vendor", f.vendor,
                   "cuda or rocm (hipLaunchKernel / hipDeviceSynchronize with text stream "
                   "handles, an MI250X device, hipBLASLt GEMM names under --launches torch)")
      ->type_name("VENDOR")
      ->capture_default_str();
  simulate
      ->add_option("--format", f.format,
                   "Trace layout: new (relative ts + baseTimeNanoseconds), old "
                   "(absolute "
                   "ts), array (bare event array)")
      ->type_name("LAYOUT")
      ->capture_default_str();
  simulate->add_flag("--no-nccl-args", f.no_nccl_args,
                     "Leave NCCL metadata (peer, bytes, group) out of communication kernels");
  simulate->add_flag("--gzip", f.gzip, "Write rank<r>.pt.trace.json.gz");
  simulate->add_flag("--force", f.force,
                     "Replace an existing set in DIR (its rank files and truth.json)");
  return simulate;
}

int SimulateCommand::Run(std::ostream& out, std::ostream& err) {
  absl::StatusOr<SimulateSettings> settings = ParseSimulateFlags(flags_);
  if (!settings.ok()) {
    err << "bubblescope: simulate: " << MessageLine(settings.status()) << "\n";
    return kExitBadInput;
  }
  absl::StatusOr<sim::Simulation> simulation = sim::Simulate(settings->config);
  if (!simulation.ok()) {
    bool bad_config = simulation.status().code() == absl::StatusCode::kInvalidArgument;
    err << "bubblescope: simulate: " << (bad_config ? "" : "internal error: ")
        << MessageLine(simulation.status()) << "\n";
    return bad_config ? kExitBadInput : kExitFailure;
  }
  absl::StatusOr<std::vector<std::string>> written =
      sim::WriteSimulationSet(settings->config, *simulation, flags_.output_dir, settings->write);
  if (!written.ok()) {
    err << "bubblescope: simulate: " << MessageLine(written.status()) << "\n";
    return written.status().code() == absl::StatusCode::kAlreadyExists ? kExitBadInput
                                                                       : kExitFailure;
  }
  const sim::Truth& truth = simulation->truth;
  out << absl::StrFormat(
      "simulate: wrote %d rank traces and %s to %s\n"
      "%s p=%d m=%d v=%d, %d iterations: bubble fraction "
      "%.4f (theoretical %.4f), iteration "
      "p50 %.3f ms\n",
      simulation->trace.ranks.size(), sim::kTruthFileName, flags_.output_dir, truth.schedule,
      truth.stages, truth.microbatches, truth.virtual_stages, truth.iterations.size(),
      truth.bubble_fraction, truth.theoretical_bubble_fraction,
      static_cast<double>(truth.latency_p50_ns) / 1e6);
  // The figure a schedule's memory trade-off shows in, without opening truth.json.
  std::vector<std::string> peaks;
  for (const sim::RankMemoryTruth& memory : truth.memory) {
    peaks.push_back(absl::StrFormat("%.2f", static_cast<double>(memory.peak_allocated_bytes) /
                                                static_cast<double>(int64_t{1} << 30)));
  }
  out << "peak allocated memory by rank, GiB: " << absl::StrJoin(peaks, ", ") << "\n"
      << "(bubblescope whatif predicts other configurations of a measured job without writing "
         "traces)\n";
  out << std::flush;
  return out ? kExitOk : kExitFailure;
}

}  // namespace bubblescope
