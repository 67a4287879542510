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

#include <cstdint>
#include <vector>

#include "pipeline/issued_items.h"
#include "pipeline/pipeline_op.h"

namespace bubblescope::pipeline {

// True when some compute item of the timeline carries a backward or weight-gradient hint.
bool HasPhaseHints(const IssuedTimeline& timeline);

// The op type a compute item's phase hint points to; no hint reads as a forward.
OpType HintedType(const IssuedItem& item);

// One op of `type` made of `items` (non-empty, of one step): its start is the first item's, its
// compute the union of the items' time ranges.
PipelineOp OpOfItems(int32_t rank, OpType type, const std::vector<const IssuedItem*>& items);

std::vector<PipelineOp> SegmentOps(const IssuedTimeline& timeline, bool first_stage);

// Where each op of SegmentOps sits in timeline.items: its type and first and last item index.
struct OpSpan {
  OpType type = OpType::kForward;
  size_t first = 0;
  size_t last = 0;
};
std::vector<OpSpan> SegmentOpSpans(const IssuedTimeline& timeline, bool first_stage);

// What each transfer of the timeline carries, from the ops around it in issue order: a send what
// the last op before it made, a receive what the next op after it consumes (a forward's
// activation, a backward's or weight-gradient's gradient). One entry per item; compute items and
// transfers with no op on that side are kUnknown. Only as good as the phase hints: without any,
// every op reads as a forward.
enum class Payload : uint8_t { kUnknown, kActivation, kGradient };
std::vector<Payload> TransferPayloads(const IssuedTimeline& timeline, bool first_stage);

}  // namespace bubblescope::pipeline
