#include "whatif/whatif.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "analysis/memory_peak.h"
#include "pipeline/sim_schedule.h"
#include "simulator/engine.h"
#include "simulator/truth.h"

namespace bubblescope::whatif {
namespace {

// The engine is linear in p·m·v (about ten nodes of ~100 bytes per microbatch chunk and stage),
// so this bounds one prediction.
constexpr int64_t kMaxSimulatedOps = int64_t{1} << 17;  // p·m·v: tens of MB of engine state

// Per-stage time per microbatch over all of a rank's chunks, ns.
struct StageTimes {
  double forward = 0.0;
  double backward = 0.0;
  double weight_grad = 0.0;
};

TimeNs AtLeastOneNs(double ns) { return std::max<TimeNs>(1, std::llround(ns)); }

// The measured job as simulator input: everything but the shape-dependent fields.
struct Model {
  std::vector<StageTimes> times;      // by stage
  std::vector<int32_t> stage_ranks;   // by stage
  std::vector<sim::LinkOverride> links;  // on stage indices
  sim::Link default_link;
  bool separate_weight_grad = false;  // the measured schedule runs W apart from B
  // Memory by stage, -1 when unknown.
  std::vector<int64_t> floor_bytes;
  std::vector<int64_t> peak_bytes;
  std::vector<int64_t> headroom_bytes;  // device capacity - reserved peak
  std::vector<double> activation_per_microbatch;  // all chunks together
};

absl::StatusOr<Model> ModelOf(const Input& input) {
  const schedule_inference::Result& shape = *input.shape;
  if (shape.stages.size() != static_cast<size_t>(shape.p) || shape.p < 1) {
    return absl::FailedPreconditionError(
        "per-stage forward/backward times are unknown, so the job cannot be modelled");
  }
  if (!shape.stage_counts_fit) {
    return absl::FailedPreconditionError(
        "per-stage op counts do not fit the schedule, so the per-stage times are not reliable");
  }
  Model model;
  const double chunks = static_cast<double>(shape.v);
  std::map<int32_t, int32_t> stage_of_rank;
  for (const schedule_inference::StageFigures& stage : shape.stages) {
    model.times.push_back({stage.forward.mean_ns * chunks, stage.backward.mean_ns * chunks,
                           stage.weight_grad.mean_ns * chunks});
    model.separate_weight_grad |= stage.weight_grad.count > 0;
    stage_of_rank[stage.rank] = static_cast<int32_t>(model.stage_ranks.size());
    model.stage_ranks.push_back(stage.rank);
  }
  std::vector<TimeNs> medians;
  for (const link_stats::Link& link : *input.links) {
    const auto src = stage_of_rank.find(link.src);
    const auto dst = stage_of_rank.find(link.dst);
    if (src == stage_of_rank.end() || dst == stage_of_rank.end() || link.transfers == 0) continue;
    model.links.push_back(sim::LinkOverride{
        src->second, dst->second,
        sim::Link{.gbps = std::numeric_limits<double>::infinity(),
                  .latency_ns = link.transfer_median_ns}});
    medians.push_back(link.transfer_median_ns);
  }
  // Neighbour links no transfer measured (an interleaved candidate's wrap-around from a 1F1B
  // measurement) cost the median measured transfer. The default link carries only the
  // iteration-end all-reduce, a few bytes: free.
  model.default_link = sim::Link{.gbps = std::numeric_limits<double>::infinity(), .latency_ns = 0};
  if (!medians.empty()) {
    std::nth_element(medians.begin(), medians.begin() + medians.size() / 2, medians.end());
    const sim::Link median{.gbps = std::numeric_limits<double>::infinity(),
                           .latency_ns = medians[medians.size() / 2]};
    const int32_t p = static_cast<int32_t>(model.stage_ranks.size());
    const auto measured = [&](int32_t src, int32_t dst) {
      return std::any_of(model.links.begin(), model.links.end(), [&](const sim::LinkOverride& l) {
        return l.src_rank == src && l.dst_rank == dst;
      });
    };
    for (int32_t s = 0; s < p; ++s) {
      for (int32_t next : {(s + 1) % p, (s + p - 1) % p}) {
        if (next != s && !measured(s, next)) {
          model.links.push_back(sim::LinkOverride{s, next, median});
        }
      }
    }
  }
  for (int32_t rank : model.stage_ranks) {
    int64_t floor = -1;
    int64_t peak = -1;
    int64_t headroom = -1;
    for (const Rank& traced : input.trace->ranks) {
      if (traced.rank != rank) continue;
      const MemoryPeak memory = PeakMemory(traced);
      floor = memory.lowest_allocated_bytes;
      peak = memory.allocated_bytes;
      if (!traced.devices.empty() && traced.devices.front().total_memory_bytes > 0 &&
          memory.reserved_bytes >= 0) {
        headroom = traced.devices.front().total_memory_bytes - memory.reserved_bytes;
      }
      break;
    }
    model.floor_bytes.push_back(floor);
    model.peak_bytes.push_back(peak);
    model.headroom_bytes.push_back(headroom);
  }
  return model;
}

// The simulator config of `candidate` on the model, with `stash` bytes per in-flight microbatch
// chunk (1 to count them).
absl::StatusOr<sim::Config> ConfigOf(const Model& model, const schedule_inference::Result& shape,
                                     const Candidate& candidate, int64_t stash) {
  sim::Config config = pipeline::ComputeOnlyConfig(shape, candidate.schedule);
  config.microbatches = candidate.microbatches;
  config.virtual_stages = candidate.virtual_stages;
  config.iteration_barrier = true;
  config.activation_stash_bytes = stash;
  const double scale = candidate.same_global_batch
                           ? static_cast<double>(shape.m) / static_cast<double>(candidate.microbatches)
                           : 1.0;
  config.link = model.default_link;
  config.link_overrides = model.links;
  // Activations shrink with the microbatch; their transfers are taken as bandwidth-bound.
  for (sim::LinkOverride& link : config.link_overrides) {
    link.link.latency_ns = AtLeastOneNs(static_cast<double>(link.link.latency_ns) * scale);
  }
  const bool zero_bubble = candidate.schedule == sim::Schedule::kZeroBubbleH1;
  for (const StageTimes& times : model.times) {
    double backward = times.backward;
    double weight_grad = times.weight_grad;
    if (zero_bubble && !model.separate_weight_grad) {
      weight_grad = backward / 2.0;
      backward -= weight_grad;
    } else if (!zero_bubble) {
      backward += weight_grad;
      weight_grad = 0.0;
    }
    const bool training = candidate.schedule != sim::Schedule::kForwardOnly;
    config.costs.push_back(sim::StageCost{
        .forward = AtLeastOneNs(times.forward * scale),
        .backward = training ? AtLeastOneNs(backward * scale) : 0,
        .weight_grad = zero_bubble ? AtLeastOneNs(weight_grad * scale) : 0});
  }
  if (int64_t{config.stages} * config.microbatches * config.virtual_stages > kMaxSimulatedOps) {
    return absl::InvalidArgumentError(
        absl::StrCat("p x m x v over ", kMaxSimulatedOps, " is too large to simulate"));
  }
  if (absl::Status status = sim::ValidateConfig(config); !status.ok()) return status;
  return config;
}

// Peak in-flight microbatch chunks per stage under `config` (its stash must be 1).
absl::StatusOr<std::vector<int64_t>> InFlight(const sim::Config& config) {
  absl::StatusOr<sim::Records> records = sim::RunSchedule(config);
  if (!records.ok()) return records.status();
  const sim::Truth truth = sim::ComputeTruth(config, *records);
  std::vector<int64_t> counts(static_cast<size_t>(config.stages), 0);
  for (const sim::RankMemoryTruth& memory : truth.memory) {
    counts[static_cast<size_t>(memory.rank)] = memory.peak_allocated_bytes;
  }
  return counts;
}

Prediction Predict(const Model& model, const schedule_inference::Result& shape,
                   const Candidate& candidate, const std::vector<int64_t>& measured_in_flight) {
  Prediction prediction;
  prediction.candidate = candidate;
  absl::StatusOr<sim::Config> config = ConfigOf(model, shape, candidate, 1);
  if (!config.ok()) {
    prediction.problem = std::string(config.status().message());
    return prediction;
  }
  absl::StatusOr<sim::Records> records = sim::RunSchedule(*config);
  if (!records.ok()) {
    prediction.problem = std::string(records.status().message());
    return prediction;
  }
  const sim::Truth truth = sim::ComputeTruth(*config, *records);
  prediction.iteration_ns = truth.latency_max_ns;
  prediction.bubble_fraction = truth.bubble_fraction;

  // Memory: floor + activation per chunk x in-flight chunks (the truth counts them at 1 byte).
  const double scale = candidate.same_global_batch
                           ? static_cast<double>(shape.m) / static_cast<double>(candidate.microbatches)
                           : 1.0;
  bool known = !measured_in_flight.empty();
  bool fits = true;
  bool capacity_known = true;
  std::vector<StageMemory> memory;
  for (size_t s = 0; s < model.stage_ranks.size() && known; ++s) {
    if (model.floor_bytes[s] < 0 || measured_in_flight[s] <= 0) {
      known = false;
      break;
    }
    const double per_microbatch =
        static_cast<double>(model.peak_bytes[s] - model.floor_bytes[s]) /
        static_cast<double>(measured_in_flight[s]) * static_cast<double>(shape.v);
    const double per_chunk = per_microbatch * scale / static_cast<double>(candidate.virtual_stages);
    const int64_t in_flight = truth.memory[s].peak_allocated_bytes;
    const auto peak = static_cast<int64_t>(
        std::llround(static_cast<double>(model.floor_bytes[s]) + per_chunk * static_cast<double>(in_flight)));
    memory.push_back(StageMemory{static_cast<int32_t>(s), model.stage_ranks[s], peak});
    if (model.headroom_bytes[s] < 0) {
      capacity_known = false;
    } else {
      fits &= peak - model.peak_bytes[s] <= model.headroom_bytes[s];
    }
  }
  if (known) {
    prediction.memory = std::move(memory);
    if (capacity_known) prediction.fits_memory = fits;
  }
  return prediction;
}

}  // namespace

std::string CandidateLabel(const Candidate& candidate) {
  return absl::StrCat(std::string(sim::ScheduleName(candidate.schedule)), " m=",
                      candidate.microbatches, " v=", candidate.virtual_stages,
                      candidate.same_global_batch ? " (same global batch)" : "");
}

std::vector<Candidate> DefaultCandidates(const schedule_inference::Result& shape) {
  const sim::Schedule schedule = pipeline::SimScheduleOf(shape.family);
  std::vector<Candidate> candidates;
  for (int32_t factor : {2, 4}) {
    candidates.push_back(Candidate{schedule, shape.m * factor, shape.v, false});
  }
  const bool training = schedule != sim::Schedule::kForwardOnly;
  if (schedule == sim::Schedule::k1F1B && shape.p > 1 && shape.m % shape.p == 0) {
    candidates.push_back(Candidate{sim::Schedule::kInterleaved1F1B, shape.m, 2, false});
  }
  if (schedule == sim::Schedule::kInterleaved1F1B) {
    candidates.push_back(Candidate{sim::Schedule::k1F1B, shape.m, 1, false});
  }
  if (training && shape.v == 1 && schedule != sim::Schedule::kZeroBubbleH1) {
    candidates.push_back(Candidate{sim::Schedule::kZeroBubbleH1, shape.m, 1, false});
  }
  return candidates;
}

absl::StatusOr<Result> Analyze(const Input& input, const std::vector<Candidate>& candidates) {
  if (input.shape == nullptr) {
    return absl::FailedPreconditionError("the pipeline's shape is unknown");
  }
  const schedule_inference::Result& shape = *input.shape;
  absl::StatusOr<Model> model = ModelOf(input);
  if (!model.ok()) return model.status();
  Result result;
  result.measured_iteration_ns = input.bubble->latency.p50;
  result.measured_bubble_fraction = input.bubble->bubble_fraction;
  const Candidate measured{pipeline::SimScheduleOf(shape.family), shape.m, shape.v, false};
  // The measured schedule's in-flight chunks per stage: what the measured peaks were made of.
  std::vector<int64_t> in_flight;
  if (absl::StatusOr<sim::Config> config = ConfigOf(*model, shape, measured, 1); config.ok()) {
    if (absl::StatusOr<std::vector<int64_t>> counts = InFlight(*config); counts.ok()) {
      in_flight = *std::move(counts);
    }
  }
  if (std::any_of(model->peak_bytes.begin(), model->peak_bytes.end(),
                  [](int64_t peak) { return peak < 0; })) {
    in_flight.clear();
    result.notes.push_back("no memory samples on some stage: memory per candidate unknown");
  }
  result.baseline = Predict(*model, shape, measured, in_flight);
  if (!result.baseline.problem.empty()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the measured configuration cannot be simulated: ", result.baseline.problem));
  }
  if (shape.family == schedule_inference::ScheduleFamily::kZeroBubble && shape.v > 1) {
    result.notes.push_back(
        "the measured zero-bubble schedule has several chunks per rank; it is modelled as "
        "ZB-H1, which the simulator implements");
  }
  const std::vector<Candidate> chosen = candidates.empty() ? DefaultCandidates(shape) : candidates;
  for (const Candidate& candidate : chosen) {
    if (candidate.schedule == sim::Schedule::kZeroBubbleH1 && !model->separate_weight_grad) {
      result.notes.push_back(
          "zb-h1 candidates split each measured backward into input and weight gradients of "
          "half its time each (the trace runs them together)");
      break;
    }
  }
  for (const Candidate& candidate : chosen) {
    result.candidates.push_back(Predict(*model, shape, candidate, in_flight));
  }
  return result;
}

}  // namespace bubblescope::whatif
