#include "pipeline_schedule.h"

#include <algorithm>

namespace bubblescope::bench {

std::vector<PipelineOp> OneForwardOneBackwardOrder(int stage, int stages, int microbatches) {
  std::vector<PipelineOp> order;
  int warmup = std::min(stages - stage - 1, microbatches);
  int next_forward = 0;
  int next_backward = 0;
  for (; next_forward < warmup; ++next_forward) order.push_back({Pass::kForward, next_forward});
  while (next_forward < microbatches) {
    order.push_back({Pass::kForward, next_forward++});
    order.push_back({Pass::kBackward, next_backward++});
  }
  while (next_backward < microbatches) order.push_back({Pass::kBackward, next_backward++});
  return order;
}

}  // namespace bubblescope::bench
