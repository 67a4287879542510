#include "index/recompute_regions.h"

#include <algorithm>
#include <array>
#include <string_view>

#include "bubblescope/op_names.h"

namespace bubblescope::index {
namespace {

// Forward operators of the layers checkpointing wraps. A backward formula calls their
// *_backward kernels or plain math (mm, mul), never these, so inside a backward node they are
// the forward run again.
constexpr std::array<std::string_view, 16> kForwardOps = {
    "aten::linear",     "aten::conv1d",
    "aten::conv2d",     "aten::conv3d",
    "aten::layer_norm", "aten::group_norm",
    "aten::batch_norm", "aten::rms_norm",
    "aten::embedding",  "aten::matmul",
    "aten::gelu",       "aten::silu",
    "aten::relu",       "aten::softmax",
    "aten::dropout",    "aten::scaled_dot_product_attention"};

bool IsForwardOp(std::string_view name) {
  return std::find(kForwardOps.begin(), kForwardOps.end(), name) != kForwardOps.end();
}

// A checkpoint Function's backward node: torch's and DeepSpeed's `CheckpointFunctionBackward`,
// Megatron-LM's too (and its `CheckpointWithoutOutputFunction`), with or without the
// evaluate_function wrapper's prefix.
bool IsCheckpointNode(std::string_view name) {
  return name.find("Checkpoint") != std::string_view::npos && name.ends_with("Backward") &&
         !name.starts_with(op_names::kAutogradNodePrefix);
}

// A backward node: the engine's wrapper, or an autograd node's own op (`AddmmBackward0`).
bool IsBackwardNode(std::string_view name) {
  return name.starts_with(op_names::kAutogradNodePrefix) || name.ends_with("Backward0") ||
         name.ends_with("Backward1") || name.ends_with("Backward");
}

struct Open {
  TimeNs end = 0;
  bool backward = false;   // a backward node, or inside one
  bool recompute = false;  // inside a recomputation already counted
};

}  // namespace

bool DecidesRecompute(std::string_view op_name) {
  return IsBackwardNode(op_name) || IsCheckpointNode(op_name) || IsForwardOp(op_name);
}

std::vector<TimeRange> RecomputeRegions(const Rank& rank, const Timeline& thread) {
  std::vector<TimeRange> regions;
  if (thread.kind != TimelineKind::kCpuThread) return regions;
  std::vector<Open> stack;
  // A reentrant checkpoint node whose recomputation has not ended yet: its start, and the
  // stack depth it sits at.
  bool pending = false;
  TimeNs pending_start = 0;
  size_t pending_depth = 0;
  for (const Interval& interval : thread.intervals) {
    if (interval.kind != IntervalKind::kCpuOp) continue;
    while (!stack.empty() && stack.back().end <= interval.start) {
      if (pending && stack.size() == pending_depth) {
        regions.push_back({pending_start, stack.back().end});  // no inner backward
        pending = false;
      }
      stack.pop_back();
    }
    const std::string_view name = rank.name(interval.name);
    const bool in_backward = !stack.empty() && stack.back().backward;
    const bool in_recompute = !stack.empty() && stack.back().recompute;
    Open open{interval.end, in_backward || IsBackwardNode(name), in_recompute};
    if (pending && name.starts_with(op_names::kAutogradNodePrefix)) {
      // The inner backward begins: the forward recomputed before it is the region.
      regions.push_back({pending_start, interval.start});
      pending = false;
      open.recompute = false;
    } else if (!in_recompute && IsCheckpointNode(name)) {
      pending = true;
      pending_start = interval.start;
      pending_depth = stack.size() + 1;
      open.recompute = true;
    } else if (!in_recompute && in_backward && IsForwardOp(name)) {
      regions.push_back({interval.start, interval.end});
      open.recompute = true;
    }
    stack.push_back(open);
  }
  if (pending && stack.size() >= pending_depth) {
    regions.push_back({pending_start, stack[pending_depth - 1].end});
  }
  std::sort(regions.begin(), regions.end(),
            [](const TimeRange& a, const TimeRange& b) { return a.start < b.start; });
  return regions;
}

}  // namespace bubblescope::index
