// The order in which one pipeline stage runs its forward and backward passes in a 1F1B
// (one-forward-one-backward, PipeDream-Flush) schedule.
#pragma once

#include <vector>

namespace bubblescope::bench {

enum class Pass { kForward, kBackward };

struct PipelineOp {
  Pass pass = Pass::kForward;
  int microbatch = 0;
  friend bool operator==(const PipelineOp&, const PipelineOp&) = default;
};

// Stage `stage` of `stages` warms up with min(stages - stage - 1, microbatches) forwards, then
// alternates one forward and one backward, then drains the remaining backwards.
std::vector<PipelineOp> OneForwardOneBackwardOrder(int stage, int stages, int microbatches);

}  // namespace bubblescope::bench
