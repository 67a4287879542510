#include "index/digest_reduction.h"

#include <cstdint>
#include <utility>
#include <vector>

#include "bubblescope/op_names.h"
#include "common/interval_set.h"
#include "common/unwinding_hash.h"
#include "index/rank_index.h"
#include "index/recompute_regions.h"

namespace bubblescope::index {
namespace {

// Per timeline, per interval: whether the digest keeps it.
using KeepMask = std::vector<std::vector<bool>>;

// The time a thread spends inside CPU communication scopes: its communication ops and its
// nccl:* / gloo:* / c10d ranges (the scopes rank_index.cc reads around a launch).
IntervalSet CommScopes(const Rank& rank, const Timeline& thread) {
  std::vector<TimeRange> ranges;
  for (const Interval& interval : thread.intervals) {
    if (interval.kind == IntervalKind::kCpuCommOp) ranges.push_back({interval.start, interval.end});
  }
  for (const Annotation& annotation : rank.annotations) {
    if (annotation.scope == AnnotationScope::kCpu && annotation.thread_or_stream == thread.id &&
        op_names::CpuCommOpKind(rank.name(annotation.name)).has_value()) {
      ranges.push_back({annotation.start, annotation.end});
    }
  }
  return IntervalSet::FromRanges(std::move(ranges));
}

std::vector<bool> KeepOnGpuRankThread(const Rank& rank, const Timeline& thread,
                                      const UnwindingHashSet<int64_t>& device_correlations) {
  const IntervalSet scopes = CommScopes(rank, thread);
  std::vector<bool> keep(thread.intervals.size(), false);
  for (size_t i = 0; i < thread.intervals.size(); ++i) {
    const Interval& interval = thread.intervals[i];
    switch (interval.kind) {
      case IntervalKind::kCpuCommOp:
        keep[i] = true;
        break;
      case IntervalKind::kRuntime:
        keep[i] =
            interval.correlation != 0 &&
            (device_correlations.contains(interval.correlation) || scopes.Contains(interval.start));
        break;
      case IntervalKind::kCpuOp:
        keep[i] = DecidesRecompute(rank.name(interval.name));
        break;
      default:  // device kinds on a CPU thread: no reader puts them there; kept as they are
        keep[i] = true;
        break;
    }
  }
  return keep;
}

std::vector<bool> KeepOnCpuRankThread(const Rank& rank, const Timeline& thread) {
  std::vector<bool> keep(thread.intervals.size(), false);
  for (uint32_t i : TopLevelCpuOps(thread)) keep[i] = true;
  for (size_t i = 0; i < thread.intervals.size(); ++i) {
    const Interval& interval = thread.intervals[i];
    if (interval.kind == IntervalKind::kCpuCommOp || IsDeviceKind(interval.kind) ||
        (interval.kind == IntervalKind::kCpuOp && DecidesRecompute(rank.name(interval.name)))) {
      keep[i] = true;
    }
  }
  return keep;
}

bool SameRanges(const std::vector<TimeRange>& a, const std::vector<TimeRange>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].start != b[i].start || a[i].end != b[i].end) return false;
  }
  return true;
}

// Where dropping a thread's other CPU ops would change its recompute regions, keeps them all.
void KeepRecomputeNesting(const Rank& rank, const Timeline& thread, std::vector<bool>* keep) {
  Timeline kept{thread.kind, thread.device, thread.pid, thread.id, {}};
  for (size_t i = 0; i < thread.intervals.size(); ++i) {
    if ((*keep)[i]) kept.intervals.push_back(thread.intervals[i]);
  }
  if (SameRanges(RecomputeRegions(rank, thread), RecomputeRegions(rank, kept))) return;
  for (size_t i = 0; i < thread.intervals.size(); ++i) {
    if (thread.intervals[i].kind == IntervalKind::kCpuOp) (*keep)[i] = true;
  }
}

KeepMask ChooseIntervals(const Rank& rank) {
  KeepMask keep(rank.timelines.size());
  const bool gpu = rank.HasGpuActivity();
  UnwindingHashSet<int64_t> device_correlations;
  for (const Timeline& timeline : rank.timelines) {
    if (timeline.kind != TimelineKind::kGpuStream) continue;
    for (const Interval& interval : timeline.intervals) {
      if (IsDeviceKind(interval.kind) && interval.correlation != 0) {
        device_correlations.insert(interval.correlation);
      }
    }
  }
  for (size_t t = 0; t < rank.timelines.size(); ++t) {
    const Timeline& timeline = rank.timelines[t];
    if (timeline.kind == TimelineKind::kGpuStream) {
      keep[t].assign(timeline.intervals.size(), true);
    } else {
      keep[t] = gpu ? KeepOnGpuRankThread(rank, timeline, device_correlations)
                    : KeepOnCpuRankThread(rank, timeline);
    }
  }
  // The earliest interval (each timeline's first, by start): where the rank's clock starts.
  size_t earliest = rank.timelines.size();
  for (size_t t = 0; t < rank.timelines.size(); ++t) {
    if (rank.timelines[t].intervals.empty()) continue;
    if (earliest == rank.timelines.size() || rank.timelines[t].intervals.front().start <
                                                 rank.timelines[earliest].intervals.front().start) {
      earliest = t;
    }
  }
  if (earliest < rank.timelines.size()) keep[earliest][0] = true;
  for (size_t t = 0; t < rank.timelines.size(); ++t) {
    if (rank.timelines[t].kind == TimelineKind::kCpuThread) {
      KeepRecomputeNesting(rank, rank.timelines[t], &keep[t]);
    }
  }
  return keep;
}

