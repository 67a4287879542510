// Fuzz target for `bubblescope simulate`'s configuration: flag values as typed, parsed by
// simulate's own ParseSimulateOptions (synth/simulate_options.h, the one parse function it has),
// then the simulation, the truth.json writer, the Kineto writer in the chosen layout, the reader
// reading every rank back, and the job driver and both reports over what was read.
//
// Input: text, one flag per line as `name=value` or `--name=value` (`name` alone for the
// switches no-iteration-barrier and no-nccl-args); names are simulate's long flag names
// (docs/simulator.md, "Options"); unknown names, -o, --force and --gzip are ignored (nothing is
// written to disk); later lines win, except slow-link, which adds (up to eight). Jobs larger
// than kMaxOps (stages x microbatches x virtual stages x iterations x kernels per op) are passed
// over so no input takes seconds.
//
// Checks: the simulator refuses a config only with InvalidArgument (anything else is what the
// CLI calls an internal error); the truth's figures are fractions and its JSON is JSON; every
// rank written reads back without a whole-file error or import warning, with the same timelines,
// annotations, steps and memory samples as simulated; the analysis of the read-back job succeeds.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "fuzz_checks.h"
#include "simdjson.h"
#include "synth/simulate_options.h"
#include "synth/synthetic_job.h"
#include "synth/truth_json.h"
#include "writers/kineto_writer.h"

