#include "pipeline/segment_ops.h"

#include <utility>

#include "analysis/interval_set.h"

namespace bubblescope::pipeline {
namespace {

OpType PhaseOf(const IssuedItem& item) {
  switch (item.hint) {
    case PhaseHint::kBackward:
      return OpType::kBackward;
    case PhaseHint::kWeightGrad:
      return OpType::kWeightGrad;
    case PhaseHint::kNone:
      break;
  }
  return OpType::kForward;
}

struct Run {
  OpType type = OpType::kForward;
  std::vector<const IssuedItem*> items;
};

PipelineOp MakeOp(int32_t rank, const Run& run) {
  std::vector<TimeRange> ranges;
  for (const IssuedItem* item : run.items) ranges.push_back(TimeRange{item->start, item->end});
  PipelineOp op;
  op.rank = rank;
  op.step = run.items.front()->step;
  op.type = run.type;
  op.start = run.items.front()->start;
  op.compute_ns = IntervalSet::FromRanges(std::move(ranges)).Length();
  return op;
}

// Emits the ops of one segment: compute items between two transfers of the same step.
void EmitSegment(int32_t rank, bool first_stage, bool after_recv, bool before_send,
                 const std::vector<const IssuedItem*>& items, std::vector<PipelineOp>* ops) {
  std::vector<Run> runs;
  for (const IssuedItem* item : items) {
    OpType type = PhaseOf(*item);
    if (runs.empty() || runs.back().type != type) runs.push_back(Run{type, {}});
    runs.back().items.push_back(item);
  }
  for (size_t i = 0; i < runs.size(); ++i) {
    const Run& run = runs[i];
    if (run.type == OpType::kForward) {
      bool consumes_recv = i == 0 && after_recv;
      bool feeds_send = i + 1 == runs.size() && before_send && first_stage;
      if (!consumes_recv && !feeds_send) continue;
    }
    ops->push_back(MakeOp(rank, run));
  }
}

}  // namespace

bool HasPhaseHints(const IssuedTimeline& timeline) {
  for (const IssuedItem& item : timeline.items) {
    if (item.kind == ItemKind::kCompute && item.hint != PhaseHint::kNone) return true;
  }
  return false;
}

std::vector<PipelineOp> SegmentOps(const IssuedTimeline& timeline, bool first_stage) {
  std::vector<PipelineOp> ops;
  std::vector<const IssuedItem*> segment;
  bool after_recv = false;
  int32_t step = timeline.items.empty() ? 0 : timeline.items.front().step;
  for (const IssuedItem& item : timeline.items) {
    if (item.step != step) {  // a step boundary ends the segment without a transfer
      EmitSegment(timeline.rank, first_stage, after_recv, false, segment, &ops);
      segment.clear();
      after_recv = false;
      step = item.step;
    }
    if (item.kind == ItemKind::kCompute) {
      segment.push_back(&item);
      continue;
    }
    EmitSegment(timeline.rank, first_stage, after_recv, item.kind == ItemKind::kSend, segment,
                &ops);
    segment.clear();
    after_recv = item.kind == ItemKind::kRecv;
  }
  EmitSegment(timeline.rank, first_stage, after_recv, false, segment, &ops);
  return ops;
}

}  // namespace bubblescope::pipeline
