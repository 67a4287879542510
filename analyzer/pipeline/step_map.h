// Which iteration a moment of a rank's CPU time belongs to, as the pipeline analyses count them.
//
// Pipeline structure (m, v, the family, the stage order) is read from one iteration, so every
// rank must agree on which one that is and on where it ends, whatever found the iterations:
// profiler steps, an --iteration-marker, the repeating schedule or the whole trace
// (analysis/iterations.h). A StepMap numbers a rank's steps relative to a reference iteration:
// the reference is step 0, the steps after it 1, 2, ... and those before it negative, so
// "step 0" means the same iteration on every rank of a pipeline.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "analysis/iterations.h"
#include "bubblescope/trace.h"

namespace bubblescope::pipeline {

class StepMap {
 public:
  // Every moment is step 0: a rank without steps, read as one iteration.
  StepMap() = default;

  // The rank's own ProfilerStep ranges by position (the first is step 0); moments before the
  // first step count as step 0 too. For analyses that need no agreement across ranks.
  static StepMap FromProfilerSteps(const Rank& rank);

  // `steps`: one rank's steps in start order (iterations::Result::steps, which keeps them so);
  // iteration number `reference` becomes step 0. Moments before the first step, or inside a partial step
  // (repeating schedule), belong to no step. No steps at all: every moment is step 0.
  static StepMap FromIterations(const std::vector<iterations::StepStart>& steps,
                                int64_t reference);

  // The step holding `time`, or nullopt when it belongs to none.
  std::optional<int32_t> At(TimeNs time) const;

 private:
  std::vector<iterations::StepStart> steps_;  // ascending start
  int64_t reference_ = 0;                     // the step number that is step 0
  std::optional<int32_t> before_first_ = 0;   // the step of moments before the first step
};

// The iteration number the pipeline analyses read structure from: the first iteration complete
// on every rank in `rank_indices` (indices into the trace), else the first that every one of
// them has, else the first one found. -1 when there are no iterations.
int64_t ReferenceIteration(const iterations::Result& assignment,
                           const std::vector<size_t>& rank_indices);

}  // namespace bubblescope::pipeline