namespace {

using namespace bubblescope;  // NOLINT(build/namespaces): a fuzz target's private helpers

constexpr int64_t kMaxOps = 4096;
constexpr size_t kMaxSlowLinks = 8;

struct TextFlag {
  std::string_view name;
  std::string sim::SimulateOptions::*field;
};

constexpr TextFlag kTextFlags[] = {
    {"schedule", &sim::SimulateOptions::schedule},
    {"stages", &sim::SimulateOptions::stages},
    {"microbatches", &sim::SimulateOptions::microbatches},
    {"virtual-stages", &sim::SimulateOptions::virtual_stages},
    {"iterations", &sim::SimulateOptions::iterations},
    {"fwd-us", &sim::SimulateOptions::forward_us},
    {"bwd-us", &sim::SimulateOptions::backward_us},
    {"wgrad-us", &sim::SimulateOptions::weight_grad_us},
    {"kernels-per-op", &sim::SimulateOptions::kernels_per_op},
    {"activation-mb", &sim::SimulateOptions::activation_mb},
    {"link-gbps", &sim::SimulateOptions::link_gbps},
    {"link-latency-us", &sim::SimulateOptions::link_latency_us},
    {"launch-gap-us", &sim::SimulateOptions::launch_gap_us},
    {"optimizer-us", &sim::SimulateOptions::optimizer_us},
    {"jitter", &sim::SimulateOptions::jitter},
    {"seed", &sim::SimulateOptions::seed},
    {"clock-offset-us", &sim::SimulateOptions::clock_offsets_us},
    {"stage-to-rank", &sim::SimulateOptions::stage_to_rank},
    {"weights-mb", &sim::SimulateOptions::weights_mb},
    {"stash-mb", &sim::SimulateOptions::stash_mb},
    {"annotations", &sim::SimulateOptions::annotations},
    {"p2p", &sim::SimulateOptions::p2p},
    {"launches", &sim::SimulateOptions::launches},
    {"vendor", &sim::SimulateOptions::vendor},
    {"format", &sim::SimulateOptions::format},
    {"tensor-parallel", &sim::SimulateOptions::tensor_parallel},
    {"context-parallel", &sim::SimulateOptions::context_parallel},
    {"expert-parallel", &sim::SimulateOptions::expert_parallel},
    {"data-parallel", &sim::SimulateOptions::data_parallel},
    {"tp-share", &sim::SimulateOptions::tp_share},
    {"ep-share", &sim::SimulateOptions::ep_share},
    {"cp-exchange-us", &sim::SimulateOptions::cp_exchange_us},
    {"dp-sync-us", &sim::SimulateOptions::dp_sync_us},
};

sim::SimulateOptions ParseLines(std::string_view text) {
  sim::SimulateOptions flags;
  while (!text.empty()) {
    const size_t end = std::min(text.find('\n'), text.size());
    std::string_view line = text.substr(0, end);
    text.remove_prefix(std::min(end + 1, text.size()));
    while (!line.empty() && line.front() == '-') line.remove_prefix(1);
    const size_t equals = line.find('=');
    const std::string_view name = line.substr(0, equals);
    const std::string_view value =
        equals == std::string_view::npos ? std::string_view() : line.substr(equals + 1);
    if (name == "no-iteration-barrier") flags.no_iteration_barrier = true;
    if (name == "no-nccl-args") flags.no_nccl_args = true;
    if (name == "sequence-parallel") flags.sequence_parallel = true;
    if (name == "tp-overlap") flags.tp_overlap = true;
    if (name == "slow-link" && flags.slow_links.size() < kMaxSlowLinks) {
      flags.slow_links.emplace_back(value);
    }
    for (const TextFlag& flag : kTextFlags) {
      if (name == flag.name) flags.*flag.field = std::string(value);
    }
  }
  return flags;
}

int64_t Ops(const sim::Config& config) {
  int64_t ops = 1;
  // Every replica (ModelParallel) is a copy of the pipeline's ranks, each with its ring steps.
  for (int64_t factor :
       {config.stages, config.microbatches, config.virtual_stages, config.iterations,
        config.kernels_per_op, config.parallel.replicas(), config.parallel.context + 1}) {
    ops = SaturatingMul(ops, factor);
  }
  return ops;
}

void CheckTruth(const sim::Config& config, const sim::Truth& truth) {
  auto fraction = [](double value) { return value >= 0.0 && value <= 1.0; };
  if (!fraction(truth.bubble_fraction) || !fraction(truth.theoretical_bubble_fraction)) {
    fuzz::Fail(absl::StrCat("truth: a bubble fraction outside [0, 1]: ", truth.bubble_fraction,
                            ", theoretical ", truth.theoretical_bubble_fraction));
  }
  for (const sim::IterationTruth& iteration : truth.iterations) {
    if (!fraction(iteration.bubble_fraction)) fuzz::Fail("truth: an iteration's bubble fraction");
  }
  absl::StatusOr<std::string> json = sim::TruthJson(config, truth);
  fuzz::RequireOk(json.status(), "writing truth.json");
  static simdjson::dom::parser* parser = new simdjson::dom::parser();
  const simdjson::padded_string padded(*json);
  if (parser->parse(padded).error() != simdjson::SUCCESS) fuzz::Fail("truth.json is not JSON");
}

// Everything of a rank that a file carries, names resolved, in one comparable order. The reader
// keeps each ProfilerStep#N range as a step and also as an annotation, the simulator as a step
// only, so step annotations are left out.
using Row = std::tuple<int, int64_t, int64_t, int64_t, TimeNs, TimeNs, int64_t, std::string>;

std::vector<Row> Contents(const Rank& rank) {
  std::vector<Row> rows;
  for (const Timeline& timeline : rank.timelines) {
    for (const Interval& interval : timeline.intervals) {
      rows.emplace_back(static_cast<int>(timeline.kind), timeline.device, timeline.id,
                        static_cast<int>(interval.kind), interval.start, interval.end,
                        interval.correlation, std::string(rank.name(interval.name)));
    }
  }
  for (const Annotation& annotation : rank.annotations) {
    std::string name(rank.name(annotation.name));
    if (name.starts_with("ProfilerStep#")) continue;
    rows.emplace_back(-1, annotation.device, annotation.thread_or_stream,
                      static_cast<int>(annotation.scope), annotation.start, annotation.end, 0,
                      std::move(name));
  }
  for (const ProfilerStep& step : rank.steps) {
    rows.emplace_back(-2, 0, 0, 0, step.start, step.end, step.number, "");
  }
  for (const MemorySample& sample : rank.memory) {
    rows.emplace_back(-3, sample.device, sample.allocated_bytes, 0, sample.time, sample.time,
                      sample.reserved_bytes, "");
  }
  std::sort(rows.begin(), rows.end());
  return rows;
}

Rank ReadBack(const Rank& simulated, const KinetoWriteOptions& options) {
  static KinetoReader* reader = new KinetoReader();
  const std::string name = absl::StrCat("rank", simulated.rank, ".pt.trace.json");
  absl::StatusOr<Rank> read =
      fuzz::ReadRank(*reader, name, KinetoJson(simulated, options), int64_t{1} << 30);
  fuzz::RequireOk(read.status(), "reading a written rank back");
  if (read->stats.HasAtLeast(Severity::kWarning)) fuzz::Fail(name + " read back with warnings");
  if (Contents(*read) != Contents(simulated)) fuzz::Fail(name + " read back differs");
  read->rank = simulated.rank;  // the bare array form has no distributedInfo
  return *std::move(read);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<sim::SimulateSettings> settings = sim::ParseSimulateOptions(ParseLines(text));
  if (!settings.ok() || Ops(settings->config) > kMaxOps) return 0;

  absl::StatusOr<sim::Simulation> simulation = sim::Simulate(settings->config);
  if (!simulation.ok()) {
    if (!absl::IsInvalidArgument(simulation.status())) {
      fuzz::Fail(absl::StrCat("simulate: internal error: ", simulation.status().ToString()));
    }
    return 0;
  }
  CheckTruth(settings->config, simulation->truth);
  if (simulation->trace.ranks.size() !=
      static_cast<size_t>(settings->config.stages) *
          static_cast<size_t>(settings->config.parallel.replicas())) {
    fuzz::Fail("a simulated job without one rank per stage and replica");
  }
  Trace read;
  for (const Rank& rank : simulation->trace.ranks) {
    fuzz::CheckRank(rank);
    read.ranks.push_back(ReadBack(rank, settings->write.kineto));
  }
  fuzz::RequireOk(fuzz::AnalyzeAndReport(read, {}), "analysing a simulated job");
  return 0;
}
