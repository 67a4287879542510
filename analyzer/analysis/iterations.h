// Which training iteration every device interval of every rank belongs to.
//
// Iterations come from step ranges on each rank's CPU: the ProfilerStep#N ranges (numbered N),
// or, when a marker is given, the CPU annotations whose name it matches (numbered 0, 1, ... in
// start order on each rank), or, with neither anywhere, the periods of the schedule every rank
// repeats (repeating_schedule.h; numbered 0, 1, ... and matched across ranks by time). Each step owns the CPU time from its start to the next step's start
// (the last step: to the end of the trace), so launches in the short gap the profiler leaves
// between steps stay with the step that just ended.
//
// A GPU op belongs to the step in which its launch (the kRuntime interval on a CPU thread with the
// same correlation id) starts: the device runs behind the CPU, so a kernel that runs after the
// next step began still belongs to the step that launched it. An op without a launch record, and
// every op of a CPU-only rank, goes by its own start. Ops before a rank's first step belong to no
// iteration; they are counted, never silently dropped. Without any step or marker range on any
// rank and without a repeating schedule on every rank with device activity, the whole trace is
// one iteration, number 0.
//
// An iteration is complete when every rank has it, it is not the last iteration of a rank
// whose file was cut short (that iteration lost the events after the cut) and, for a repeating
// schedule, it is a whole period on every rank (not the part before the first or after the
// last whole period). Incomplete
// iterations are kept and flagged; the bubble totals leave them out.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "analysis/device_activity.h"
#include "bubblescope/trace.h"

namespace bubblescope::iterations {

struct Options {
  // A regular expression (RE2 syntax) searched for in the names of CPU annotations;
  // the matching ranges act as steps. Unset: the ProfilerStep#N ranges are the steps.
  std::optional<std::string> iteration_marker;
};

enum class StepSource : uint8_t {
  kProfilerSteps,  // ProfilerStep#N ranges
  kMarker,         // annotations matching Options::iteration_marker
  kRepeatingSchedule,  // periods of the device-op sequence every rank repeats
  kWholeTrace,     // no steps anywhere: the whole trace is iteration 0
};

std::string_view StepSourceName(StepSource source);

// Where one step of a rank begins: its launches (CPU time) from `start` up to the next step's
// start belong to it.
struct StepStart {
  int64_t number = 0;
  TimeNs start = 0;      // the lowest TimeNs for a step open at the beginning of the trace
  bool partial = false;  // repeating schedule: part of a period only (trace start or end)
};

// The rank's ProfilerStep ranges as step starts, in start order.
std::vector<StepStart> ProfilerStepStarts(const Rank& rank);

// Index into `steps` (in start order) of the step whose slot [start, next step's start) holds
// `time`, or -1 before the first.
int64_t StepIndexAt(const std::vector<StepStart>& steps, TimeNs time);

struct RankIteration {
  bool present = false;    // the rank has a step with this number (whole trace: always)
  bool cut_short = false;  // the last iteration of a rank whose file was truncated
  bool partial = false;    // repeating schedule: only part of a period (trace start or end)
  // Indices into Result::activity[rank].intervals, ascending (so in start order).
  std::vector<uint32_t> intervals;
};

struct Iteration {
  int64_t number = 0;
  bool complete = false;             // over every rank of the trace
  std::vector<RankIteration> ranks;  // in trace order
};

struct RankAssignment {
  int32_t rank = -1;
  int64_t steps = 0;       // step ranges (or whole repeated periods) found on the rank
  int64_t by_launch = 0;   // device intervals placed by the start of their launch
  int64_t by_start = 0;    // device intervals placed by their own start
  int64_t unassigned = 0;  // device intervals before the rank's first step (or with no steps)
  bool truncated = false;  // the rank's file was cut short
};

struct Result {
  StepSource source = StepSource::kWholeTrace;
  std::vector<device_activity::RankActivity> activity;  // in trace order
  std::vector<Iteration> iterations;                    // ascending number
  std::vector<RankAssignment> ranks;                    // in trace order
  // Each rank's steps in start order (trace order); a rank without steps has none. Whole trace:
  // one step, number 0, open from the beginning.
  std::vector<std::vector<StepStart>> steps;
};

// InvalidArgumentError when the iteration marker is not a valid regular expression.
absl::StatusOr<Result> Analyze(const Trace& trace, const Options& options);

// True when every rank in `rank_indices` (indices into Trace::ranks) has `iteration` and none of
// them lost its end to a truncated file.
bool CompleteFor(const Iteration& iteration, const std::vector<size_t>& rank_indices);

}  // namespace bubblescope::iterations
