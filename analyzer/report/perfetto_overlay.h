// The Perfetto overlay (docs/perfetto.md): one merged Chrome trace of every rank of a job on its
// pipelines' reference clocks, with each pipeline rank's idle intervals (fill, drain, comm_wait,
// empty) and labelled ops (stage, microbatch, F/B/W) on tracks of their own, to open in
// ui.perfetto.dev. The original events keep their names and args; the "bubblescope_merged"
// member (readers/merged_trace.h) lets bubblescope read the file back as the ranks it came from.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "bubblescope/trace.h"
#include "job/job.h"

namespace bubblescope::perfetto {

struct OverlayCounts {
  int64_t ranks = 0;
  int64_t events = 0;    // original events written
  int64_t left_out = 0;  // original events the Chrome trace format cannot hold (never modelled)
  int64_t idle_spans = 0;
  int64_t ops = 0;
};

// The merged trace of `trace` (each rank's file is streamed again from rank.source_path) with
// the overlay of `result`, the job driver's result for that same trace. Errors, one line: a
// rank's file can no longer be read, or is itself a merged trace.
absl::StatusOr<std::string> RenderOverlay(const Trace& trace, const job::Result& result,
                                          OverlayCounts* counts);

}  // namespace bubblescope::perfetto
