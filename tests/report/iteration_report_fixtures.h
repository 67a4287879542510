// What the tests of watch's outputs build their iterations from.
#pragma once

#include <cstdint>

#include "bubblescope/trace.h"
#include "watch/iteration_report.h"

namespace bubblescope::testing {

// A stage of an iteration with its compute and idle time (the rest of its split 0).
inline watch::StageIteration Stage(int32_t stage, int32_t rank, TimeNs compute, TimeNs idle) {
  watch::StageIteration s;
  s.stage = stage;
  s.rank = rank;
  s.split.compute = compute;
  s.split.idle = idle;
  return s;
}

}  // namespace bubblescope::testing
