#include "pipeline/annotation_ops.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <utility>

#include "common/interval_set.h"

namespace bubblescope::pipeline {
namespace {

// `{stage}{F|B|I|W}{mb}`, or `{F|B|I|W}{mb}` without the stage (user NVTX ranges often name only
// the microbatch; the stage then comes from the p2p order, as for `Forward {mb}`).
std::optional<ParsedOpName> ParsePpName(std::string_view rest) {
  ParsedOpName parsed;
  const bool stage_given = !rest.empty() && rest.front() >= '0' && rest.front() <= '9';
  if (stage_given && !ConsumeLeadingNumber(&rest, &parsed.virtual_stage)) return std::nullopt;
  if (rest.empty()) return std::nullopt;
  switch (rest.front()) {
    case 'F':
      parsed.type = OpType::kForward;
      break;
    case 'B':
      parsed.type = OpType::kBackward;
      break;
    case 'I':
      parsed.type = OpType::kBackward;
      parsed.input_grad_only = true;
      break;
    case 'W':
      parsed.type = OpType::kWeightGrad;
      break;
    default:
      return std::nullopt;
  }
  rest.remove_prefix(1);
  if (!ConsumeLeadingNumber(&rest, &parsed.microbatch) || !rest.empty()) return std::nullopt;
  return parsed;
}

std::optional<ParsedOpName> ParseWordName(std::string_view name) {
  static constexpr std::pair<std::string_view, OpType> kWords[] = {
      {"Forward ", OpType::kForward},
      {"Backward ", OpType::kBackward},
      {"WeightGrad ", OpType::kWeightGrad},
  };
  for (const auto& [word, type] : kWords) {
    if (name.substr(0, word.size()) != word) continue;
    std::string_view rest = name.substr(word.size());
    ParsedOpName parsed;
    parsed.type = type;
    if (!ConsumeLeadingNumber(&rest, &parsed.microbatch) || !rest.empty()) return std::nullopt;
    return parsed;
  }
  return std::nullopt;
}

// A compute op of the rank as the annotations see it.
struct ComputeRange {
  TimeNs issue = 0;  // launch start (GPU, own start without a launch) or op start (CPU)
  TimeNs start = 0;
  TimeNs end = 0;
  int32_t device = -1;
};

std::vector<ComputeRange> ComputeRanges(const Rank& rank, const index::RankIndex& rank_index) {
  std::vector<ComputeRange> ranges;
  for (uint32_t i : rank_index.issue_order) {
    const index::DeviceOp& op = rank_index.ops[i];
    if (op.op_class != index::OpClass::kCompute) continue;
    const int32_t device = rank_index.cpu_only() ? -1 : rank.timelines[op.timeline].device;
    ranges.push_back({op.issue, op.start, op.end, device});
  }
  return ranges;
}

}  // namespace

bool ConsumeLeadingNumber(std::string_view* text, int32_t* value) {
  size_t digits = 0;
  int64_t number = 0;
  while (digits < text->size() && (*text)[digits] >= '0' && (*text)[digits] <= '9') {
    number = number * 10 + ((*text)[digits] - '0');
    if (number > std::numeric_limits<int32_t>::max()) return false;
    ++digits;
  }
  if (digits == 0) return false;
  text->remove_prefix(digits);
  *value = static_cast<int32_t>(number);
  return true;
}

std::optional<ParsedOpName> ParseOpAnnotation(std::string_view name) {
  constexpr std::string_view kPp = "PP:";
  if (name.substr(0, kPp.size()) == kPp) return ParsePpName(name.substr(kPp.size()));
  return ParseWordName(name);
}

std::vector<ParsedOpName> ParseOverlappedOps(std::string_view name) {
  constexpr std::string_view kOpen = "PP:(";
  constexpr std::string_view kClose = ")OVERLAP_F_B";
  if (!name.starts_with(kOpen) || !name.ends_with(kClose)) return {};
  std::string_view actions = name.substr(kOpen.size(), name.size() - kOpen.size() - kClose.size());
  std::vector<ParsedOpName> parsed;
  // Two actions in torch's schedule; a handful bounds the work on a hostile name.
  constexpr size_t kMaxActions = 8;
  while (parsed.size() < kMaxActions) {
    const size_t semicolon = actions.find(';');
    std::optional<ParsedOpName> action = ParsePpName(actions.substr(0, semicolon));
    if (!action || action->virtual_stage < 0) return {};
    parsed.push_back(*action);
    if (semicolon == std::string_view::npos) return parsed;
    actions.remove_prefix(semicolon + 1);
  }
  return {};
}

std::vector<PipelineOp> AnnotatedOps(const Rank& rank, const index::RankIndex& rank_index,
                                     const StepMap& steps) {
  std::vector<PipelineOp> ops;
  std::vector<ComputeRange> by_issue;
  std::vector<ComputeRange> by_start;
  TimeNs longest = 0;
  bool ranges_ready = false;
  for (size_t i = 0; i < rank.annotations.size(); ++i) {
    if (rank_index.mirrored_annotation[i]) continue;  // the CPU range it copies is the op
    const Annotation& annotation = rank.annotations[i];
    std::vector<ParsedOpName> parsed_ops;
    if (std::optional<ParsedOpName> single = ParseOpAnnotation(rank.name(annotation.name))) {
      parsed_ops.push_back(*single);
    } else {
      parsed_ops = ParseOverlappedOps(rank.name(annotation.name));
    }
    if (parsed_ops.empty()) continue;
    const std::optional<int32_t> step = steps.At(annotation.start);
    if (!step) continue;
    if (!ranges_ready) {
      by_issue = ComputeRanges(rank, rank_index);
      by_start = by_issue;
      std::stable_sort(
          by_start.begin(), by_start.end(),
          [](const ComputeRange& a, const ComputeRange& b) { return a.start < b.start; });
      for (const ComputeRange& range : by_start)
        longest = std::max(longest, range.end - range.start);
      ranges_ready = true;
    }
    std::vector<TimeRange> covered;
    if (annotation.scope == AnnotationScope::kGpu) {
      // Kernels overlapping the range; none starting before start - longest can reach into it.
      auto it = std::lower_bound(
          by_start.begin(), by_start.end(), SaturatingAdd(annotation.start, -longest),
          [](const ComputeRange& range, TimeNs t) { return range.start < t; });
      for (; it != by_start.end() && it->start < annotation.end; ++it) {
        if (it->end <= annotation.start) continue;
        if (annotation.device >= 0 && it->device >= 0 && it->device != annotation.device) continue;
        covered.push_back(TimeRange{it->start, it->end});
      }
    } else {
      // The compute this range issued: launches (or CPU ops) starting inside it.
      auto it =
          std::lower_bound(by_issue.begin(), by_issue.end(), annotation.start,
                           [](const ComputeRange& range, TimeNs t) { return range.issue < t; });
      for (; it != by_issue.end() && it->issue < annotation.end; ++it) {
        covered.push_back(TimeRange{it->start, it->end});
      }
    }
    const IntervalSet compute = IntervalSet::FromRanges(std::move(covered));
    for (const ParsedOpName& parsed : parsed_ops) {
      PipelineOp op;
      op.rank = rank.rank;
      op.step = *step;
      op.type = parsed.type;
      op.input_grad_only = parsed.input_grad_only;
      op.virtual_stage = parsed.virtual_stage;
      op.microbatch = parsed.microbatch;
      op.start = annotation.start;
      op.compute_ns = compute.Length();
      op.compute_start = compute.Start();
      op.compute_end = compute.End();
      op.overlapped = parsed_ops.size() > 1;
      ops.push_back(op);
    }
  }
  // torch's ScheduleGPipe in eval mode still opens "Backward {mb}" for the backwards it skips.
  // When no backward or weight-gradient range of the rank covers any compute while its forwards
  // do, the rank ran no backward at all: those ranges are no ops (an inference pass). One empty
  // backward among real ones is an op (the first stage's input gradient in zero-bubble runs).
  const auto is_backward_work = [](const PipelineOp& op) { return op.type != OpType::kForward; };
  const bool any_backward = std::any_of(ops.begin(), ops.end(), is_backward_work);
  const bool backward_compute = std::any_of(ops.begin(), ops.end(), [&](const PipelineOp& op) {
    return is_backward_work(op) && op.compute_ns > 0;
  });
  const bool forward_compute = std::any_of(ops.begin(), ops.end(), [&](const PipelineOp& op) {
    return !is_backward_work(op) && op.compute_ns > 0;
  });
  if (any_backward && !backward_compute && forward_compute) std::erase_if(ops, is_backward_work);
  return ops;
}

}  // namespace bubblescope::pipeline
