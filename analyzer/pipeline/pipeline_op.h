// One measured pipeline op (a forward, backward or weight-gradient of one microbatch on one
// stage), whichever source found it.
#pragma once

#include <cstdint>

#include "bubblescope/trace.h"

namespace bubblescope::pipeline {

enum class OpType : uint8_t {
  kForward,
  kBackward,  // full backward, or the input-gradient half when W is separate
  kWeightGrad,
};

struct PipelineOp {
  int32_t rank = -1;
  int32_t step = 0;  // its step, 0 = the pipeline's reference iteration (step_map.h)
  OpType type = OpType::kForward;
  bool input_grad_only = false;  // an `I` op (torch zero-bubble schedules)
  int32_t virtual_stage = -1;    // when the source names it
  int32_t microbatch = -1;       // when the source names it
  TimeNs start = 0;              // the op's range (annotation) or its first compute item
  TimeNs compute_ns = 0;         // union of the compute inside the op
  // The first start and last end of that compute, on the rank's own clock (device activity on
  // a GPU rank); both 0 when the op covers no compute.
  TimeNs compute_start = 0;
  TimeNs compute_end = 0;
  // Run overlapped with another op in one range (torch's DualPipeV `OVERLAP_F_B`): it counts as
  // an op, but compute_ns is the whole range's, shared, so it is no measure of this op alone.
  bool overlapped = false;
};

}  // namespace bubblescope::pipeline
