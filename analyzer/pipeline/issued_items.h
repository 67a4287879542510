// A rank's pipeline work in the order the rank issued it: compute and point-to-point transfers,
// each tagged with the profiler step it belongs to.
//
// A CPU transfer ends when its `gloo:*` range does (the op itself only posts it).
//
// Pipeline structure is a property of issue order (the CPU posts a recv, the op's compute, then
// its send), not of device timing, where a transfer stream may run ahead of compute. On a rank
// with GPU activity an item is a GPU kernel, ordered and stepped by the launch that started it
// (matched by correlation id); a kernel without a launch uses its own start. On a CPU-only rank
// (a gloo pipeline) it is a top-level operator of the thread that runs the model. Work inside an
// `Optimizer.*` range is not pipeline work and is left out, and so is work the StepMap puts in no
// step (before the first one, or in a partial period of a repeating schedule).
#pragma once

#include <cstdint>
#include <vector>

#include "bubblescope/trace.h"
#include "pipeline/step_map.h"

namespace bubblescope::pipeline {

enum class ItemKind : uint8_t { kCompute, kSend, kRecv };

// What a compute item's name or origin says about its phase. Names carry this only by
// convention (torch's "autograd::engine::evaluate_function: ..." backward ops, kernels named
// "*backward*" or "*weight_grad*", and a kernel launched from inside such an autograd op is
// backward too), so it is a hint used to split compute runs, never to find the structure.
enum class PhaseHint : uint8_t { kNone, kBackward, kWeightGrad };

struct IssuedItem {
  ItemKind kind = ItemKind::kCompute;
  PhaseHint hint = PhaseHint::kNone;
  int32_t step = 0;     // the step its issue lies in (step_map.h)
  int32_t peer = -1;    // send / recv: the global peer rank when the trace records it
  int64_t bytes = -1;   // send / recv: payload bytes when the trace records them
  NameId name = kNoName;  // the kernel's or operator's name, in the rank's pool
  TimeNs issue = 0;     // launch start (GPU) or op start (CPU)
  TimeNs start = 0;     // the activity itself
  TimeNs end = 0;
};

struct IssuedTimeline {
  int32_t rank = -1;
  bool cpu_only = false;
  std::vector<IssuedItem> items;   // in issue order
};

IssuedTimeline BuildIssuedTimeline(const Rank& rank, const StepMap& steps);

// Compute intervals of the rank as ranges, for measuring annotated ops: every compute kernel on
// the rank's GPU streams, or the top-level compute ops of its model thread on a CPU-only rank.
struct ComputeRange {
  TimeNs issue = 0;  // launch start (GPU, own start without a launch) or op start (CPU)
  TimeNs start = 0;
  TimeNs end = 0;
  int32_t device = -1;
};
std::vector<ComputeRange> ComputeRanges(const Rank& rank);

}  // namespace bubblescope::pipeline
