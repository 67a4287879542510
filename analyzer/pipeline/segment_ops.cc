#include "pipeline/segment_ops.h"

#include <cstddef>
#include <utility>

#include "common/interval_set.h"

namespace bubblescope::pipeline {
namespace {

struct Run {
  OpType type = OpType::kForward;
  std::vector<const IssuedItem*> items;
};

// Emits the op runs of one segment: compute items between two transfers of the same step.
void EmitSegment(bool first_stage, bool after_recv, bool before_send,
                 const std::vector<const IssuedItem*>& items, std::vector<Run>* ops) {
  std::vector<Run> runs;
  for (const IssuedItem* item : items) {
    OpType type = HintedType(*item);
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
    ops->push_back(run);
  }
}

// Back-to-back W ops (zb-h1's cool-down) have no transfer between them and share one run. Every
// backward has exactly one W, so when a step has fewer W runs than backwards and its W items
// divide evenly among the backwards, each W op is that many items and longer runs are cut into
// equal pieces. The cut must also show in the names: every piece of a run repeats the first
// piece's item names, else the step is left as it is.
void SplitMergedWeightGrads(std::vector<Run>* runs) {
  const auto is_weight_grad = [](const Run& run) { return run.type == OpType::kWeightGrad; };
  size_t backwards = 0;
  size_t weight_grads = 0;
  size_t weight_grad_items = 0;
  for (const Run& run : *runs) {
    backwards += run.type == OpType::kBackward ? 1 : 0;
    if (is_weight_grad(run)) {
      ++weight_grads;
      weight_grad_items += run.items.size();
    }
  }
  if (weight_grads == 0 || weight_grads >= backwards || weight_grad_items % backwards != 0) return;
  const size_t per_op = weight_grad_items / backwards;
  for (const Run& run : *runs) {
    if (!is_weight_grad(run)) continue;
    if (run.items.size() % per_op != 0) return;
    for (size_t i = per_op; i < run.items.size(); ++i) {
      if (run.items[i]->name != run.items[i % per_op]->name) return;
    }
  }
  std::vector<Run> split;
  for (Run& run : *runs) {
    if (!is_weight_grad(run) || run.items.size() == per_op) {
      split.push_back(std::move(run));
      continue;
    }
    for (size_t begin = 0; begin < run.items.size(); begin += per_op) {
      split.push_back(Run{run.type,
                          {run.items.begin() + static_cast<ptrdiff_t>(begin),
                           run.items.begin() + static_cast<ptrdiff_t>(begin + per_op)}});
    }
  }
  *runs = std::move(split);
}

// The op runs of the whole timeline, step by step, in issue order.
std::vector<Run> OpRuns(const IssuedTimeline& timeline, bool first_stage) {
  std::vector<Run> runs;
  std::vector<Run> step_runs;  // the op runs of the current step
  std::vector<const IssuedItem*> segment;
  bool after_recv = false;
  int32_t step = timeline.items.empty() ? 0 : timeline.items.front().step;
  const auto end_step = [&] {
    EmitSegment(first_stage, after_recv, false, segment, &step_runs);
    SplitMergedWeightGrads(&step_runs);
    for (Run& run : step_runs) runs.push_back(std::move(run));
    step_runs.clear();
    segment.clear();
    after_recv = false;
  };
  for (const IssuedItem& item : timeline.items) {
    if (item.step != step) {  // a step boundary ends the segment without a transfer
      end_step();
      step = item.step;
    }
    if (item.kind == ItemKind::kCompute) {
      segment.push_back(&item);
      continue;
    }
    EmitSegment(first_stage, after_recv, item.kind == ItemKind::kSend, segment, &step_runs);
    segment.clear();
    after_recv = item.kind == ItemKind::kRecv;
  }
  end_step();
  return runs;
}

}  // namespace

OpType HintedType(const IssuedItem& item) {
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

PipelineOp OpOfItems(int32_t rank, OpType type, const std::vector<const IssuedItem*>& items) {
  std::vector<TimeRange> ranges;
  for (const IssuedItem* item : items) ranges.push_back(TimeRange{item->start, item->end});
  PipelineOp op;
  op.rank = rank;
  op.step = items.front()->step;
  op.type = type;
  op.start = items.front()->start;
  const IntervalSet compute = IntervalSet::FromRanges(std::move(ranges));
  op.compute_ns = compute.Length();
  op.compute_start = compute.Start();
  op.compute_end = compute.End();
  return op;
}

bool HasPhaseHints(const IssuedTimeline& timeline) {
  for (const IssuedItem& item : timeline.items) {
    if (item.kind == ItemKind::kCompute && item.hint != PhaseHint::kNone) return true;
  }
  return false;
}

std::vector<PipelineOp> SegmentOps(const IssuedTimeline& timeline, bool first_stage) {
  std::vector<PipelineOp> ops;
  for (const Run& run : OpRuns(timeline, first_stage))
    ops.push_back(OpOfItems(timeline.rank, run.type, run.items));
  return ops;
}

std::vector<OpSpan> SegmentOpSpans(const IssuedTimeline& timeline, bool first_stage) {
  std::vector<OpSpan> spans;
  for (const Run& run : OpRuns(timeline, first_stage)) {
    // Run items point into timeline.items, consecutively.
    const auto first = static_cast<size_t>(run.items.front() - timeline.items.data());
    spans.push_back(OpSpan{run.type, first, first + run.items.size() - 1});
  }
  return spans;
}

std::vector<Payload> TransferPayloads(const IssuedTimeline& timeline, bool first_stage) {
  const std::vector<IssuedItem>& items = timeline.items;
  const std::vector<OpSpan> ops = SegmentOpSpans(timeline, first_stage);
  const auto payload_of = [](const OpSpan& op) {
    return op.type == OpType::kForward ? Payload::kActivation : Payload::kGradient;
  };
  std::vector<Payload> payloads(items.size(), Payload::kUnknown);
  size_t op = 0;
  Payload last_made = Payload::kUnknown;
  for (size_t i = 0; i < items.size(); ++i) {
    for (; op < ops.size() && ops[op].last < i; ++op) last_made = payload_of(ops[op]);
    if (items[i].kind == ItemKind::kSend) payloads[i] = last_made;
  }
  op = ops.size();
  Payload next_consumed = Payload::kUnknown;
  for (size_t i = items.size(); i-- > 0;) {
    for (; op > 0 && ops[op - 1].first > i; --op) next_consumed = payload_of(ops[op - 1]);
    if (items[i].kind == ItemKind::kRecv) payloads[i] = next_consumed;
  }
  return payloads;
}

}  // namespace bubblescope::pipeline
