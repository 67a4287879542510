#include "pipeline/issued_items.h"

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "analysis/interval_set.h"

namespace bubblescope::pipeline {
namespace {

constexpr std::string_view kAutogradPrefix = "autograd::engine::evaluate_function";
constexpr std::string_view kOptimizerPrefix = "Optimizer.";

PhaseHint KernelHint(std::string_view name) {
  const std::string lower = absl::AsciiStrToLower(absl::string_view(name.data(), name.size()));
  if (absl::StrContains(lower, "weight_grad") || absl::StrContains(lower, "wgrad")) {
    return PhaseHint::kWeightGrad;
  }
  if (absl::StrContains(lower, "backward") || absl::StrContains(lower, "bwd")) {
    return PhaseHint::kBackward;
  }
  return PhaseHint::kNone;
}

PhaseHint CpuOpHint(std::string_view name) {
  return name.substr(0, kAutogradPrefix.size()) == kAutogradPrefix ? PhaseHint::kBackward
                                                                    : PhaseHint::kNone;
}

// Time covered by the rank's `Optimizer.*` CPU ranges.
IntervalSet OptimizerRanges(const Rank& rank) {
  std::vector<TimeRange> ranges;
  for (const Annotation& annotation : rank.annotations) {
    if (annotation.scope != AnnotationScope::kCpu) continue;
    if (rank.name(annotation.name).substr(0, kOptimizerPrefix.size()) != kOptimizerPrefix) {
      continue;
    }
    ranges.push_back(TimeRange{annotation.start, annotation.end});
  }
  return IntervalSet::FromRanges(std::move(ranges));
}

ItemKind CommItemKind(const CommInfo* info, bool* is_p2p) {
  *is_p2p = info != nullptr && (info->kind == CommKind::kSend || info->kind == CommKind::kRecv);
  return *is_p2p && info->kind == CommKind::kSend ? ItemKind::kSend : ItemKind::kRecv;
}

// The top-level ops of one CPU thread, in (start, longer first) order.
std::vector<const Interval*> TopLevelOps(const Timeline& timeline) {
  std::vector<const Interval*> ops;
  for (const Interval& interval : timeline.intervals) {
    if (interval.kind == IntervalKind::kCpuOp || interval.kind == IntervalKind::kCpuCommOp) {
      ops.push_back(&interval);
    }
  }
  std::stable_sort(ops.begin(), ops.end(), [](const Interval* a, const Interval* b) {
    return a->start != b->start ? a->start < b->start : a->end > b->end;
  });
  std::vector<const Interval*> top;
  TimeNs furthest_end = 0;
  for (const Interval* op : ops) {
    if (!top.empty() && op->end <= furthest_end) continue;  // nested in an earlier op
    top.push_back(op);
    furthest_end = std::max(furthest_end, op->end);
  }
  return top;
}

// The CPU thread that runs the model: the one whose top-level ops cover the most time.
std::vector<const Interval*> ModelThreadOps(const Rank& rank) {
  std::vector<const Interval*> best;
  TimeNs best_length = -1;
  for (const Timeline& timeline : rank.timelines) {
    if (timeline.kind != TimelineKind::kCpuThread) continue;
    std::vector<const Interval*> top = TopLevelOps(timeline);
    if (top.empty()) continue;
    std::vector<TimeRange> ranges;
    for (const Interval* op : top) ranges.push_back(TimeRange{op->start, op->end});
    TimeNs length = IntervalSet::FromRanges(std::move(ranges)).Length();
    if (length > best_length) {
      best = std::move(top);
      best_length = length;
    }
  }
  return best;
}

struct Launch {
  TimeNs start = 0;
  bool in_autograd = false;  // issued from inside an autograd engine op: backward work
};

// Every kernel launch of the rank by correlation id. PyTorch runs backward on autograd engine
// threads, inside `autograd::engine::evaluate_function: ...` ops, whatever the kernels are named.
absl::flat_hash_map<int64_t, Launch> Launches(const Rank& rank) {
  absl::flat_hash_map<int64_t, Launch> launches;
  for (const Timeline& timeline : rank.timelines) {
    if (timeline.kind != TimelineKind::kCpuThread) continue;
    std::vector<TimeRange> autograd;
    for (const Interval& interval : timeline.intervals) {
      if (interval.kind == IntervalKind::kCpuOp &&
          CpuOpHint(rank.name(interval.name)) == PhaseHint::kBackward) {
        autograd.push_back(TimeRange{interval.start, interval.end});
      }
    }
    const IntervalSet autograd_time = IntervalSet::FromRanges(std::move(autograd));
    for (const Interval& interval : timeline.intervals) {
      if (interval.kind == IntervalKind::kRuntime && interval.correlation != 0) {
        launches.emplace(interval.correlation,
                         Launch{interval.start, autograd_time.Contains(interval.start)});
      }
    }
  }
  return launches;
}

void BuildGpuItems(const Rank& rank, const StepMap& steps, const IntervalSet& excluded,
                   IssuedTimeline* out) {
  const absl::flat_hash_map<int64_t, Launch> launches = Launches(rank);
  for (const Timeline& timeline : rank.timelines) {
    if (timeline.kind != TimelineKind::kGpuStream) continue;
    for (const Interval& interval : timeline.intervals) {
      IssuedItem item;
      if (interval.kind == IntervalKind::kComputeKernel) {
        item.kind = ItemKind::kCompute;
        item.hint = KernelHint(rank.name(interval.name));
      } else if (interval.kind == IntervalKind::kCommKernel) {
        bool is_p2p = false;
        const CommInfo* info = rank.comm(interval);
        item.kind = CommItemKind(info, &is_p2p);
        if (!is_p2p) continue;
        item.peer = info->peer;
        item.bytes = info->bytes;
      } else {
        continue;
      }
      auto launch = launches.find(interval.correlation);
      item.name = interval.name;
      item.issue = launch == launches.end() ? interval.start : launch->second.start;
      if (item.kind == ItemKind::kCompute && item.hint == PhaseHint::kNone &&
          launch != launches.end() && launch->second.in_autograd) {
        item.hint = PhaseHint::kBackward;
      }
      if (excluded.Contains(item.issue)) continue;
      const std::optional<int32_t> step = steps.At(item.issue);
      if (!step) continue;
      item.start = interval.start;
      item.end = interval.end;
      item.step = *step;
      out->items.push_back(item);
    }
  }
}

// When a CPU transfer really finished. gloo's c10d::send / c10d::recv_ op only posts the
// transfer; the `gloo:send` / `gloo:recv` range that starts inside it lasts until the transfer
// completes (and may end long after the op).
TimeNs TransferEnd(const Rank& rank, const Interval& op) {
  TimeNs end = op.end;
  auto it = std::lower_bound(
      rank.annotations.begin(), rank.annotations.end(), op.start,
      [](const Annotation& annotation, TimeNs t) { return annotation.start < t; });
  for (; it != rank.annotations.end() && it->start <= op.end; ++it) {
    std::string_view name = rank.name(it->name);
    if (it->scope == AnnotationScope::kCpu &&
        (name.substr(0, 5) == "gloo:" || name.substr(0, 5) == "nccl:")) {
      end = std::max(end, it->end);
    }
  }
  return end;
}

void BuildCpuItems(const Rank& rank, const StepMap& steps, const IntervalSet& excluded,
                   IssuedTimeline* out) {
  for (const Interval* op : ModelThreadOps(rank)) {
    if (excluded.Contains(op->start)) continue;
    const std::optional<int32_t> step = steps.At(op->start);
    if (!step) continue;
    IssuedItem item;
    if (op->kind == IntervalKind::kCpuCommOp) {
      bool is_p2p = false;
      const CommInfo* info = rank.comm(*op);
      item.kind = CommItemKind(info, &is_p2p);
      if (!is_p2p) continue;
      item.peer = info->peer;
      item.bytes = info->bytes;
    } else {
      item.kind = ItemKind::kCompute;
      item.hint = CpuOpHint(rank.name(op->name));
    }
    item.name = op->name;
    item.issue = op->start;
    item.start = op->start;
    item.end = item.kind == ItemKind::kCompute ? op->end : TransferEnd(rank, *op);
    item.step = *step;
    out->items.push_back(item);
  }
}

}  // namespace

IssuedTimeline BuildIssuedTimeline(const Rank& rank, const StepMap& steps) {
  IssuedTimeline out;
  out.rank = rank.rank;
  out.cpu_only = !rank.HasGpuActivity();
  const IntervalSet excluded = OptimizerRanges(rank);
  if (out.cpu_only) {
    BuildCpuItems(rank, steps, excluded, &out);
  } else {
    BuildGpuItems(rank, steps, excluded, &out);
  }
  std::stable_sort(out.items.begin(), out.items.end(),
                   [](const IssuedItem& a, const IssuedItem& b) { return a.issue < b.issue; });
  return out;
}

std::vector<ComputeRange> ComputeRanges(const Rank& rank) {
  std::vector<ComputeRange> ranges;
  if (!rank.HasGpuActivity()) {
    for (const Interval* op : ModelThreadOps(rank)) {
      if (op->kind == IntervalKind::kCpuOp) ranges.push_back({op->start, op->start, op->end, -1});
    }
    return ranges;
  }
  const absl::flat_hash_map<int64_t, Launch> launches = Launches(rank);
  for (const Timeline& timeline : rank.timelines) {
    if (timeline.kind != TimelineKind::kGpuStream) continue;
    for (const Interval& interval : timeline.intervals) {
      if (interval.kind != IntervalKind::kComputeKernel) continue;
      auto launch = launches.find(interval.correlation);
      TimeNs issue = launch == launches.end() ? interval.start : launch->second.start;
      ranges.push_back({issue, interval.start, interval.end, timeline.device});
    }
  }
  return ranges;
}

}  // namespace bubblescope::pipeline
