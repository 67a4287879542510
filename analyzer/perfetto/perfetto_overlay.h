// The Perfetto overlay (docs/perfetto.md): one merged Chrome trace of every rank of a job on its
// pipelines' reference clocks, with each pipeline rank's idle intervals (fill, drain, comm_wait,
// empty) and labelled ops (stage, microbatch, F/B/W) on tracks of their own, to open in
// ui.perfetto.dev. The original events keep their names and args; the "bubblescope_merged"
// member (readers/merged_trace.h) lets bubblescope read the file back as the ranks it came from.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "bubblescope/trace.h"
#include "common/byte_sink.h"
#include "job/job.h"

namespace bubblescope::perfetto {

struct OverlayCounts {
  int64_t ranks = 0;
  int64_t events = 0;    // original events written
  int64_t left_out = 0;  // original events the Chrome trace format cannot hold (never modelled)
  int64_t idle_spans = 0;
  int64_t ops = 0;
};

// first..last, both included.
struct IdRange {
  int64_t first = 0;
  int64_t last = 0;
};

// Which ranks the merged trace holds. An empty list limits nothing; given both, a rank must be
// in one of the chosen pipelines and among the chosen ranks.
struct OverlayChoice {
  std::vector<IdRange> pipelines;  // numbered as the reports number them, 0 first
  std::vector<IdRange> ranks;      // rank ids
};

// The indices into trace.ranks of the ranks `choice` keeps, in the trace's order. Errors, one
// line: a chosen pipeline or rank the job does not have (the first one, and what the job has), or
// a choice that keeps no rank.
absl::StatusOr<std::vector<size_t>> ChooseRanks(const Trace& trace, const job::Result& result,
                                                const OverlayChoice& choice);

// A merged trace is `head`, then the events, then `tail`: its layout (the "bubblescope_merged"
// member, which comes first) names every rank's processes, learnt only while its events are
// written.
struct MergedFrame {
  std::string head;
  std::string tail;
};

// Writes the events of the merged trace of the ranks trace.ranks[i] for i in `ranks` (each
// rank's file is streamed again from rank.source_path, one rank at a time) with the overlay of
// `result`, the job driver's result for that same trace, to `events`, a buffer at a time; returns
// what goes before and after them. Errors, one line: a rank's file can no longer be read, or is
// itself a merged trace, or `events` failed.
absl::StatusOr<MergedFrame> WriteOverlay(const Trace& trace, const job::Result& result,
                                         const std::vector<size_t>& ranks, ByteSink* events,
                                         OverlayCounts* counts);

// The whole merged trace of every rank, in memory: for jobs small enough to hold it twice.
absl::StatusOr<std::string> RenderOverlay(const Trace& trace, const job::Result& result,
                                          OverlayCounts* counts);

}  // namespace bubblescope::perfetto
