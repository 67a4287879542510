// Peers of a pipeline's transfers when the trace records none (gloo CPU traces; NCCL kernels
// without their metadata args), from the stage order and what each transfer carries.
//
// Stage s exchanges activations forward and gradients backward with its neighbours, which are
// cyclic (s+1 and s-1 mod p): with v > 1 virtual stages placed round-robin, the last stage's
// activations go on to the first and the first stage's gradients back to the last, and with
// v = 1 the first stage has no backward traffic with the last, so the rule holds for both. What
// a transfer carries shows in the ops around it in issue order (pipeline/segment_ops.h): a send
// follows the op that produced it (a forward's activation or a backward's gradient), a receive
// precedes the op that consumes it. Forward and backward are told apart by the name hints of
// pipeline/issued_items.h; a pipeline with no backward at all needs none.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "pipeline/issued_items.h"

namespace bubblescope::peer_inference {

// The peer of each transfer item of `timeline` (the rank at `stage` of `stage_order`), in issue
// order; -1 where nothing settles it. Nullopt when the pipeline has backward traffic but this
// rank's compute carries no phase hints, so forward and backward cannot be told apart.
std::optional<std::vector<int32_t>> InferPeers(const pipeline::IssuedTimeline& timeline,
                                               size_t stage,
                                               const std::vector<int32_t>& stage_order,
                                               bool pipeline_has_backward);

}  // namespace bubblescope::peer_inference
