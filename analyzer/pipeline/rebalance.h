// A concrete rebalance suggestion for an imbalanced pipeline: "move k layers from stage i to
// stage j", with the iteration time and bubble the schedule simulator predicts after the move;
// and, needing no layer counts, the bubble the slowest stage causes.
//
// Model: each stage's measured per-microbatch forward, backward and weight-gradient times
// (schedule_inference::StageFigures; per chunk for interleaved jobs, so a rank's time is v
// chunks' worth) are spread evenly over its layers, and layers keep their cost when they move.
// Layers are contiguous, so moving k layers from stage i to stage j shifts them along: every
// stage from i towards j hands k of its own layers to its neighbour on that side (the stages in
// between keep their count but trade their own layers for the ones behind them). Moves are
// simulated with the measured shape (p, m, v, schedule family) on free links with no launch
// gaps, optimizer or jitter, so the prediction isolates what the layer split changes; the
// measured bubble also holds link and host time the move does not touch. The move with the
// shortest predicted iteration wins (ties: nearer stages, fewer layers, lower target stage).
//
// Which moves are simulated, so the search stays bounded whatever the layer counts: between
// every pair of stages (only from the slowest stage when p > Options::all_pairs_max_stages),
// every k of 1 .. k_max when there are at most Options::exhaustive_moves of them, else a
// ternary search over k (the predicted iteration, set by the most loaded stage, first falls and
// then rises as layers move) narrowed to that many candidates, each tried. k_max is L_i - 1 and
// at most the layers of every stage the move passes through.
//
// A suggestion is made only when it shortens the predicted iteration by at least
// Options::min_gain of the unchanged prediction.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "bubblescope/trace.h"
#include "pipeline/schedule_inference.h"

namespace bubblescope::rebalance {

// The bubble the slowest stage causes: one iteration of the measured job, then the same with the
// slowest stage's F, B and W times set to the mean over stages. Predicted through the what-if
// model of the measured job (whatif/stage_effect.h), the one model every saving is quoted from.
struct ImbalanceEffect {
  int32_t stage = -1;  // the slowest stage
  TimeNs iteration_ns = 0;
  double bubble_fraction = 0.0;
  TimeNs iteration_at_mean_ns = 0;
  double bubble_fraction_at_mean = 0.0;
};

struct Options {
  std::vector<int32_t> layers_per_stage;  // by pipeline stage (position), every entry >= 1
  double min_gain = 0.01;                 // fraction of the predicted iteration time
  int32_t exhaustive_moves = 64;          // per pair of stages: try every k up to this many
  int32_t all_pairs_max_stages = 16;      // beyond: only moves off the slowest stage
};

struct Prediction {
  TimeNs iteration_ns = 0;       // simulated window of one iteration
  double bubble_fraction = 0.0;  // simulated
};

struct Result {
  std::vector<int32_t> layers_before;  // Options::layers_per_stage
  Prediction before;                   // the current split, same simulation settings
  bool suggested = false;
  int32_t from_stage = -1;  // set when suggested
  int32_t to_stage = -1;
  int32_t from_rank = -1;
  int32_t to_rank = -1;
  int32_t layers = 0;
  std::vector<int32_t> layers_after;  // set when suggested
  Prediction after;                   // set when suggested
  int64_t moves_simulated = 0;
  double min_gain = 0.0;  // Options::min_gain the suggestion was held to
};

// InvalidArgumentError when layers_per_stage does not have one entry >= 1 per stage of `shape`;
// FailedPreconditionError when the shape has no per-stage op times.
absl::StatusOr<Result> Analyze(const schedule_inference::Result& shape, const Options& options);

}  // namespace bubblescope::rebalance
