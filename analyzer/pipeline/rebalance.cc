#include "pipeline/rebalance.h"

#include <cmath>
#include <cstdlib>
#include <limits>
#include <map>
#include <optional>
#include <tuple>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "pipeline/layer_split.h"
#include "pipeline/sim_schedule.h"
#include "schedule_engine/config.h"
#include "schedule_engine/engine.h"
#include "schedule_engine/truth.h"

namespace bubblescope::rebalance {
namespace {

// A stage's per-microbatch times over all of its chunks, in ns (fractional until simulated).
struct StageTimes {
  double forward = 0.0;
  double backward = 0.0;
  double weight_grad = 0.0;
};

sim::StageCost ToCost(const StageTimes& times) {
  return {RoundToNs(times.forward), RoundToNs(times.backward), RoundToNs(times.weight_grad)};
}

absl::StatusOr<Prediction> Predict(sim::Config config, const std::vector<StageTimes>& times) {
  config.costs.clear();
  for (const StageTimes& stage : times) config.costs.push_back(ToCost(stage));
  BUBBLESCOPE_ASSIGN_OR_RETURN(sim::Records records, sim::RunSchedule(config));
  const sim::Truth truth = sim::ComputeTruth(config, records);
  return Prediction{truth.latency_max_ns, truth.bubble_fraction};
}

// Stage times after `from` passes k layers toward `to` (pipeline/layer_split.h); nullopt when a
// stage in between has fewer than k layers to hand on.
std::optional<std::vector<StageTimes>> ShiftLayers(const std::vector<StageTimes>& times,
                                                   const std::vector<int32_t>& layers, int32_t from,
                                                   int32_t to, int32_t k) {
  const int32_t step = to > from ? 1 : -1;
  for (int32_t s = from + step; s != to; s += step) {
    if (layers[static_cast<size_t>(s)] < k) return std::nullopt;
  }
  const std::vector<int32_t> after = pipeline::AfterMove(layers, from, to, k);
  std::vector<double> forward, backward, weight_grad;
  for (const StageTimes& stage : times) {
    forward.push_back(stage.forward);
    backward.push_back(stage.backward);
    weight_grad.push_back(stage.weight_grad);
  }
  forward = pipeline::Resplit(forward, layers, after);
  backward = pipeline::Resplit(backward, layers, after);
  weight_grad = pipeline::Resplit(weight_grad, layers, after);
  std::vector<StageTimes> moved;
  for (size_t s = 0; s < times.size(); ++s) {
    moved.push_back({forward[s], backward[s], weight_grad[s]});
  }
  return moved;
}

// The shape's family as a simulator schedule, and its per-stage times per microbatch over all
// of a rank's chunks.
absl::StatusOr<std::pair<sim::Schedule, std::vector<StageTimes>>> SimulationInputs(
    const schedule_inference::Result& shape) {
  if (shape.stages.size() != static_cast<size_t>(shape.p)) {
    return absl::FailedPreconditionError(
        "per-stage forward/backward times are unknown, so nothing can be simulated");
  }
  if (!shape.stage_counts_fit) {
    return absl::FailedPreconditionError(
        "per-stage op counts do not fit the schedule, so the per-stage times are not reliable");
  }
  const sim::Schedule schedule = pipeline::SimScheduleOf(shape.family);
  const double chunks = static_cast<double>(shape.v);
  std::vector<StageTimes> times;
  for (const schedule_inference::StageFigures& stage : shape.stages) {
    times.push_back({stage.forward.mean_ns * chunks, stage.backward.mean_ns * chunks,
                     stage.weight_grad.mean_ns * chunks});
  }
  return std::make_pair(schedule, std::move(times));
}

// The (from, to) stage pairs whose moves are tried.
std::vector<std::pair<int32_t, int32_t>> CandidatePairs(const schedule_inference::Result& shape,
                                                        const Options& options) {
  std::vector<std::pair<int32_t, int32_t>> pairs;
  const bool all_pairs = shape.p <= options.all_pairs_max_stages || shape.slowest_stage < 0;
  for (int32_t from = 0; from < shape.p; ++from) {
    if (!all_pairs && from != shape.slowest_stage) continue;
    for (int32_t to = 0; to < shape.p; ++to) {
      if (to != from) pairs.emplace_back(from, to);
    }
  }
  return pairs;
}

// The most layers `from` can pass on towards `to`: all but one of its own, no more than any
// stage in between holds (each hands k of its own layers on), and no more than leaves `to` with
// a count an int32 holds (the flag allows two billion per stage).
int32_t MaxLayersToMove(const std::vector<int32_t>& layers, int32_t from, int32_t to) {
  int32_t k_max = std::min(layers[static_cast<size_t>(from)] - 1,
                           std::numeric_limits<int32_t>::max() - layers[static_cast<size_t>(to)]);
  const int32_t step = to > from ? 1 : -1;
  for (int32_t s = from + step; s != to; s += step) {
    k_max = std::min(k_max, layers[static_cast<size_t>(s)]);
  }
  return k_max;
}

absl::Status CheckOptions(const schedule_inference::Result& shape, const Options& options) {
  if (static_cast<int32_t>(options.layers_per_stage.size()) != shape.p) {
    return absl::InvalidArgumentError(
        absl::StrCat("layers per stage has ", options.layers_per_stage.size(),
                     " entries but the pipeline has ", shape.p, " stages"));
  }
  for (size_t s = 0; s < options.layers_per_stage.size(); ++s) {
    if (options.layers_per_stage[s] < 1) {
      return absl::InvalidArgumentError(absl::StrCat("layers per stage: stage ", s, " has ",
                                                     options.layers_per_stage[s],
                                                     " layers; every stage needs at least 1"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Result> Analyze(const schedule_inference::Result& shape, const Options& options) {
  BUBBLESCOPE_RETURN_IF_ERROR(CheckOptions(shape, options));
  // The schedule and the stage times it runs.
  BUBBLESCOPE_ASSIGN_OR_RETURN(const auto inputs, SimulationInputs(shape));
  const sim::Config config = pipeline::ComputeOnlyConfig(shape, inputs.first);
  const std::vector<StageTimes>& times = inputs.second;

  Result result;
  result.layers_before = options.layers_per_stage;
  result.min_gain = options.min_gain;
  absl::StatusOr<Prediction> before = Predict(config, times);
  if (!before.ok()) {
    return absl::FailedPreconditionError(
        absl::StrCat("the measured stage times cannot be simulated: ", before.status().message()));
  }
  result.before = *before;

  // Best move so far, ordered by (iteration, stage distance, layers, target stage).
  std::optional<std::tuple<TimeNs, int32_t, int32_t, int32_t>> best_key;
  absl::Status failed = absl::OkStatus();
  for (const std::pair<int32_t, int32_t>& pair : CandidatePairs(shape, options)) {
    // Named copies, not a structured binding: the lambda below captures them, which clang
    // before 16 cannot do with bindings (the fuzz build uses clang).
    const int32_t from = pair.first;
    const int32_t to = pair.second;
    const int32_t k_max = MaxLayersToMove(options.layers_per_stage, from, to);
    // The predicted iteration after moving k layers, each k simulated once.
    std::map<int32_t, TimeNs> predicted;
    auto iteration_after = [&](int32_t k) -> TimeNs {
      if (auto known = predicted.find(k); known != predicted.end()) return known->second;
      TimeNs iteration = std::numeric_limits<TimeNs>::max();
      const std::optional<std::vector<StageTimes>> moved =
          ShiftLayers(times, options.layers_per_stage, from, to, k);
      absl::StatusOr<Prediction> after =
          moved.has_value() ? Predict(config, *moved) : absl::InternalError("no move");
      if (after.ok()) {
        ++result.moves_simulated;
        iteration = after->iteration_ns;
        const auto key = std::make_tuple(after->iteration_ns, std::abs(to - from), k, to);
        if (!best_key.has_value() || key < *best_key) {
          best_key = key;
          result.from_stage = from;
          result.to_stage = to;
          result.layers = k;
          result.after = *after;
        }
      } else if (!absl::IsInvalidArgument(after.status()) && failed.ok()) {
        // A move the simulator cannot represent (a stage left with under a nanosecond per op,
        // as when one layer of billions moves) is no candidate; anything else is a failure.
        failed = after.status();
      }
      predicted[k] = iteration;
      return iteration;
    };
    int32_t low = 1;
    int32_t high = k_max;
    while (high - low + 1 > options.exhaustive_moves && high - low >= 3) {
      const int32_t third = (high - low) / 3;
      if (iteration_after(low + third) <= iteration_after(high - third)) {
        high = high - third;
      } else {
        low = low + third;
      }
    }
    for (int32_t k = low; k <= high; ++k) iteration_after(k);
    BUBBLESCOPE_RETURN_IF_ERROR(failed);
  }

  const double gain = static_cast<double>(result.before.iteration_ns - result.after.iteration_ns);
  result.suggested = best_key.has_value() &&
                     gain >= options.min_gain * static_cast<double>(result.before.iteration_ns);
  if (!result.suggested) {
    result.from_stage = result.to_stage = -1;
    result.layers = 0;
    result.after = Prediction{};
    return result;
  }
  result.from_rank = shape.stages[static_cast<size_t>(result.from_stage)].rank;
  result.to_rank = shape.stages[static_cast<size_t>(result.to_stage)].rank;
  result.layers_after =
      pipeline::AfterMove(result.layers_before, result.from_stage, result.to_stage, result.layers);
  return result;
}

}  // namespace bubblescope::rebalance
