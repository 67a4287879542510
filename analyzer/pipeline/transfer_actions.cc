#include "pipeline/transfer_actions.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "pipeline/annotation_ops.h"

namespace bubblescope::pipeline {
namespace {

bool ConsumePrefix(std::string_view* text, std::string_view prefix) {
  if (!text->starts_with(prefix)) return false;
  text->remove_prefix(prefix.size());
  return true;
}

// `{stage}{SEND|RECV}_{F|B}{mb}`, the part after "PP:".
std::optional<NamedTransfer> ParseAction(std::string_view rest) {
  static constexpr std::pair<std::string_view, TransferAction> kActions[] = {
      {"SEND_F", TransferAction::kSendForward},
      {"RECV_F", TransferAction::kRecvForward},
      {"SEND_B", TransferAction::kSendBackward},
      {"RECV_B", TransferAction::kRecvBackward},
  };
  NamedTransfer named;
  if (!ConsumeLeadingNumber(&rest, &named.stage)) return std::nullopt;
  for (const auto& [word, action] : kActions) {
    if (!ConsumePrefix(&rest, word)) continue;
    named.action = action;
    if (!ConsumeLeadingNumber(&rest, &named.microbatch) || !rest.empty()) return std::nullopt;
    return named;
  }
  return std::nullopt;
}

// `{fwd|bwd}_{send|recv} (stage {s})`, the part after "PP::".
std::optional<NamedTransfer> ParseRecordedComm(std::string_view rest) {
  static constexpr std::pair<std::string_view, TransferAction> kComms[] = {
      {"fwd_send", TransferAction::kSendForward},
      {"fwd_recv", TransferAction::kRecvForward},
      {"bwd_send", TransferAction::kSendBackward},
      {"bwd_recv", TransferAction::kRecvBackward},
  };
  for (const auto& [word, action] : kComms) {
    if (!ConsumePrefix(&rest, word)) continue;
    NamedTransfer named;
    named.action = action;
    if (!ConsumePrefix(&rest, " (stage ") || !ConsumeLeadingNumber(&rest, &named.stage) ||
        rest != ")") {
      return std::nullopt;
    }
    return named;
  }
  return std::nullopt;
}

struct NamedRange {
  TimeNs start = 0;
  TimeNs end = 0;
  NamedTransfer transfer;
};

bool ByStart(const NamedRange& a, const NamedRange& b) { return a.start < b.start; }

// The range with the latest start at or before `t` when it still spans `t`. Ranges of one kind
// are the runtime's actions, one after another on its thread, so that one is the innermost.
const NamedRange* Spanning(const std::vector<NamedRange>& sorted, TimeNs t) {
  auto after =
      std::upper_bound(sorted.begin(), sorted.end(), t,
                       [](TimeNs time, const NamedRange& range) { return time < range.start; });
  if (after == sorted.begin()) return nullptr;
  const NamedRange& candidate = *std::prev(after);
  return candidate.end >= t ? &candidate : nullptr;
}

// The first range starting inside [from, to].
const NamedRange* StartingIn(const std::vector<NamedRange>& sorted, TimeNs from, TimeNs to) {
  auto first =
      std::lower_bound(sorted.begin(), sorted.end(), from,
                       [](const NamedRange& range, TimeNs time) { return range.start < time; });
  return first != sorted.end() && first->start <= to ? &*first : nullptr;
}

}  // namespace

std::optional<NamedTransfer> ParseTransferName(std::string_view name) {
  // "PP::" first: "PP:" is its prefix.
  if (ConsumePrefix(&name, "PP::")) return ParseRecordedComm(name);
  if (ConsumePrefix(&name, "PP:")) return ParseAction(name);
  return std::nullopt;
}

int32_t PeerStage(const NamedTransfer& transfer) {
  switch (transfer.action) {
    case TransferAction::kSendForward:
    case TransferAction::kRecvBackward:
      // A name can carry any int32 stage: past the last one there is no stage.
      return transfer.stage < std::numeric_limits<int32_t>::max() ? transfer.stage + 1 : -1;
    case TransferAction::kRecvForward:
    case TransferAction::kSendBackward:
      return transfer.stage - 1;
  }
  return -1;
}

std::vector<LabelledTransfer> LabelTransfers(const Rank& rank, const index::RankIndex& rank_index) {
  std::vector<NamedRange> cpu_actions;  // PP:{stage}SEND_F{mb}, ... on a CPU thread
  std::vector<NamedRange> gpu_actions;  // the same as GPU ranges that copy no CPU range
  std::vector<NamedRange> cpu_comms;    // PP::fwd_send (stage s), ... on a CPU thread
  std::vector<NamedRange> gpu_comms;    // ... on a GPU stream
  for (size_t i = 0; i < rank.annotations.size(); ++i) {
    const Annotation& annotation = rank.annotations[i];
    if (i < rank_index.mirrored_annotation.size() && rank_index.mirrored_annotation[i]) continue;
    const std::string_view name = rank.name(annotation.name);
    if (!name.starts_with("PP:")) continue;
    std::optional<NamedTransfer> transfer = ParseTransferName(name);
    if (!transfer) continue;
    const bool gpu = annotation.scope == AnnotationScope::kGpu;
    const bool own_range = name.starts_with("PP::");
    std::vector<NamedRange>& into =
        own_range ? (gpu ? gpu_comms : cpu_comms) : (gpu ? gpu_actions : cpu_actions);
    into.push_back({annotation.start, annotation.end, *transfer});
  }
  std::vector<LabelledTransfer> labelled;
  if (cpu_actions.empty() && gpu_actions.empty() && cpu_comms.empty() && gpu_comms.empty()) {
    return labelled;
  }
  for (std::vector<NamedRange>* ranges : {&cpu_actions, &gpu_actions, &cpu_comms, &gpu_comms}) {
    std::stable_sort(ranges->begin(), ranges->end(), ByStart);
  }
  for (uint32_t k : rank_index.issue_order) {
    const index::DeviceOp& op = rank_index.ops[k];
    if (!op.is_p2p() || op.in_optimizer) continue;
    // The transfer's own name is the closer evidence; the action around its posting next.
    const NamedRange* range = StartingIn(cpu_comms, op.start, op.end);
    if (range == nullptr) range = Spanning(gpu_comms, op.start);
    if (range == nullptr) range = Spanning(cpu_actions, op.issue);
    if (range == nullptr) range = Spanning(gpu_actions, op.start);
    if (range != nullptr) labelled.push_back({k, range->transfer});
  }
  return labelled;
}

}  // namespace bubblescope::pipeline
