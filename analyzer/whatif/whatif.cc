#include "whatif/whatif.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status_macros.h"
#include "pipeline/layer_split.h"
#include "pipeline/sim_schedule.h"
#include "schedule_engine/engine.h"
#include "schedule_engine/truth.h"

namespace bubblescope::whatif {
namespace {

// The engine is linear in p·m·v (about ten nodes of ~100 bytes per microbatch chunk and stage),
// so this bounds one prediction.
constexpr int64_t kMaxSimulatedOps = int64_t{1} << 17;  // p·m·v: tens of MB of engine state

TimeNs AtLeastOneNs(double ns) { return std::max<TimeNs>(1, std::llround(ns)); }

sim::Link FixedCost(TimeNs ns) {
  return sim::Link{.gbps = std::numeric_limits<double>::infinity(), .latency_ns = ns};
}

// Per-stage values after the candidate's layer move (as measured without one).
std::vector<double> AfterLayers(const Model& model, const Candidate& candidate,
                                double StageModel::*field) {
  std::vector<double> values;
  std::vector<int32_t> before;
  for (const StageModel& stage : model.stages) {
    values.push_back(stage.*field);
    before.push_back(stage.layers);
  }
  if (candidate.layers_per_stage.empty()) return values;
  return pipeline::Resplit(values, before, candidate.layers_per_stage);
}

absl::Status CheckLayers(const Model& model, const Candidate& candidate) {
  if (candidate.layers_per_stage.empty()) return absl::OkStatus();
  std::vector<int32_t> before;
  for (const StageModel& stage : model.stages) {
    if (stage.layers < 1) {
      return absl::InvalidArgumentError(
          "the measured layers per stage are unknown (--layers-per-stage or bubblescope:layers=N "
          "annotations give them)");
    }
    before.push_back(stage.layers);
  }
  return pipeline::CheckResplit(before, candidate.layers_per_stage);
}

// Whether a candidate's transfers are batched as the measured job's were. The simulator batches
// as Megatron-LM's 1F1B and interleaved schedules do (a send with the receive the next op needs);
// the other schedules have no such batching in Megatron, and a runtime that runs them (torch's
// pipelining) posts each action's transfers apart, so they keep one kernel per transfer.
bool BatchesLikeMeasured(const Model& model, sim::Schedule schedule) {
  return model.batched_p2p &&
         (schedule == sim::Schedule::k1F1B || schedule == sim::Schedule::kInterleaved1F1B);
}

// The simulator config of `candidate` on the model, with `stash` bytes per in-flight microbatch
// chunk (1 to count them).
absl::StatusOr<sim::Config> ConfigOf(const Model& model, const Candidate& candidate,
                                     int64_t stash) {
  BUBBLESCOPE_RETURN_IF_ERROR(CheckLayers(model, candidate));
  sim::Config config = pipeline::ComputeOnlyConfig(model.p, candidate.microbatches,
                                                   candidate.virtual_stages, candidate.schedule);
  config.iteration_barrier = true;
  config.p2p = BatchesLikeMeasured(model, candidate.schedule) ? sim::P2pStyle::kBatched
                                                              : sim::P2pStyle::kPerOp;
  config.activation_stash_bytes = stash;
  const double scale = candidate.same_global_batch ? static_cast<double>(model.m) /
                                                         static_cast<double>(candidate.microbatches)
                                                   : 1.0;
  // The default link carries only the iteration-end all-reduce, a few bytes: free. Activations
  // shrink with the microbatch; their transfers are taken as bandwidth-bound.
  config.link = FixedCost(0);
  std::vector<TimeNs> medians;
  for (const LinkCost& link : model.links) {
    config.link_overrides.push_back(
        sim::LinkOverride{link.src_stage, link.dst_stage,
                          FixedCost(AtLeastOneNs(static_cast<double>(link.transfer_ns) * scale))});
    medians.push_back(link.transfer_ns);
  }
  // Neighbour links no transfer measured (an interleaved candidate's wrap-around from a 1F1B
  // measurement) cost the median measured transfer.
  if (!medians.empty()) {
    std::nth_element(medians.begin(), medians.begin() + medians.size() / 2, medians.end());
    const sim::Link median =
        FixedCost(AtLeastOneNs(static_cast<double>(medians[medians.size() / 2]) * scale));
    const auto measured = [&model](int32_t src, int32_t dst) {
      return std::any_of(model.links.begin(), model.links.end(), [&](const LinkCost& l) {
        return l.src_stage == src && l.dst_stage == dst;
      });
    };
    for (int32_t s = 0; s < model.p; ++s) {
      const int32_t after = (s + 1) % model.p;
      const int32_t before = (s + model.p - 1) % model.p;
      // With p = 2 both neighbours are one stage: one link to it.
      for (int32_t next : {after, before}) {
        if (next == s || (next == before && before == after) || measured(s, next)) continue;
        config.link_overrides.push_back(sim::LinkOverride{s, next, median});
      }
    }
  }
  const bool zero_bubble = candidate.schedule == sim::Schedule::kZeroBubbleH1;
  const bool training = candidate.schedule != sim::Schedule::kForwardOnly;
  const std::vector<double> forward = AfterLayers(model, candidate, &StageModel::forward_ns);
  const std::vector<double> backward_all = AfterLayers(model, candidate, &StageModel::backward_ns);
  const std::vector<double> weight_all = AfterLayers(model, candidate, &StageModel::weight_grad_ns);
  for (size_t s = 0; s < forward.size(); ++s) {
    double backward = backward_all[s];
    double weight_grad = weight_all[s];
    if (zero_bubble && !model.separate_weight_grad) {
      weight_grad = backward / 2.0;
      backward -= weight_grad;
    } else if (!zero_bubble) {
      backward += weight_grad;
      weight_grad = 0.0;
    }
    config.costs.push_back(
        sim::StageCost{.forward = AtLeastOneNs(forward[s] * scale),
                       .backward = training ? AtLeastOneNs(backward * scale) : 0,
                       .weight_grad = zero_bubble ? AtLeastOneNs(weight_grad * scale) : 0});
  }
  if (int64_t{config.stages} * config.microbatches * config.virtual_stages > kMaxSimulatedOps) {
    return absl::InvalidArgumentError(
        absl::StrCat("p x m x v over ", kMaxSimulatedOps, " is too large to simulate"));
  }
  BUBBLESCOPE_RETURN_IF_ERROR(sim::ValidateConfig(config));
  return config;
}

// Peak in-flight microbatch chunks per stage under `config` (its stash must be 1).
absl::StatusOr<std::vector<int64_t>> InFlight(const sim::Config& config) {
  BUBBLESCOPE_ASSIGN_OR_RETURN(sim::Records records, sim::RunSchedule(config));
  const sim::Truth truth = sim::ComputeTruth(config, records);
  std::vector<int64_t> counts(static_cast<size_t>(config.stages), 0);
  for (const sim::RankMemoryTruth& memory : truth.memory) {
    counts[static_cast<size_t>(memory.rank)] = memory.peak_allocated_bytes;
  }
  return counts;
}

Prediction Predict(const Model& model, const Candidate& candidate,
                   const std::vector<int64_t>& measured_in_flight) {
  Prediction prediction;
  prediction.candidate = candidate;
  absl::StatusOr<sim::Config> config = ConfigOf(model, candidate, 1);
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
  if (measured_in_flight.empty()) return prediction;
  std::vector<double> floors;
  std::vector<double> activations;  // per microbatch, all chunks together
  for (size_t s = 0; s < model.stages.size(); ++s) {
    const StageModel& stage = model.stages[s];
    if (stage.memory_floor_bytes < 0 || stage.memory_peak_bytes < 0 || measured_in_flight[s] <= 0) {
      return prediction;
    }
    floors.push_back(static_cast<double>(stage.memory_floor_bytes));
    // The measured in-flight count is of the measured configuration's chunks.
    activations.push_back(static_cast<double>(stage.memory_peak_bytes - stage.memory_floor_bytes) /
                          static_cast<double>(measured_in_flight[s]) *
                          static_cast<double>(AsMeasured(model).virtual_stages));
  }
  if (!candidate.layers_per_stage.empty()) {
    std::vector<int32_t> before;
    for (const StageModel& stage : model.stages) before.push_back(stage.layers);
    floors = pipeline::Resplit(floors, before, candidate.layers_per_stage);
    activations = pipeline::Resplit(activations, before, candidate.layers_per_stage);
  }
  const double scale = candidate.same_global_batch ? static_cast<double>(model.m) /
                                                         static_cast<double>(candidate.microbatches)
                                                   : 1.0;
  bool fits = true;
  bool capacity_known = true;
  for (size_t s = 0; s < model.stages.size(); ++s) {
    const double per_chunk = activations[s] * scale / static_cast<double>(candidate.virtual_stages);
    const int64_t in_flight = truth.memory[s].peak_allocated_bytes;
    const double predicted = floors[s] + per_chunk * static_cast<double>(in_flight);
    if (predicted > static_cast<double>(kMaxMemoryBytes)) {
      // Past the most a memory figure may hold (trace.h): written, it would be refused by every
      // reader of a report. No device is that large (capacities are kept within the bound), so
      // the candidate cannot fit; its figures are left unknown rather than clamped to a lie.
      prediction.memory.clear();
      prediction.memory_past_bound = true;
      prediction.fits_memory = false;
      return prediction;
    }
    const int64_t peak = SaturatingRound(predicted);
    prediction.memory.push_back(StageMemory{static_cast<int32_t>(s), model.stages[s].rank, peak});
    if (model.stages[s].memory_headroom_bytes < 0) {
      capacity_known = false;
    } else {
      fits &= SaturatingAdd(peak, -model.stages[s].memory_peak_bytes) <=
              model.stages[s].memory_headroom_bytes;
    }
  }
  if (capacity_known) prediction.fits_memory = fits;
  return prediction;
}

}  // namespace

std::string CandidateLabel(const Candidate& candidate) {
  return absl::StrCat(
      std::string(sim::ScheduleName(candidate.schedule)), " m=", candidate.microbatches,
      " v=", candidate.virtual_stages, candidate.same_global_batch ? " (same global batch)" : "",
      candidate.layers_per_stage.empty()
          ? ""
          : absl::StrCat(" layers ", absl::StrJoin(candidate.layers_per_stage, ",")));
}

Candidate AsMeasured(const Model& model) {
  // ZB-H1 runs one chunk per rank: a multi-chunk zero-bubble job is modelled with each rank's
  // chunks as one (its times are per microbatch over all chunks already).
  const int32_t v = model.schedule == sim::Schedule::kZeroBubbleH1 ? 1 : model.v;
  return Candidate{model.schedule, model.m, v, false, {}};
}

std::vector<Candidate> DefaultCandidates(const Model& model,
                                         const std::vector<int32_t>& rebalance) {
  const sim::Schedule schedule = model.schedule;
  std::vector<Candidate> candidates;
  for (int32_t factor : {2, 4}) {
    candidates.push_back(
        Candidate{schedule, model.m * factor, AsMeasured(model).virtual_stages, false, {}});
  }
  const bool training = schedule != sim::Schedule::kForwardOnly;
  if (schedule == sim::Schedule::k1F1B && model.p > 1 && model.m % model.p == 0) {
    candidates.push_back(Candidate{sim::Schedule::kInterleaved1F1B, model.m, 2, false, {}});
  }
  if (schedule == sim::Schedule::kInterleaved1F1B) {
    candidates.push_back(Candidate{sim::Schedule::k1F1B, model.m, 1, false, {}});
  }
  // Looped GPipe (torch's ScheduleLoopedBFS) keeps every microbatch's activations of every chunk
  // until the backwards start; interleaved 1F1B on the same chunks and placement frees them as it
  // goes, for the same ideal bubble.
  if (schedule == sim::Schedule::kGpipe && model.v > 1 && model.m % model.p == 0) {
    candidates.push_back(Candidate{sim::Schedule::kInterleaved1F1B, model.m, model.v, false, {}});
  }
  if (training && model.v == 1 && schedule != sim::Schedule::kZeroBubbleH1) {
    candidates.push_back(Candidate{sim::Schedule::kZeroBubbleH1, model.m, 1, false, {}});
  }
  if (!rebalance.empty()) {
    candidates.push_back(
        Candidate{schedule, model.m, AsMeasured(model).virtual_stages, false, rebalance});
  }
  return candidates;
}

absl::StatusOr<Result> Analyze(const Model& model, const std::vector<Candidate>& candidates) {
  if (absl::Status status = ValidateModel(model); !status.ok()) {
    return absl::FailedPreconditionError(status.message());
  }
  Result result;
  result.measured_iteration_ns = model.measured_iteration_ns;
  result.measured_bubble_fraction = model.measured_bubble_fraction;
  const Candidate measured = AsMeasured(model);
  // The measured schedule's in-flight chunks per stage: what the measured peaks were made of.
  std::vector<int64_t> in_flight;
  if (absl::StatusOr<sim::Config> config = ConfigOf(model, measured, 1); config.ok()) {
    if (absl::StatusOr<std::vector<int64_t>> counts = InFlight(*config); counts.ok()) {
      in_flight = *std::move(counts);
    }
  }
  if (std::any_of(model.stages.begin(), model.stages.end(),
                  [](const StageModel& stage) { return stage.memory_peak_bytes < 0; })) {
    in_flight.clear();
    result.notes.push_back("no memory samples on some stage: memory per candidate unknown");
  }
  result.baseline = Predict(model, measured, in_flight);
  if (!result.baseline.problem.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat("the measured configuration cannot be simulated: ", result.baseline.problem));
  }
  if (model.multi_chunk_zero_bubble) {
    result.notes.push_back(
        "the measured zero-bubble schedule has several chunks per rank; it is modelled as "
        "ZB-H1, which the simulator implements");
  }
  const std::vector<Candidate> chosen = candidates.empty() ? DefaultCandidates(model) : candidates;
  for (const Candidate& candidate : chosen) {
    if (candidate.schedule == sim::Schedule::kZeroBubbleH1 && !model.separate_weight_grad) {
      result.notes.push_back(
          "zb-h1 candidates split each measured backward into input and weight gradients of "
          "half its time each (the trace runs them together)");
      break;
    }
  }
  for (const Candidate& candidate : chosen) {
    if (model.batched_p2p && !BatchesLikeMeasured(model, candidate.schedule)) {
      result.notes.push_back(
          "the measured transfers are batched as Megatron-LM batches them in 1F1B and "
          "interleaved schedules; gpipe, zb-h1 and fwd-only candidates post one kernel per "
          "transfer");
      break;
    }
  }
  for (const Candidate& candidate : chosen) {
    result.candidates.push_back(Predict(model, candidate, in_flight));
    if (result.candidates.back().memory_past_bound) {
      result.notes.push_back(absl::StrCat(
          CandidateLabel(candidate),
          ": a predicted peak past 2^53 bytes (8 PiB, the most a memory figure holds): no "
          "memory figure, and it fits no device"));
    }
  }
  return result;
}

