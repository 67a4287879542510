#include "pipeline/issued_items.h"

#include <optional>

namespace bubblescope::pipeline {

IssuedTimeline BuildIssuedTimeline(const index::RankIndex& rank, const StepMap& steps) {
  IssuedTimeline out;
  out.rank = rank.rank;
  out.cpu_only = rank.cpu_only();
  for (uint32_t i : rank.issue_order) {
    const index::DeviceOp& op = rank.ops[i];
    if (op.in_optimizer) continue;
    IssuedItem item;
    if (op.op_class == index::OpClass::kCompute) {
      item.kind = ItemKind::kCompute;
      item.hint = op.hint;
    } else if (op.is_p2p()) {
      item.kind = op.is_send() ? ItemKind::kSend : ItemKind::kRecv;
      item.peer = op.peer;
      item.bytes = op.bytes;
    } else {
      continue;
    }
    const std::optional<int32_t> step = steps.At(op.issue);
    if (!step) continue;
    item.step = *step;
    item.name = op.name;
    item.op = i;
    item.issue = op.issue;
    item.start = op.start;
    item.end = item.kind == ItemKind::kCompute ? op.end : op.transfer_end;
    out.items.push_back(item);
  }
  return out;
}

}  // namespace bubblescope::pipeline
