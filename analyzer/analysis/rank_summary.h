// Per-rank activity summary: device span, compute / communication / memcpy time (unions), idle
// time, op counts, profiler steps and peak device memory. The first numbers `analyze` prints.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bubblescope/trace.h"
#include "index/rank_index.h"

namespace bubblescope::rank_summary {

struct RankFigures {
  int32_t rank = -1;
  std::string source_path;
  std::string record_run_id;  // empty when the trace is not from `bubblescope record`
  // Rank::rank_source, time_base and time_evidence: what the rank's id and clock rest on, where
  // its reader records it (Nsight exports); empty otherwise.
  std::string rank_source;
  std::string time_base;
  std::string time_evidence;
  // True when the rank has no GPU activity and its CPU model thread stands in for the device.
  bool cpu_timeline = false;
  TimeNs span_start = 0;  // first device activity start
  TimeNs span_end = 0;    // last device activity end
  TimeNs span = 0;
  TimeNs compute = 0;   // union of compute kernels (or top-level CPU compute ops)
  TimeNs comm = 0;      // union of communication kernels (or CPU comm ops)
  TimeNs memcpy = 0;    // union of memcpy and memset
  TimeNs idle = 0;      // span - union of all device activity
  int64_t kernels = 0;  // compute + communication kernels (or top-level CPU ops)
  int64_t comm_ops = 0;
  int64_t memcpys = 0;  // memcpy + memset ops
  int64_t steps = 0;    // ProfilerStep#N ranges
  // The time the rank's profiler steps cover (their union, within the span) and the idle part
  // of it: a job's work is its steps, so idle inside them is what a job without a pipeline
  // leads with; idle over the whole span also counts the set-up and the waits between
  // profiling cycles. Both 0 without steps.
  TimeNs step_time = 0;
  TimeNs step_idle = 0;
  int64_t peak_allocated_bytes = -1;  // -1 when the trace has no memory samples
  int64_t peak_reserved_bytes = -1;
  ImportStats import_stats;
};

struct Result {
  std::vector<RankFigures> ranks;  // in rank order
};

Result Analyze(const Trace& trace, const index::TraceIndex& index);

}  // namespace bubblescope::rank_summary