// The rank with only the kept intervals, and the names and communication records they (and
// everything else kept) refer to, renumbered in their order.
Rank CopyKept(const Rank& rank, const KeepMask& keep) {
  std::vector<bool> comm_used(rank.comms.size(), false);
  std::vector<bool> name_used(rank.names.size(), false);
  for (size_t t = 0; t < rank.timelines.size(); ++t) {
    const std::vector<Interval>& intervals = rank.timelines[t].intervals;
    for (size_t i = 0; i < intervals.size(); ++i) {
      if (!keep[t][i]) continue;
      name_used[intervals[i].name] = true;
      if (intervals[i].comm != kNoIndex) comm_used[intervals[i].comm] = true;
    }
  }
  for (size_t c = 0; c < rank.comms.size(); ++c) {
    if (!comm_used[c]) continue;
    name_used[rank.comms[c].collective] = true;
    name_used[rank.comms[c].dtype] = true;
  }
  for (const Annotation& annotation : rank.annotations) name_used[annotation.name] = true;

  Rank out = RankHeader(rank);
  std::vector<NameId> new_name(rank.names.size(), kNoName);
  for (size_t id = 1; id < rank.names.size(); ++id) {
    if (name_used[id]) new_name[id] = out.names.Intern(rank.name(static_cast<NameId>(id)));
  }
  std::vector<uint32_t> new_comm(rank.comms.size(), kNoIndex);
  for (size_t c = 0; c < rank.comms.size(); ++c) {
    if (!comm_used[c]) continue;
    new_comm[c] = static_cast<uint32_t>(out.comms.size());
    CommInfo comm = rank.comms[c];
    comm.collective = new_name[comm.collective];
    comm.dtype = new_name[comm.dtype];
    out.comms.push_back(comm);
  }
  for (size_t t = 0; t < rank.timelines.size(); ++t) {
    const Timeline& timeline = rank.timelines[t];
    Timeline copy{timeline.kind, timeline.device, timeline.pid, timeline.id, {}};
    for (size_t i = 0; i < timeline.intervals.size(); ++i) {
      if (!keep[t][i]) continue;
      Interval interval = timeline.intervals[i];
      interval.name = new_name[interval.name];
      if (interval.comm != kNoIndex) interval.comm = new_comm[interval.comm];
      copy.intervals.push_back(interval);
    }
    out.timelines.push_back(std::move(copy));
  }
  out.annotations = rank.annotations;
  for (Annotation& annotation : out.annotations) annotation.name = new_name[annotation.name];
  out.steps = rank.steps;
  out.memory = rank.memory;
  return out;
}

bool SameOp(const Rank& a_rank, const DeviceOp& a, const Rank& b_rank, const DeviceOp& b) {
  // The interval index differs where a CPU rank's model thread lost nested ops; the op's own
  // times, name and facts are what the analyses read.
  return a.issue == b.issue && a.start == b.start && a.end == b.end &&
         a.transfer_end == b.transfer_end && a.bytes == b.bytes && a.correlation == b.correlation &&
         a.timeline == b.timeline && a_rank.name(a.name) == b_rank.name(b.name) &&
         a.peer == b.peer && a.comm == b.comm && a.group == b.group &&
         a.process_group == b.process_group && a.op_class == b.op_class && a.hint == b.hint &&
         a.launched == b.launched && a.in_optimizer == b.in_optimizer &&
         a.recompute == b.recompute && a.batched == b.batched && a.batch_index == b.batch_index;
}

bool SameIndex(const Rank& full, const Rank& reduced) {
  const RankIndex a = BuildRank(full);
  const RankIndex b = BuildRank(reduced);
  if (a.device != b.device || a.model_thread != b.model_thread ||
      a.recompute_ns != b.recompute_ns || a.ops.size() != b.ops.size() ||
      a.issue_order != b.issue_order || a.mirrored_annotation != b.mirrored_annotation) {
    return false;
  }
  for (size_t i = 0; i < a.ops.size(); ++i) {
    if (!SameOp(full, a.ops[i], reduced, b.ops[i])) return false;
  }
  return true;
}

}  // namespace

Reduction ReduceForDigest(const Rank& rank) {
  Reduction result{CopyKept(rank, ChooseIntervals(rank)), true};
  if (!SameIndex(rank, result.rank)) {
    KeepMask all(rank.timelines.size());
    for (size_t t = 0; t < rank.timelines.size(); ++t) {
      all[t].assign(rank.timelines[t].intervals.size(), true);
    }
    result = Reduction{CopyKept(rank, all), false};
  }
  return result;
}

}  // namespace bubblescope::index
