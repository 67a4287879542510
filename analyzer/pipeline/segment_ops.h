// Pipeline ops recovered from the compute between point-to-point transfers, for traces without
// op annotations.
//
// Transfers cut a rank's issued work into segments. Within a segment, phase hints (issued_items.h)
// split the compute into runs; every backward or weight-gradient run is an op. A forward run is
// an op when it consumes a receive (it opens a segment that a receive started) or, on the first
// stage, when it feeds a send (it closes a segment a send ends). Other unhinted runs are
// bookkeeping around the ops (buffer allocation, the loss-gradient seed, detaching the output,
// an optimizer step after the last backward) and are left out. Every receive-fed forward on a
// non-first stage opens its segment, so no forward is lost that way. Back-to-back W ops share a
// run; within a profiler step they are cut apart again when the one-W-per-backward count and the
// repeating item names agree on where (segment_ops.cc).
#pragma once

#include <vector>

#include "pipeline/issued_items.h"
#include "pipeline/pipeline_op.h"

namespace bubblescope::pipeline {

// True when some compute item of the timeline carries a backward or weight-gradient hint.
bool HasPhaseHints(const IssuedTimeline& timeline);

std::vector<PipelineOp> SegmentOps(const IssuedTimeline& timeline, bool first_stage);

}  // namespace bubblescope::pipeline