absl::StatusOr<Prediction> PredictAsMeasured(const Model& model) {
  if (absl::Status status = ValidateModel(model); !status.ok()) {
    return absl::FailedPreconditionError(status.message());
  }
  Prediction prediction = Predict(model, AsMeasured(model), {});
  if (!prediction.problem.empty()) return absl::FailedPreconditionError(prediction.problem);
  return prediction;
}

std::vector<Candidate> TradeoffCandidates(const Model& model) {
  const Candidate measured = AsMeasured(model);
  std::vector<std::pair<sim::Schedule, int32_t>> schedules = {
      {measured.schedule, measured.virtual_stages}};
  if (model.schedule != sim::Schedule::kForwardOnly) {
    for (const auto& other :
         std::vector<std::pair<sim::Schedule, int32_t>>{{sim::Schedule::k1F1B, 1},
                                                        {sim::Schedule::kInterleaved1F1B, 2},
                                                        {sim::Schedule::kZeroBubbleH1, 1}}) {
      if (other != schedules.front()) schedules.push_back(other);
    }
  }
  std::vector<int32_t> ms;
  if (model.m >= 2 && model.m % 2 == 0) ms.push_back(model.m / 2);
  for (int32_t factor : {1, 2, 4}) ms.push_back(model.m * factor);
  std::vector<Candidate> candidates;
  for (const auto& [schedule, v] : schedules) {
    for (int32_t m : ms) {
      Candidate candidate{.schedule = schedule,
                          .microbatches = m,
                          .virtual_stages = v,
                          .same_global_batch = m != model.m,
                          .layers_per_stage = {}};
      if (schedule == measured.schedule && v == measured.virtual_stages && m == model.m) continue;
      candidates.push_back(std::move(candidate));
    }
  }
  return candidates;
}

}  // namespace bubblescope::whatif
