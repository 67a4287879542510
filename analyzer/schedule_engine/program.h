// The per-stage programs of each schedule: the ordered compute ops one stage runs per iteration,
// and the data dependencies between ops of different stages.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "schedule_engine/config.h"

namespace bubblescope::sim {

enum class OpType : uint8_t {
  kForward,     // F
  kBackward,    // B (input gradient only in zb-h1, the whole backward otherwise)
  kWeightGrad,  // W (zb-h1 only)
};

// One compute op: a forward, backward or weight-gradient pass of one microbatch through one
// chunk (model slice) of a stage. chunk is 0 except with several chunks per rank (interleaved,
// gpipe with v > 1).
struct Op {
  OpType type = OpType::kForward;
  int32_t chunk = 0;
  int32_t microbatch = 0;

  friend bool operator==(const Op&, const Op&) = default;
};

// An op placed on a stage.
struct StageOp {
  int32_t stage = 0;
  Op op;

  friend bool operator==(const StageOp&, const StageOp&) = default;
};

// 'F', 'B' or 'W'.
char OpLetter(OpType type);

// The ordered program of `stage` for one iteration (see engine.h for the schedule definitions).
// Assumes a valid config.
std::vector<Op> StageProgram(const Config& config, int32_t stage);

// The op whose output `op` on `stage` consumes, if any:
//   F(c,j) on s>0 needs F(c,j) on s-1; on stage 0 with c>0 it needs F(c-1,j) on the last stage.
//   B(c,j) on s<p-1 needs B(c,j) on s+1; on the last stage with c<v-1 it needs B(c+1,j) on
//   stage 0; the very last virtual stage's B(j) needs its own F(j) (the loss).
//   W(c,j) needs B(c,j) on the same stage.
std::optional<StageOp> InputOf(const Config& config, const StageOp& consumer);

// The op on another stage that consumes `op`'s output, if any (the inverse of InputOf restricted
// to consumers on a different stage).
std::optional<StageOp> RemoteConsumerOf(const Config& config, const StageOp& producer);

}  // namespace bubblescope::sim
