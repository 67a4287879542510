// The job driver as tests call it: the whole analysis (job::Analyze), and the one-pipeline views
// unit tests of a single analysis need, each made of the same library calls the driver makes.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "analysis/bubble.h"
#include "analysis/iterations.h"
#include "bubblescope/trace.h"
#include "index/rank_index.h"
#include "job/job.h"
#include "pipeline/schedule_inference.h"

namespace bubblescope::testing {

// job::Analyze; an error status fails the test and yields an empty result.
job::Result AnalyzeJob(const Trace& trace, const job::Options& options = {});

// The shape of the job's only pipeline as job::Analyze infers it. FailedPrecondition with the
// reason when it could not be inferred or the job has no pipeline (or several); the driver's own
// error (e.g. a bad iteration marker) as it is.
absl::StatusOr<schedule_inference::Result> ShapeOf(const Trace& trace,
                                                   const iterations::Options& options = {});

// The ranks `rank_ids` (in that order; empty: every rank in trace order) as one pipeline on one
// clock, for hand-made traces: the index, the steps found over those ranks and their iteration
// assignment, as the driver makes them. A rank id the trace lacks is a test failure.
struct GroupIterations {
  index::TraceIndex index;
  iterations::Result assignment;
};
absl::StatusOr<GroupIterations> IterationsOf(const Trace& trace,
                                             const iterations::Options& options = {},
                                             const std::vector<int32_t>& rank_ids = {});
// Their bubble (bubble::Analyze over IterationsOf).
absl::StatusOr<bubble::Result> BubbleOf(const Trace& trace, const iterations::Options& options = {},
                                        const std::vector<int32_t>& rank_ids = {});

}  // namespace bubblescope::testing
