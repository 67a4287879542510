#include "synth/simulate_options.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "common/status_macros.h"

namespace bubblescope::sim {
namespace {

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
  BUBBLESCOPE_RETURN_IF_ERROR(mb.status());
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
  return FlagError(flag, absl::StrCat("'", text, "' is not one of ", absl::StrJoin(names, ", ")));
}

absl::StatusOr<KinetoLayout> ParseLayout(absl::string_view text) {
  if (text == "new") return KinetoLayout::kRelativeWithBase;
  if (text == "old") return KinetoLayout::kAbsoluteMicros;
  if (text == "array") return KinetoLayout::kBareArray;
  return FlagError("--format", absl::StrCat("'", text, "' is not one of new, old, array, nsys"));
}

// --live's seconds as nanoseconds, for the layouts a running job's folder can hold.
absl::StatusOr<int64_t> ParseLiveInterval(const SimulateOptions& options) {
  constexpr double kMostSeconds = 86400.0;  // a day between iterations: surely a typo past it
  BUBBLESCOPE_ASSIGN_OR_RETURN(const double seconds,
                               Flagged("--live", ParseNumber(options.live, 0.0)));
  if (seconds > kMostSeconds) {
    return FlagError("--live", absl::StrCat("'", options.live, "' seconds is more than a day"));
  }
  if (options.format == "nsys") {
    return FlagError("--live",
                     "does not apply to --format nsys: an Nsight Systems export is made after "
                     "its run ends");
  }
  if (options.gzip && options.format == "array") {
    return FlagError("--gzip",
                     "does not apply to --live with --format array: a growing gzip file cannot "
                     "be read before it ends");
  }
  return static_cast<int64_t>(std::llround(seconds * 1e9));
}

// Costs per stage from the three cost options.
absl::Status ParseCosts(const SimulateOptions& options, Config* config) {
  const int32_t p = config->stages;
  auto micros = [](absl::string_view text) { return ParseMicros(text); };
  absl::StatusOr<std::vector<int64_t>> forward =
      PerStage<int64_t>("--fwd-us", options.forward_us, p, micros);
  BUBBLESCOPE_RETURN_IF_ERROR(forward.status());
  absl::StatusOr<std::vector<int64_t>> backward =
      PerStage<int64_t>("--bwd-us", options.backward_us, p, micros);
  BUBBLESCOPE_RETURN_IF_ERROR(backward.status());
  std::vector<int64_t> weight_grad(static_cast<size_t>(p), 0);
  const bool zero_bubble = config->schedule == Schedule::kZeroBubbleH1;
  if (zero_bubble != !options.weight_grad_us.empty()) {
    return FlagError("--wgrad-us", zero_bubble ? "is required by the zb-h1 schedule"
                                               : "applies only to the zb-h1 schedule");
  }
  if (zero_bubble) {
    absl::StatusOr<std::vector<int64_t>> parsed =
        PerStage<int64_t>("--wgrad-us", options.weight_grad_us, p, micros);
    BUBBLESCOPE_RETURN_IF_ERROR(parsed.status());
    weight_grad = *std::move(parsed);
  }
  config->costs.clear();
  for (size_t s = 0; s < static_cast<size_t>(p); ++s) {
    config->costs.push_back(StageCost{(*forward)[s], (*backward)[s], weight_grad[s]});
  }
  return absl::OkStatus();
}

absl::Status ParseShape(const SimulateOptions& options, Config* config) {
  BUBBLESCOPE_ASSIGN_OR_RETURN(
      config->schedule, ParseNamed("--schedule", options.schedule, kSchedules, &ScheduleName));
  BUBBLESCOPE_ASSIGN_OR_RETURN(config->stages,
                               Flagged("--stages", ParseInt(options.stages, 1, 4096)));
  BUBBLESCOPE_ASSIGN_OR_RETURN(
      config->microbatches,
      Flagged("--microbatches", ParseInt(options.microbatches, 1, 1'000'000)));
  BUBBLESCOPE_ASSIGN_OR_RETURN(
      config->virtual_stages,
      Flagged("--virtual-stages", ParseInt(options.virtual_stages, 1, 1024)));
  BUBBLESCOPE_ASSIGN_OR_RETURN(config->iterations,
                               Flagged("--iterations", ParseInt(options.iterations, 1, 1'000'000)));
  BUBBLESCOPE_ASSIGN_OR_RETURN(
      config->kernels_per_op,
      Flagged("--kernels-per-op", ParseInt(options.kernels_per_op, 1, 1024)));
  return absl::OkStatus();
}

absl::Status ParseLinks(const SimulateOptions& options, Config* config) {
  BUBBLESCOPE_ASSIGN_OR_RETURN(config->activation_bytes,
                               Flagged("--activation-mb", MegabytesToBytes(options.activation_mb)));
  absl::StatusOr<double> gbps = Flagged("--link-gbps", ParseNumber(options.link_gbps, 0.01, true));
  BUBBLESCOPE_RETURN_IF_ERROR(gbps.status());
  absl::StatusOr<int64_t> latency = ParseMicros(options.link_latency_us);
  if (!latency.ok()) return FlagError("--link-latency-us", latency.status().message());
  config->link = Link{*gbps, *latency};
  config->link_overrides.clear();
  for (const std::string& text : options.slow_links) {
    absl::StatusOr<LinkOverride> entry = ParseSlowLink(text, *latency);
    if (!entry.ok()) return FlagError("--slow-link", entry.status().message());
    if (entry->src_rank >= config->stages || entry->dst_rank >= config->stages) {
      return FlagError("--slow-link",
                       absl::StrCat("'", text, "' names a rank outside 0..", config->stages - 1));
    }
    config->link_overrides.push_back(*entry);
  }
  return absl::OkStatus();
}

absl::Status ParseTiming(const SimulateOptions& options, Config* config) {
  absl::StatusOr<int64_t> launch_gap = ParseMicros(options.launch_gap_us);
  if (!launch_gap.ok()) return FlagError("--launch-gap-us", launch_gap.status().message());
  config->launch_gap_ns = *launch_gap;
  absl::StatusOr<int64_t> optimizer = ParseMicros(options.optimizer_us);
  if (!optimizer.ok()) return FlagError("--optimizer-us", optimizer.status().message());
  config->optimizer_ns = *optimizer;
  absl::StatusOr<double> jitter = Flagged("--jitter", ParseNumber(options.jitter, 0.0));
  BUBBLESCOPE_RETURN_IF_ERROR(jitter.status());
  if (*jitter >= 1.0)
    return FlagError("--jitter", absl::StrCat("'", options.jitter, "' must be < 1"));
  config->jitter = *jitter;
  uint64_t seed = 0;
  const char* last = options.seed.data() + options.seed.size();
  auto [end, error] = std::from_chars(options.seed.data(), last, seed);
  if (options.seed.empty() || error != std::errc() || end != last) {
    return FlagError("--seed", absl::StrCat("'", options.seed, "' is not a whole number >= 0"));
  }
  config->seed = seed;
  config->iteration_barrier = !options.no_iteration_barrier;
  absl::StatusOr<int64_t> gap = ParseMicros(options.iteration_gap_us);
  if (!gap.ok()) return FlagError("--iteration-gap-us", gap.status().message());
  config->iteration_gap_ns = *gap;
  absl::StatusOr<double> spread =
      Flagged("--transfer-spread", ParseNumber(options.transfer_spread, 0.0));
  BUBBLESCOPE_RETURN_IF_ERROR(spread.status());
  if (*spread >= 1.0) {
    return FlagError("--transfer-spread",
                     absl::StrCat("'", options.transfer_spread, "' must be < 1"));
  }
  config->transfer_spread = *spread;
  absl::StatusOr<int64_t> tail = ParseMicros(options.collective_tail_us);
  if (!tail.ok()) return FlagError("--collective-tail-us", tail.status().message());
  config->collective_tail_ns = *tail;
  return absl::OkStatus();
}

absl::Status ParsePlacementAndMemory(const SimulateOptions& options, Config* config) {
  const int32_t p = config->stages;
  config->clock_offsets_ns.clear();
  if (!options.clock_offsets_us.empty()) {
    absl::StatusOr<std::vector<int64_t>> offsets = PerStage<int64_t>(
        "--clock-offset-us", options.clock_offsets_us, p,
        [](absl::string_view text) { return ParseMicros(text, /*allow_negative=*/true); });
    BUBBLESCOPE_RETURN_IF_ERROR(offsets.status());
    config->clock_offsets_ns = *std::move(offsets);
  }
  // Hosts hold global ranks, so replicas count (ValidateConfig checks the job's size).
  BUBBLESCOPE_ASSIGN_OR_RETURN(
      config->ranks_per_host,
      Flagged("--ranks-per-host", ParseInt(options.ranks_per_host, 0, 1 << 20)));
  config->write_host_names = !options.no_host_names;
  config->describe_groups = !options.no_group_descriptions;
  config->host_clocks.clear();
  if (!options.host_clocks.empty()) {
    for (absl::string_view part : absl::StrSplit(options.host_clocks, ',')) {
      const std::vector<absl::string_view> fields = absl::StrSplit(part, ':');
      if (fields.size() != 2) {
        return FlagError("--host-clocks", absl::StrCat("'", part, "' is not OFFSET_US:PPM"));
      }
      absl::StatusOr<int64_t> offset = ParseMicros(fields[0], /*allow_negative=*/true);
      if (!offset.ok()) return FlagError("--host-clocks", offset.status().message());
      absl::StatusOr<double> ppm = Flagged("--host-clocks", ParseNumber(fields[1], -1000.0));
      BUBBLESCOPE_RETURN_IF_ERROR(ppm.status());
      config->host_clocks.push_back(Config::HostClock{*offset, *ppm});
    }
  }
  config->stage_to_rank.clear();
  if (!options.stage_to_rank.empty()) {
    for (absl::string_view part : absl::StrSplit(options.stage_to_rank, ',')) {
      absl::StatusOr<int32_t> rank = Flagged("--stage-to-rank", ParseInt(part, 0, p - 1));
      BUBBLESCOPE_RETURN_IF_ERROR(rank.status());
      config->stage_to_rank.push_back(*rank);
    }
  }
  config->weights_bytes.clear();
  if (!options.weights_mb.empty()) {
    absl::StatusOr<std::vector<int64_t>> weights =
        PerStage<int64_t>("--weights-mb", options.weights_mb, p,
                          [](absl::string_view text) { return MegabytesToBytes(text); });
    BUBBLESCOPE_RETURN_IF_ERROR(weights.status());
    config->weights_bytes = *std::move(weights);
  }
  BUBBLESCOPE_ASSIGN_OR_RETURN(config->activation_stash_bytes,
                               Flagged("--stash-mb", MegabytesToBytes(options.stash_mb)));
  BUBBLESCOPE_ASSIGN_OR_RETURN(
      config->annotations,
      ParseNamed("--annotations", options.annotations, kAnnotationStyles, &AnnotationStyleName));
  BUBBLESCOPE_ASSIGN_OR_RETURN(config->p2p,
                               ParseNamed("--p2p", options.p2p, kP2pStyles, &P2pStyleName));
  BUBBLESCOPE_ASSIGN_OR_RETURN(config->launches, ParseNamed("--launches", options.launches,
                                                            kLaunchStyles, &LaunchStyleName));
  BUBBLESCOPE_ASSIGN_OR_RETURN(config->vendor,
                               ParseNamed("--vendor", options.vendor, kVendors, &VendorName));
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

absl::StatusOr<LinkOverride> ParseSlowLink(absl::string_view text, int64_t latency_ns) {
  std::vector<absl::string_view> parts = absl::StrSplit(text, ':');
  if (parts.size() != 3) {
    return absl::InvalidArgumentError(absl::StrCat("'", text, "' is not SRC:DST:GBPS"));
  }
  absl::StatusOr<int32_t> src = ParseInt(parts[0], 0, 4095);
  BUBBLESCOPE_RETURN_IF_ERROR(src.status());
  absl::StatusOr<int32_t> dst = ParseInt(parts[1], 0, 4095);
  BUBBLESCOPE_RETURN_IF_ERROR(dst.status());
  if (*src == *dst) {
    return absl::InvalidArgumentError(absl::StrCat("'", text, "' links a rank to itself"));
  }
  absl::StatusOr<double> gbps = ParseNumber(parts[2], 0.01, true);
  BUBBLESCOPE_RETURN_IF_ERROR(gbps.status());
  return LinkOverride{*src, *dst, Link{*gbps, latency_ns}};
}

// Sizes, shares of a kernel's time and times of the in-stage parallelism (ModelParallel).
static absl::Status ParseModelParallel(const SimulateOptions& options, ModelParallel* parallel) {
  // Data parallelism goes to 1,024 copies (128 x 8 stages is the 1,024-rank job of issue 26).
  for (const auto& [flag, text, out, most] :
       {std::tuple{"--tensor-parallel", &options.tensor_parallel, &parallel->tensor, 64},
        std::tuple{"--context-parallel", &options.context_parallel, &parallel->context, 64},
        std::tuple{"--expert-parallel", &options.expert_parallel, &parallel->expert, 64},
        std::tuple{"--data-parallel", &options.data_parallel, &parallel->data, 1024}}) {
    absl::StatusOr<int32_t> size = Flagged(flag, ParseInt(*text, 1, most));
    BUBBLESCOPE_RETURN_IF_ERROR(size.status());
    *out = *size;
  }
  for (const auto& [flag, text, out] :
       {std::tuple{"--tp-share", &options.tp_share, &parallel->tensor_share},
        std::tuple{"--ep-share", &options.ep_share, &parallel->expert_share}}) {
    absl::StatusOr<double> share = Flagged(flag, ParseNumber(*text, 0.0));
    BUBBLESCOPE_RETURN_IF_ERROR(share.status());
    if (*share >= 1.0) return FlagError(flag, absl::StrCat("'", *text, "' must be < 1"));
    *out = *share;
  }
  for (const auto& [flag, text, out] :
       {std::tuple{"--dp-sync-us", &options.dp_sync_us, &parallel->dp_sync_ns},
        std::tuple{"--cp-exchange-us", &options.cp_exchange_us, &parallel->context_exchange_ns}}) {
    absl::StatusOr<int64_t> ns = ParseMicros(*text);
    if (!ns.ok()) return FlagError(flag, ns.status().message());
    *out = *ns;
  }
  parallel->sequence_parallel = options.sequence_parallel;
  parallel->dp_sync_coalesced = options.dp_sync_coalesced;
  parallel->overlap = options.tp_overlap;
  return absl::OkStatus();
}

absl::StatusOr<SimulateSettings> ParseSimulateOptions(const SimulateOptions& options) {
  SimulateSettings settings;
  Config& config = settings.config;
  BUBBLESCOPE_RETURN_IF_ERROR(ParseShape(options, &config));
  BUBBLESCOPE_RETURN_IF_ERROR(ParseCosts(options, &config));
  BUBBLESCOPE_RETURN_IF_ERROR(ParseLinks(options, &config));
  BUBBLESCOPE_RETURN_IF_ERROR(ParseTiming(options, &config));
  BUBBLESCOPE_RETURN_IF_ERROR(ParsePlacementAndMemory(options, &config));
  if (absl::Status status = ParseModelParallel(options, &config.parallel); !status.ok()) {
    return status;
  }
  if (options.format == "nsys") {
    // One Nsight Systems export per rank; --no-nccl-args as an export without --include-blobs.
    if (options.gzip) return FlagError("--gzip", "does not apply to --format nsys");
    // NCCL's own ranges, which an export carries, name every call's communicator, coalesced or
    // not: only torch's Kineto records lose the group, and only they are written so.
    if (options.dp_sync_coalesced) {
      return FlagError("--dp-sync-coalesced", "does not apply to --format nsys");
    }
    settings.write.nsys = NsysWriteOptions{.nccl_payloads = !options.no_nccl_args};
  } else {
    absl::StatusOr<KinetoLayout> layout = ParseLayout(options.format);
    BUBBLESCOPE_RETURN_IF_ERROR(layout.status());
    settings.write.kineto.layout = *layout;
  }
  settings.write.kineto.nccl_args = !options.no_nccl_args;
  settings.write.gzip = options.gzip;
  settings.write.overwrite = options.force;
  if (!options.live.empty()) {
    BUBBLESCOPE_ASSIGN_OR_RETURN(settings.live_interval_ns, ParseLiveInterval(options));
  }
  return settings;
}

}  // namespace bubblescope::sim
