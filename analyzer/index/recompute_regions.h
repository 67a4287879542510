// Where a rank recomputes activations: activation checkpointing runs a layer's forward again
// during the backward, instead of keeping its activations. The forward's ops then appear on
// the backward's CPU thread, in one of two forms (read from torch's, Megatron-LM's and
// DeepSpeed's checkpoint code and from profiles of both):
// - reentrant checkpointing (torch.utils.checkpoint with use_reentrant=True, Megatron-LM's
//   tensor_parallel.checkpoint, DeepSpeed's activation checkpointing): one autograd Function
//   whose backward node is `CheckpointFunctionBackward`. Inside it the forward runs first, then
//   an inner backward whose nodes are `autograd::engine::evaluate_function: ...` ops: the
//   recomputation is the node's time up to the first of those (all of it when there is none).
// - non-reentrant checkpointing (use_reentrant=False): the forward runs inside the first backward
//   node that needs a saved tensor, as forward operators (`aten::linear`, `aten::layer_norm`,
//   ...) nested in a backward node, which a backward formula never calls: each outermost such
//   operator is recomputation.
#pragma once

#include <string_view>
#include <vector>

#include "bubblescope/trace.h"
#include "common/interval_set.h"

namespace bubblescope::index {

// The recomputation ranges of one CPU thread, sorted and disjoint; empty on other timelines.
// One pass over the thread's intervals (sorted by start), with a stack of the open ones.
std::vector<TimeRange> RecomputeRegions(const Rank& rank, const Timeline& thread);

// True for the CPU op names RecomputeRegions decides on (backward and checkpoint nodes, the
// forward operators); the other ops of a thread only nest them (index/digest_reduction.h).
bool DecidesRecompute(std::string_view op_name);

}  // namespace bubblescope::index
