#include "synth/truth_json.h"

#include <cmath>
#include <cstdint>
#include <vector>

#include "text/json_writer.h"

namespace bubblescope::sim {
namespace {

// Nanoseconds as exact microseconds.
void Micros(JsonWriter& json, std::string_view key, TimeNs ns) { json.DecimalMember(key, ns, 3); }

// A link's bandwidth; an infinitely fast link (JSON has no infinity) is null.
void Gbps(JsonWriter& json, double gbps) {
  json.Key("gbps");
  if (std::isinf(gbps)) {
    json.Null();
  } else {
    json.Double(gbps);
  }
}

void WriteConfig(JsonWriter& json, const Config& config) {
  const auto p = static_cast<size_t>(config.stages);
  json.Key("config");
  json.BeginObject();
  json.StringMember("schedule", ScheduleName(config.schedule));
  json.IntMember("stages", config.stages);
  json.IntMember("microbatches", config.microbatches);
  json.IntMember("virtual_stages", config.virtual_stages);
  json.IntMember("iterations", config.iterations);
  json.Key("costs");
  json.BeginArray();
  for (size_t s = 0; s < config.costs.size(); ++s) {
    json.BeginObject();
    json.IntMember("stage", static_cast<int64_t>(s));
    Micros(json, "forward_us", config.costs[s].forward);
    Micros(json, "backward_us", config.costs[s].backward);
    Micros(json, "weight_grad_us", config.costs[s].weight_grad);
    json.EndObject();
  }
  json.EndArray();
  json.IntMember("kernels_per_op", config.kernels_per_op);
  json.IntMember("activation_bytes", config.activation_bytes);
  json.Key("link");
  json.BeginObject();
  Gbps(json, config.link.gbps);
  Micros(json, "latency_us", config.link.latency_ns);
  json.EndObject();
  json.Key("link_overrides");
  json.BeginArray();
  for (const LinkOverride& entry : config.link_overrides) {
    json.BeginObject();
    json.IntMember("src_rank", entry.src_rank);
    json.IntMember("dst_rank", entry.dst_rank);
    Gbps(json, entry.link.gbps);
    Micros(json, "latency_us", entry.link.latency_ns);
    json.EndObject();
  }
  json.EndArray();
  Micros(json, "launch_gap_us", config.launch_gap_ns);
  Micros(json, "optimizer_us", config.optimizer_ns);
  json.DoubleMember("jitter", config.jitter);
  json.UIntMember("seed", config.seed);
  json.Key("clock_offsets_us");
  json.BeginArray();
  for (size_t r = 0; r < p; ++r) {
    json.Decimal(config.clock_offsets_ns.empty() ? 0 : config.clock_offsets_ns[r], 3);
  }
  json.EndArray();
  json.Key("weights_bytes");
  json.BeginArray();
  for (size_t s = 0; s < p; ++s) {
    json.Int(config.weights_bytes.empty() ? 0 : config.weights_bytes[s]);
  }
  json.EndArray();
  json.IntMember("activation_stash_bytes", config.activation_stash_bytes);
  json.BoolMember("iteration_barrier", config.iteration_barrier);
  json.StringMember("annotations", AnnotationStyleName(config.annotations));
  json.StringMember("p2p", P2pStyleName(config.p2p));
  json.StringMember("launches", LaunchStyleName(config.launches));
  json.StringMember("vendor", VendorName(config.vendor));
  Micros(json, "start_time_us", config.start_time_ns);
  if (!config.host_clocks.empty() || config.iteration_gap_ns > 0 || config.transfer_spread > 0 ||
      config.collective_tail_ns > 0 || !config.describe_groups || !config.write_host_names) {
    // Only multi-node sets carry these, so every other set stays as it was. A rank of host h
    // writes true time t as t + offset + drift_ppm * 1e-6 * (t - start_time).
    json.IntMember("ranks_per_host", config.ranks_per_host);
    json.BoolMember("host_names_written", config.write_host_names && config.ranks_per_host > 0);
    json.BoolMember("groups_described", config.describe_groups);
    Micros(json, "iteration_gap_us", config.iteration_gap_ns);
    json.DoubleMember("transfer_spread", config.transfer_spread);
    Micros(json, "collective_tail_us", config.collective_tail_ns);
    json.Key("host_clocks");
    json.BeginArray();
    for (const Config::HostClock& clock : config.host_clocks) {
      json.BeginObject();
      Micros(json, "offset_us", clock.offset_ns);
      json.DoubleMember("drift_ppm", clock.drift_ppm);
      json.EndObject();
    }
    json.EndArray();
  }
  const ModelParallel& parallel = config.parallel;
  if (parallel.replicas() > 1) {
    // Only jobs with replicas carry these, so every other set stays as it was.
    json.Key("model_parallel");
    json.BeginObject();
    json.IntMember("tensor", parallel.tensor);
    json.IntMember("data", parallel.data);
    json.BoolMember("sequence_parallel", parallel.sequence_parallel);
    json.BoolMember("overlap", parallel.overlap);
    json.DoubleMember("tensor_share", parallel.tensor_share);
    Micros(json, "dp_sync_us", parallel.dp_sync_ns);
    // Only when set, so that every other set stays as it was.
    if (parallel.dp_sync_coalesced) json.BoolMember("dp_sync_coalesced", true);
    json.IntMember("context", parallel.context);
    Micros(json, "context_exchange_us", parallel.context_exchange_ns);
    json.IntMember("expert", parallel.expert);
    json.DoubleMember("expert_share", parallel.expert_share);
    json.EndObject();
  }
  json.EndObject();
}

// The per-rank figures of one iteration, or their sums over all iterations.
void WriteRankFigures(JsonWriter& json, const RankIterationTruth& rank) {
  Micros(json, "compute_us", rank.split.compute);
  Micros(json, "idle_us", rank.split.idle);
  Micros(json, "fill_us", rank.split.fill);
  Micros(json, "drain_us", rank.split.drain);
  Micros(json, "stall_us", rank.split.stall);
  Micros(json, "comm_wait_us", rank.split.comm_wait);
  Micros(json, "empty_us", rank.split.empty);
}

void WriteIterations(JsonWriter& json, const Truth& truth) {
  json.Key("iterations");
  json.BeginArray();
  for (const IterationTruth& iteration : truth.iterations) {
    json.BeginObject();
    json.IntMember("step", iteration.iteration);
    Micros(json, "window_start_us", iteration.window_start);
    Micros(json, "window_end_us", iteration.window_end);
    Micros(json, "window_us", iteration.window());
    Micros(json, "idle_us", iteration.idle);
    json.DoubleMember("bubble_fraction", iteration.bubble_fraction);
    json.Key("ranks");
    json.BeginArray();
    for (const RankIterationTruth& rank : iteration.ranks) {
      json.BeginObject();
      json.IntMember("rank", rank.rank);
      json.IntMember("stage", rank.stage);
      Micros(json, "first_compute_start_us", rank.first_compute_start);
      Micros(json, "last_compute_end_us", rank.last_compute_end);
      WriteRankFigures(json, rank);
      json.EndObject();
    }
    json.EndArray();
    json.EndObject();
  }
  json.EndArray();
}

void WriteRankStats(JsonWriter& json, const Truth& truth) {
  std::vector<RankIterationTruth> totals(truth.memory.size());
  for (const IterationTruth& iteration : truth.iterations) {
    for (const RankIterationTruth& rank : iteration.ranks) {
      RankIterationTruth& total = totals[static_cast<size_t>(rank.rank)];
      total.stage = rank.stage;
      total.split.compute += rank.split.compute;
      total.split.idle += rank.split.idle;
      total.split.fill += rank.split.fill;
      total.split.drain += rank.split.drain;
      total.split.stall += rank.split.stall;
      total.split.comm_wait += rank.split.comm_wait;
      total.split.empty += rank.split.empty;
    }
  }
  json.Key("rank_stats");
  json.BeginArray();
  for (size_t r = 0; r < totals.size(); ++r) {
    json.BeginObject();
    json.IntMember("rank", truth.memory[r].rank);
    json.IntMember("stage", totals[r].stage);
    json.IntMember("peak_allocated_bytes", truth.memory[r].peak_allocated_bytes);
    json.IntMember("peak_reserved_bytes", truth.memory[r].peak_reserved_bytes);
    WriteRankFigures(json, totals[r]);
    json.EndObject();
  }
  json.EndArray();
}

void WriteOpStats(JsonWriter& json, std::string_view key, const OpTimeStats& stats) {
  json.Key(key);
  json.BeginObject();
  json.IntMember("count", stats.count);
  Micros(json, "total_us", stats.total_ns);
  json.DoubleMember("mean_us", stats.mean_ns / 1000.0);
  Micros(json, "p90_us", stats.p90_ns);
  json.EndObject();
}

void WriteStages(JsonWriter& json, const Truth& truth) {
  json.Key("stages");
  json.BeginArray();
  for (const StageTruth& stage : truth.per_stage) {
    json.BeginObject();
    json.IntMember("stage", stage.stage);
    json.IntMember("rank", stage.rank);
    WriteOpStats(json, "forward", stage.forward);
    WriteOpStats(json, "backward", stage.backward);
    WriteOpStats(json, "weight_grad", stage.weight_grad);
    json.DoubleMember("mean_total_us", stage.mean_total_ns / 1000.0);
    json.EndObject();
  }
  json.EndArray();
}

}  // namespace

absl::StatusOr<std::string> TruthJson(const Config& config, const Truth& truth) {
  JsonWriter json(JsonWriterOptions{.indent = 2});
  json.BeginObject();
  json.StringMember("schema", kTruthSchema);
  WriteConfig(json, config);
  json.IntArrayMember("stage_to_rank", truth.stage_to_rank);
  json.DoubleMember("theoretical_bubble_fraction", truth.theoretical_bubble_fraction);
  json.DoubleMember("bubble_fraction", truth.bubble_fraction);
  Micros(json, "idle_us", truth.idle_ns);
  Micros(json, "capacity_us", truth.capacity_ns);
  json.Key("latency_us");
  json.BeginObject();
  Micros(json, "p50", truth.latency_p50_ns);
  Micros(json, "p90", truth.latency_p90_ns);
  Micros(json, "max", truth.latency_max_ns);
  json.EndObject();
  WriteIterations(json, truth);
  WriteRankStats(json, truth);
  WriteStages(json, truth);
  json.IntMember("slowest_stage", truth.slowest_stage);
  json.EndObject();
  absl::StatusOr<std::string> text = json.Finish();
  if (text.ok()) text->push_back('\n');
  return text;
}

}  // namespace bubblescope::sim
