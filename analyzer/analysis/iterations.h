// Training iterations: where each rank's iterations begin (FindSteps, once per job) and which
// iteration every device op of a pipeline's ranks belongs to (Assign, once per pipeline).
//
// Steps come from each rank's CPU: the ProfilerStep#N ranges (numbered N), or, when a marker is
// given, the CPU annotations whose name it matches (numbered 0, 1, ... in start order on each
// rank), or, with neither anywhere, the periods of the schedule every rank repeats
// (repeating_schedule.h; numbered on each rank from its first whole period, and across ranks by
// Assign, which matches periods by time on the pipeline's aligned clock). Each step owns the CPU
// time from its start to the next step's start (the last step: to the end of the trace), so
// launches in the short gap the profiler leaves between steps stay with the step that just ended.
//
// A device op belongs to the step in which it was issued (index/rank_index.h: its launch, or its
// own start without one): the device runs behind the CPU, so a kernel that runs after the next
// step began still belongs to the step that launched it. Ops before a rank's first step belong
// to no iteration; they are counted, never silently dropped. Without any step or marker range
// and without a repeating schedule on every rank considered, the whole trace is one iteration,
// number 0.
//
// An iteration is complete when every rank of the pipeline has it and runs compute in it (a step
// that holds none of the pipeline's work is no iteration: torch closes a profiler window the
// training loop left early with an empty step, which the model drops where it recorded nothing
// at all, model/rank_finish.cc), it is not the last iteration
// of a rank whose file was cut short (that iteration lost the events after the cut) and, for a
// repeating schedule, it is a whole period on every rank (not the part before the first or after
// the last whole period). Incomplete iterations are kept and flagged; the bubble totals leave
// them out.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "analysis/clock_offsets.h"
#include "analysis/repeating_schedule.h"
#include "bubblescope/trace.h"
#include "index/rank_index.h"

namespace bubblescope::iterations {

enum class StepSource : uint8_t {
  kProfilerSteps,      // ProfilerStep#N ranges
  kMarker,             // annotations matching Options::iteration_marker
  kRepeatingSchedule,  // periods of the device-op sequence every rank repeats
  kWholeTrace,         // no steps anywhere: the whole trace is iteration 0
};

struct Options {
  // A regular expression (RE2 syntax) searched for in the names of CPU annotations;
  // the matching ranges act as steps. Unset: the ProfilerStep#N ranges are the steps.
  std::optional<std::string> iteration_marker;
  // The source the whole job decided on, where a part of a job is analysed on its own (the
  // pipelines of `analyze --mpi`, job/job_parts.h): FindSteps takes it instead of deciding from
  // the part's ranks alone. Unset: FindSteps decides.
  std::optional<StepSource> decided_source;
};

std::string_view StepSourceName(StepSource source);

// Where one step of a rank begins: its launches (CPU time) from `start` up to the next step's
// start belong to it.
struct StepStart {
  int64_t number = 0;
  TimeNs start = 0;      // the lowest TimeNs for a step open at the beginning of the trace
  bool partial = false;  // repeating schedule: part of a period only (trace start or end)
};

// Index into `steps` (in start order) of the step whose slot [start, next step's start) holds
// `time`, or -1 before the first.
int64_t StepIndexAt(const std::vector<StepStart>& steps, TimeNs time);

// Every rank's steps, found once for the job.
struct Steps {
  StepSource source = StepSource::kWholeTrace;
  // Per trace rank, in start order. Profiler steps: numbered N; marker: 0, 1, ... per rank;
  // repeating schedule: the rank's own numbering (first whole period 0, a leading partial one
  // -1); whole trace: one step 0 open from the beginning. A rank without steps has none.
  std::vector<std::vector<StepStart>> ranks;
  // Repeating schedule only: each rank's periods, which Assign numbers across ranks.
  std::vector<repeating_schedule::RankSchedule> schedules;
};

// `considered`: indices into trace.ranks of the ranks whose iterations matter (the job's pipeline
// ranks); the repeating schedule is used only when every one of them repeats one. Empty: all.
// InvalidArgumentError when the iteration marker is not a valid regular expression.
absl::StatusOr<Steps> FindSteps(const Trace& trace, const index::TraceIndex& index,
                                const Options& options, const std::vector<size_t>& considered);

// Whether a rank lost the end of its last step (its file was cut short).
bool CutShort(const Rank& rank);

// One rank's own steps, as FindSteps finds them: its marker ranges with a marker, else its
// ProfilerStep#N ranges (either possibly none). InvalidArgumentError for an invalid marker.
absl::StatusOr<std::vector<StepStart>> OwnSteps(const Rank& rank, const Options& options);

struct RankIteration {
  bool present = false;     // the rank has a step with this number (whole trace: always)
  bool cut_short = false;   // the last iteration of a rank whose file was truncated
  bool partial = false;     // repeating schedule: only part of a period (trace start or end)
  bool holds_work = false;  // a compute op of the rank belongs to it
  // Indices into the rank's index::RankIndex::ops, ascending (so in start order).
  std::vector<uint32_t> ops;
};

struct Iteration {
  int64_t number = 0;
  bool complete = false;             // over every rank of the pipeline
  std::vector<RankIteration> ranks;  // in Result::positions order
};

struct RankAssignment {
  int32_t rank = -1;
  int64_t steps = 0;       // step ranges (or whole repeated periods) found on the rank
  int64_t by_launch = 0;   // device ops placed by the start of their launch
  int64_t by_start = 0;    // device ops placed by their own start
  int64_t unassigned = 0;  // device ops before the rank's first step (or with no steps)
  bool truncated = false;  // the rank's file was cut short
};

struct Result {
  StepSource source = StepSource::kWholeTrace;
  std::vector<size_t> positions;      // the pipeline's ranks: indices into Trace::ranks
  std::vector<Iteration> iterations;  // ascending number
  std::vector<RankAssignment> ranks;  // in `positions` order
};

// The iterations of the ranks at `positions` (indices into trace.ranks, in the pipeline's order).
// `offsets` put their clocks on one (only the repeating schedule's numbering compares times
// across ranks).
Result Assign(const Trace& trace, const index::TraceIndex& index, const Steps& steps,
              const std::vector<size_t>& positions, const ClockOffsets& offsets);

}  // namespace bubblescope::iterations
