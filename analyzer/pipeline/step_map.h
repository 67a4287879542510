// Which step of a rank a moment of its CPU time belongs to, as the pipeline analyses count them.
//
// Pipeline structure (stage order, m, v, the family) is read from one iteration of each rank:
// its reference step. A StepMap numbers a rank's steps relative to it: the reference is step 0,
// the steps after it 1, 2, ... and those before it negative. Moments before the first step, or
// inside a partial period of a repeating schedule, belong to no step.
#pragma once

#include <cstddef>
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

  // `steps`: one rank's steps in start order (iterations::Steps keeps them so); step number
  // `reference` becomes step 0. No steps at all: every moment is step 0.
  static StepMap FromSteps(const std::vector<iterations::StepStart>& steps, int64_t reference);

  // The step holding `time`, or nullopt when it belongs to none.
  std::optional<int32_t> At(TimeNs time) const;

 private:
  std::vector<iterations::StepStart> steps_;  // ascending start
  int64_t reference_ = 0;                     // the step number that is step 0
  std::optional<int32_t> before_first_ = 0;   // the step of moments before the first step
};

// Each rank's reference step, decided once for the job over the ranks at `positions` (indices
// into the trace; the ranks with pipeline traffic), returned as one StepMap per trace rank
// (ranks outside `positions` get the map of their own steps from their first one). Steps
// numbered the same on every rank (profiler steps, marker, whole trace): the first number that
// every one of these ranks has whole and not cut short by a truncated file, else the first they
// all have, else the first found. A repeating schedule numbers each rank's periods on its own:
// each rank's first whole period.
std::vector<StepMap> ReferenceSteps(const Trace& trace, const iterations::Steps& steps,
                                    const std::vector<size_t>& positions);

// The same with the reference number already decided for the job (SharedReference; unused for
// a repeating schedule): how a part of a job analysed on its own (job/job_parts.h) takes the
// job's decision.
std::vector<StepMap> ReferenceSteps(const iterations::Steps& steps,
                                    const std::vector<size_t>& positions,
                                    std::optional<int64_t> shared);

// One rank's steps as the reference number reads them.
struct RankStepNumbers {
  const std::vector<iterations::StepStart>* steps = nullptr;
  bool cut_short = false;  // its file was cut short (iterations::CutShort)
};

// The reference number of steps numbered alike on the ranks with pipeline traffic (see
// ReferenceSteps); nullopt when they have no step.
std::optional<int64_t> SharedReference(const std::vector<RankStepNumbers>& ranks);

}  // namespace bubblescope::pipeline
