// What `bubblescope watch` (docs/watch.md) reports of one pipeline iteration, once the iteration
// is complete on every rank of the pipeline and has been analysed: the figures the text line, the
// JSON line, the metrics file and the alerts read. Every figure here is read from the job
// driver's result (job::Pipeline) for that iteration, none worked out anew, so `watch --once` on
// a finished job repeats `analyze`'s iterations[] exactly.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "bubblescope/idle_split.h"
#include "bubblescope/trace.h"

namespace bubblescope::watch {

// One stage of the pipeline in the iteration.
struct StageIteration {
  int32_t stage = 0;  // position in the pipeline, 0 first
  int32_t rank = -1;
  // The rank's time in the iteration's window (bubble::RankIterationFigures::split): its work
  // and its idle time by where it lies.
  IdleSplit split;
};

struct IterationReport {
  int32_t pipeline = 0;  // the pipeline's index in the job (analyze's pipelines[] order)
  int64_t step = 0;      // the iteration's number (analyze's iterations[].step)
  // Unix time (ns) when watch analysed it: for the metrics file's timestamps and the JSON line.
  int64_t analysed_unix_ns = 0;
  TimeNs window_ns = 0;          // analyze's iterations[].window_us, in ns: the iteration's latency
  double bubble_fraction = 0.0;  // analyze's iterations[].bubble_fraction
  // The bubble the inferred schedule leaves by itself (job::Pipeline::ideal) and the measured
  // bubble above it (bubble_fraction - ideal); nullopt without an inferred schedule.
  std::optional<double> ideal_bubble_fraction;
  std::optional<double> excess_bubble_fraction;
  // The stage whose work (compute and exposed in-stage communication) took longest in the
  // iteration; -1 when no stage worked.
  int32_t slowest_stage = -1;
  // The first root cause (root_causes::CauseName) of the analysis the iteration was read from;
  // empty when it named none.
  std::string top_cause;
  std::vector<StageIteration> stages;  // stage 0 first
};

// Something watch noticed about the job rather than one iteration: the pipeline structure or the
// clock model seen on the first iterations no longer holding, a rank's file cut or damaged.
struct WatchNotice {
  int64_t analysed_unix_ns = 0;
  std::string text;  // one line, no newline
};

}  // namespace bubblescope::watch
