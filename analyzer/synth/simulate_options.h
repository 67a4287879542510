// The options of a synthetic job as `bubblescope simulate` takes them, and their parsing and
// checking into the engine's configuration and the set's write options (docs/simulator.md lists
// every option). Plain values in, a value or a one-line error out: cli/ only declares the flags
// that fill SimulateOptions and prints what comes back.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "schedule_engine/config.h"
#include "synth/simulated_set.h"

namespace bubblescope::sim {

// The options as typed. Values stay text until ParseSimulateOptions parses them, so every bad
// value is reported the same way: one line naming the option's flag.
struct SimulateOptions {
  std::string schedule = "1f1b";
  std::string stages = "4";
  std::string microbatches = "8";
  std::string virtual_stages = "1";
  std::string iterations = "3";
  std::string forward_us = "1000";
  std::string backward_us = "2000";
  std::string weight_grad_us;  // zb-h1 only (required there)
  std::string kernels_per_op = "2";
  std::string activation_mb = "16";
  std::string link_gbps = "400";  // 16 MiB in 0.34 ms: below a 1 ms forward
  std::string link_latency_us = "5";
  std::vector<std::string> slow_links;  // SRC:DST:GBPS
  std::string launch_gap_us = "5";
  std::string optimizer_us = "0";
  std::string jitter = "0";
  std::string seed = "1";
  std::string clock_offsets_us;      // empty = all zero
  std::string ranks_per_host = "0";  // 0: no host named
  std::string host_clocks;           // OFFSET_US:PPM per host, comma-separated; empty = exact
  bool no_host_names = false;        // hosts keep their clocks, no trace names its host
  std::string iteration_gap_us = "0";
  std::string transfer_spread = "0";
  std::string collective_tail_us = "0";
  bool no_group_descriptions = false;
  std::string stage_to_rank;        // empty = identity
  std::string weights_mb = "2048";  // weights, gradients and optimizer state per stage
  std::string stash_mb = "96";      // so peaks show the schedule's in-flight microbatches
  bool no_iteration_barrier = false;
  // Tensor, context, expert and data parallelism beside the pipeline (sim::ModelParallel).
  std::string tensor_parallel = "1";
  std::string context_parallel = "1";
  std::string expert_parallel = "1";
  std::string data_parallel = "1";
  std::string cp_exchange_us = "100";
  std::string ep_share = "0.1";
  bool sequence_parallel = false;
  bool tp_overlap = false;
  std::string tp_share = "0.15";
  std::string dp_sync_us = "0";
  bool dp_sync_coalesced = false;
  std::string annotations = "none";
  std::string p2p = "per-op";
  std::string launches = "one-thread";
  std::string vendor = "cuda";
  std::string format = "new";
  bool no_nccl_args = false;
  bool gzip = false;
  std::string output_dir;
  bool force = false;
  // Seconds between two iterations' writes when the set is written as the job runs
  // (synth/live_set.h); empty: the whole set at once.
  std::string live;
};

struct SimulateSettings {
  Config config;
  SetWriteOptions write;
  // Set: write the set live (WriteSimulationSetLive), this many ns between two iterations.
  std::optional<int64_t> live_interval_ns;
};

// Parses and checks every option; the error message starts with the option's flag
// ("--fwd-us: ..."). Checks that need the whole config (cost bounds, simulated
// span) are left to the engine (ValidateConfig).
absl::StatusOr<SimulateSettings> ParseSimulateOptions(const SimulateOptions& flags);

// A non-negative (or, with allow_negative, any) decimal number of microseconds
// with at most three fractional digits, as exact nanoseconds: "2.5" -> 2500.
absl::StatusOr<int64_t> ParseMicros(absl::string_view text, bool allow_negative = false);

// "SRC:DST:GBPS": the directed link from rank SRC to rank DST at GBPS (the
// default latency).
absl::StatusOr<LinkOverride> ParseSlowLink(absl::string_view text, int64_t latency_ns);

}  // namespace bubblescope::sim
