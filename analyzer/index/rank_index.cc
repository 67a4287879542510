#include "index/rank_index.h"

#include <algorithm>
#include <iterator>
#include <numeric>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "bubblescope/op_names.h"
#include "bubblescope/rank_finish.h"
#include "common/interval_set.h"
#include "common/parallel_for.h"
#include "common/unwinding_hash.h"
#include "index/recompute_regions.h"

namespace bubblescope::index {
namespace {

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

bool IsAutogradOp(std::string_view name) { return name.starts_with(op_names::kAutogradNodePrefix); }

// Time covered by the rank's `Optimizer.*` CPU ranges.
IntervalSet OptimizerRanges(const Rank& rank) {
  std::vector<TimeRange> ranges;
  for (const Annotation& annotation : rank.annotations) {
    if (annotation.scope != AnnotationScope::kCpu) continue;
    if (!rank.name(annotation.name).starts_with(kOptimizerPrefix)) continue;
    ranges.push_back(TimeRange{annotation.start, annotation.end});
  }
  return IntervalSet::FromRanges(std::move(ranges));
}

// A CPU communication scope on one thread: an operator or a "nccl:*" / "gloo:*" range.
struct Scope {
  TimeNs start = 0;
  TimeNs end = 0;
  CommKind kind = CommKind::kUnknown;
  int32_t peer = -1;
  int64_t bytes = -1;
};

// A transfer queued for a batch kernel (see rank_index.h) is the send / recv scope that queued
// it, with what nested scopes added.
using QueuedTransfer = Scope;

// The communication scopes of one CPU thread, by start, longer first.
std::vector<Scope> ScopesOf(const Rank& rank, const Timeline& thread) {
  std::vector<Scope> scopes;
  for (const Interval& interval : thread.intervals) {
    if (interval.kind != IntervalKind::kCpuCommOp) continue;
    const CommInfo* info = rank.comm(interval);
    scopes.push_back(Scope{interval.start, interval.end,
                           info != nullptr ? info->kind : CommKind::kUnknown,
                           info != nullptr ? info->peer : -1, info != nullptr ? info->bytes : -1});
  }
  for (const Annotation& annotation : rank.annotations) {
    if (annotation.scope != AnnotationScope::kCpu || annotation.thread_or_stream != thread.id) {
      continue;
    }
    const std::optional<CommKind> kind = op_names::CpuCommOpKind(rank.name(annotation.name));
    if (kind.has_value()) scopes.push_back(Scope{annotation.start, annotation.end, *kind, -1});
  }
  std::stable_sort(scopes.begin(), scopes.end(), [](const Scope& a, const Scope& b) {
    return StartsEarlierOrIsLonger(a.start, a.end, b.start, b.end);
  });
  return scopes;
}

// Scopes that say what a kernel NCCL runs as SendRecv really is: a send, a receive, an
// all-to-all (NCCL implements it as grouped sends and receives), and since NCCL 2.1x any
// collective, whose generic ncclKernel_SendRecv_* kernels run under nccl:all_reduce,
// nccl:_reduce_scatter_base and the like. Only a scope that names nothing (nccl:coalesced,
// record_param_comms without args) or is itself a SendRecv leaves the kernel undirected.
bool ResolvesSendRecv(CommKind kind) {
  return kind != CommKind::kUnknown && kind != CommKind::kSendRecv;
}

// Everything known about one launch record.
struct Launch {
  TimeNs start = 0;
  bool in_autograd = false;   // issued from inside an autograd engine op: backward work
  bool in_recompute = false;  // issued while recomputing a checkpointed forward
  uint32_t thread = 0;        // index into Rank::timelines of the launching CPU thread
  // The innermost CPU scope around the launch that resolves a SendRecv kernel (c10d::send,
  // nccl:recv, nccl:all_to_all, nccl:all_reduce, ...), if any.
  CommKind scope_kind = CommKind::kUnknown;
  int32_t scope_peer = -1;
  // A communication launch outside any such scope: the transfers queued for it, if any.
  std::vector<QueuedTransfer> batch;
};

bool IsP2pKind(CommKind kind) { return kind == CommKind::kSend || kind == CommKind::kRecv; }

// The transfers queued by scopes[from, to) before a launch at `launch_start`: send / recv scopes
// that ended by then and held no launch, a scope nested in the previous one filling in what
// that one did not record.
std::vector<QueuedTransfer> QueuedBefore(const std::vector<Scope>& scopes,
                                         const std::vector<bool>& held_launch, size_t from,
                                         size_t to, TimeNs launch_start) {
  std::vector<QueuedTransfer> batch;
  for (size_t i = from; i < to; ++i) {
    const Scope& scope = scopes[i];
    if (!IsP2pKind(scope.kind) || held_launch[i] || scope.end > launch_start) continue;
    if (!batch.empty() && scope.start >= batch.back().start && scope.end <= batch.back().end &&
        scope.kind == batch.back().kind) {
      QueuedTransfer& outer = batch.back();
      if (outer.peer < 0) outer.peer = scope.peer;
      if (outer.bytes < 0) outer.bytes = scope.bytes;
      continue;
    }
    batch.push_back(scope);
  }
  return batch;
}

// Correlation ids of the rank's communication kernels that do not say where they send.
UnwindingHashSet<int64_t> UndirectedCommLaunches(const Rank& rank) {
  UnwindingHashSet<int64_t> ids;
  for (const Timeline& timeline : rank.timelines) {
    if (timeline.kind != TimelineKind::kGpuStream) continue;
    for (const Interval& interval : timeline.intervals) {
      if (interval.kind != IntervalKind::kCommKernel || interval.correlation == 0) continue;
      const CommInfo* info = rank.comm(interval);
      if (info == nullptr || info->kind == CommKind::kSendRecv ||
          info->kind == CommKind::kUnknown) {
        ids.insert(interval.correlation);
      }
    }
  }
  return ids;
}

// Every launch of the rank by correlation id (the first record of an id wins).
UnwindingHashMap<int64_t, Launch> Launches(const Rank& rank) {
  const UnwindingHashSet<int64_t> undirected = UndirectedCommLaunches(rank);
  UnwindingHashMap<int64_t, Launch> launches;
  for (const Timeline& thread : rank.timelines) {
    if (thread.kind != TimelineKind::kCpuThread) continue;
    const auto thread_index = static_cast<uint32_t>(&thread - rank.timelines.data());
    std::vector<TimeRange> autograd;
    bool any_launch = false;
    for (const Interval& interval : thread.intervals) {
      if (interval.kind == IntervalKind::kCpuOp && IsAutogradOp(rank.name(interval.name))) {
        autograd.push_back(TimeRange{interval.start, interval.end});
      }
      any_launch |= interval.kind == IntervalKind::kRuntime && interval.correlation != 0;
    }
    if (!any_launch) continue;
    const IntervalSet autograd_time = IntervalSet::FromRanges(std::move(autograd));
    const IntervalSet recompute_time = IntervalSet::FromRanges(RecomputeRegions(rank, thread));
    const std::vector<Scope> scopes = ScopesOf(rank, thread);
    // Intervals are sorted by start, so one sweep keeps the scopes open around each launch
    // (innermost last).
    std::vector<size_t> open;  // indices into scopes
    std::vector<bool> held_launch(scopes.size(), false);
    size_t next_scope = 0;
    size_t batch_from = 0;  // scopes from here began after the last communication launch
    for (const Interval& interval : thread.intervals) {
      if (interval.kind != IntervalKind::kRuntime || interval.correlation == 0) continue;
      for (; next_scope < scopes.size() && scopes[next_scope].start <= interval.start;
           ++next_scope) {
        open.push_back(next_scope);
      }
      std::erase_if(open, [&](size_t scope) { return scopes[scope].end <= interval.start; });
      for (size_t scope : open) held_launch[scope] = true;
      Launch launch;
      launch.start = interval.start;
      launch.in_autograd = autograd_time.Contains(interval.start);
      launch.in_recompute = recompute_time.Contains(interval.start);
      launch.thread = thread_index;
      // The innermost scope that names what an undirected kernel does; scopes naming nothing
      // (record_param_comms without args, nccl:coalesced) are looked through.
      for (auto scope = open.rbegin(); scope != open.rend(); ++scope) {
        if (ResolvesSendRecv(scopes[*scope].kind)) {
          launch.scope_kind = scopes[*scope].kind;
          launch.scope_peer = scopes[*scope].peer;
          break;
        }
      }
      if (undirected.contains(interval.correlation)) {
        if (launch.scope_kind == CommKind::kUnknown) {
          launch.batch = QueuedBefore(scopes, held_launch, batch_from, next_scope, interval.start);
        }
        batch_from = next_scope;
      }
      launches.emplace(interval.correlation, std::move(launch));
    }
  }
  return launches;
}

OpClass GpuClass(IntervalKind kind) {
  switch (kind) {
    case IntervalKind::kComputeKernel:
      return OpClass::kCompute;
    case IntervalKind::kCommKernel:
      return OpClass::kComm;
    default:
      return OpClass::kCopy;
  }
}

void FillComm(const CommInfo* info, const RankIndex& index, DeviceOp* op) {
  if (info == nullptr) return;
  op->comm = info->kind;
  op->peer = info->peer;
  op->bytes = info->bytes;
  if (info->process_group < index.groups.size()) {
    op->process_group = info->process_group;
    op->group = AppliedRole(index.groups[info->process_group]);
  }
}

// The group of each collective kernel without one, from the collectives on its stream that
// record theirs (see the header): only where they all record the same group.
void GroupsFromStreams(RankIndex* index) {
  constexpr uint32_t kSeveral = kNoIndex - 1;
  std::unordered_map<uint32_t, uint32_t> group_of_stream;  // timeline -> group, or kSeveral
  for (const DeviceOp& op : index->ops) {
    if (op.op_class != OpClass::kComm || !IsCollective(op.comm) || op.process_group == kNoIndex) {
      continue;
    }
    const auto [at, inserted] = group_of_stream.emplace(op.timeline, op.process_group);
    if (!inserted && at->second != op.process_group) at->second = kSeveral;
  }
  if (group_of_stream.empty()) return;
  for (DeviceOp& op : index->ops) {
    if (op.op_class != OpClass::kComm || !IsCollective(op.comm) || op.process_group != kNoIndex) {
      continue;
    }
    const auto found = group_of_stream.find(op.timeline);
    if (found == group_of_stream.end() || found->second == kSeveral) continue;
    op.process_group = found->second;
    op.group = AppliedRole(index->groups[found->second]);
  }
}

// One op per transfer of a batch kernel, each with the kernel's times.
void AddBatch(const DeviceOp& kernel, const std::vector<QueuedTransfer>& batch, RankIndex* index) {
  for (size_t k = 0; k < batch.size(); ++k) {
    DeviceOp op = kernel;
    op.comm = batch[k].kind;
    if (op.peer < 0) op.peer = batch[k].peer;
    if (op.bytes < 0 || batch.size() > 1) op.bytes = batch[k].bytes;
    op.batched = batch.size() > 1;
    op.batch_index = static_cast<uint32_t>(k);
    index->ops.push_back(op);
  }
}

// torch runs a GPU job's backward on its autograd engine's own thread, so when compute is launched
// from several CPU threads, the ones other than the thread that launched the rank's first
// compute (a forward: every schedule starts with one) are backward work. `compute_launches`
// holds (index into index->ops, launching thread) of the launched compute ops.
void HintBackwardThreads(const std::vector<std::pair<size_t, uint32_t>>& compute_launches,
                         RankIndex* index) {
  const std::pair<size_t, uint32_t>* first = nullptr;
  for (const auto& launch : compute_launches) {
    const DeviceOp& op = index->ops[launch.first];
    if (op.in_optimizer) continue;
    if (first == nullptr || op.issue < index->ops[first->first].issue) first = &launch;
  }
  if (first == nullptr) return;
  const uint32_t forward_thread = first->second;
  for (const auto& [op_index, thread] : compute_launches) {
    DeviceOp& op = index->ops[op_index];
    if (thread != forward_thread && !op.in_optimizer && op.hint == PhaseHint::kNone) {
      op.hint = PhaseHint::kBackward;
    }
  }
}

void CollectGpu(const Rank& rank, const IntervalSet& optimizer, RankIndex* index) {
  const UnwindingHashMap<int64_t, Launch> launches = Launches(rank);
  std::vector<std::pair<size_t, uint32_t>> compute_launches;
  for (size_t t = 0; t < rank.timelines.size(); ++t) {
    const Timeline& timeline = rank.timelines[t];
    if (timeline.kind != TimelineKind::kGpuStream) continue;
    for (size_t i = 0; i < timeline.intervals.size(); ++i) {
      const Interval& interval = timeline.intervals[i];
      if (!IsDeviceKind(interval.kind)) continue;
      DeviceOp op;
      op.start = interval.start;
      op.end = interval.end;
      op.transfer_end = interval.end;
      op.timeline = static_cast<uint32_t>(t);
      op.interval = static_cast<uint32_t>(i);
      op.name = interval.name;
      op.op_class = GpuClass(interval.kind);
      const auto launch =
          interval.correlation == 0 ? launches.end() : launches.find(interval.correlation);
      op.launched = launch != launches.end();
      op.issue = op.launched ? launch->second.start : interval.start;
      if (op.launched) op.correlation = interval.correlation;
      if (op.op_class == OpClass::kCompute) {
        op.recompute = op.launched && launch->second.in_recompute;
        op.hint = KernelHint(rank.name(interval.name));
        if (op.hint == PhaseHint::kNone && op.launched && launch->second.in_autograd) {
          op.hint = PhaseHint::kBackward;
        }
      } else if (op.op_class == OpClass::kComm) {
        FillComm(rank.comm(interval), *index, &op);
        const bool undirected = op.comm == CommKind::kSendRecv || op.comm == CommKind::kUnknown;
        if (interval.comm != kNoIndex && undirected && op.launched &&
            launch->second.scope_kind != CommKind::kUnknown) {
          op.comm = launch->second.scope_kind;
          if (op.peer < 0) op.peer = launch->second.scope_peer;
        } else if (interval.comm != kNoIndex && undirected && op.launched &&
                   !launch->second.batch.empty()) {
          op.in_optimizer = optimizer.Contains(op.issue);
          AddBatch(op, launch->second.batch, index);
          continue;
        }
      }
      op.in_optimizer = optimizer.Contains(op.issue);
      if (op.op_class == OpClass::kCompute && op.launched) {
        compute_launches.emplace_back(index->ops.size(), launch->second.thread);
      }
      index->ops.push_back(op);
    }
  }
  HintBackwardThreads(compute_launches, index);
}

// The top-level CPU ops of one thread (indices into its intervals) and the time they cover.
struct TopLevelOps {
  std::vector<uint32_t> ops;
  TimeNs covered = 0;
};

TopLevelOps CollectTopLevel(const Timeline& timeline) {
  std::vector<uint32_t> ops;
  for (size_t i = 0; i < timeline.intervals.size(); ++i) {
    const IntervalKind kind = timeline.intervals[i].kind;
    if (kind == IntervalKind::kCpuOp || kind == IntervalKind::kCpuCommOp) {
      ops.push_back(static_cast<uint32_t>(i));
    }
  }
  // Nesting is decided in (start ascending, longer first) order; the model keeps intervals that
  // way, but the check is cheap and keeps this correct for any input.
  const auto earlier = [&timeline](uint32_t a, uint32_t b) {
    const Interval& x = timeline.intervals[a];
    const Interval& y = timeline.intervals[b];
    return StartsEarlierOrIsLonger(x.start, x.end, y.start, y.end);
  };
  if (!std::is_sorted(ops.begin(), ops.end(), earlier)) {
    std::stable_sort(ops.begin(), ops.end(), earlier);
  }
  // In that order an op lies inside an earlier one exactly when it ends no later than the
  // furthest end seen so far: the op reaching that end starts no later and ends no earlier.
  TopLevelOps result;
  std::vector<TimeRange> ranges;
  TimeNs furthest_end = 0;
  for (uint32_t i : ops) {
    const Interval& op = timeline.intervals[i];
    if (!result.ops.empty() && op.end <= furthest_end) continue;
    furthest_end = result.ops.empty() ? op.end : std::max(furthest_end, op.end);
    result.ops.push_back(i);
    ranges.push_back({op.start, op.end});
  }
  result.covered = IntervalSet::FromRanges(std::move(ranges)).Length();
  return result;
}

// When a CPU transfer really finished: the latest end of a gloo:/nccl: range starting inside it
// on the same thread (gloo's worker threads record ranges of their own, which no op waits in).
TimeNs TransferEnd(const Rank& rank, const Interval& op, int64_t thread) {
  TimeNs end = op.end;
  auto it =
      std::lower_bound(rank.annotations.begin(), rank.annotations.end(), op.start,
                       [](const Annotation& annotation, TimeNs t) { return annotation.start < t; });
  for (; it != rank.annotations.end() && it->start <= op.end; ++it) {
    const std::string_view name = rank.name(it->name);
    if (it->scope == AnnotationScope::kCpu && it->thread_or_stream == thread &&
        (name.starts_with("gloo:") || name.starts_with("nccl:"))) {
      end = std::max(end, it->end);
    }
  }
  return end;
}

void CollectCpu(const Rank& rank, const IntervalSet& optimizer, RankIndex* index) {
  TopLevelOps best;
  for (size_t t = 0; t < rank.timelines.size(); ++t) {
    if (rank.timelines[t].kind != TimelineKind::kCpuThread) continue;
    TopLevelOps ops = CollectTopLevel(rank.timelines[t]);
    if (ops.ops.empty()) continue;
    // Ties keep the earlier thread, so the choice depends on nothing but the input order.
    if (index->model_thread < 0 || ops.covered > best.covered) {
      best = std::move(ops);
      index->model_thread = static_cast<int32_t>(t);
    }
  }
  if (index->model_thread < 0) return;
  const Timeline& thread = rank.timelines[static_cast<size_t>(index->model_thread)];
  // The model thread is the device here: its recomputation time is the regions' own.
  for (const TimeRange& region : RecomputeRegions(rank, thread)) {
    index->recompute_ns += region.end - region.start;
  }
  for (uint32_t i : best.ops) {
    const Interval& interval = thread.intervals[i];
    DeviceOp op;
    op.issue = interval.start;
    op.start = interval.start;
    op.end = interval.end;
    op.transfer_end = interval.end;
    op.timeline = static_cast<uint32_t>(index->model_thread);
    op.interval = i;
    op.name = interval.name;
    if (interval.kind == IntervalKind::kCpuCommOp) {
      op.op_class = OpClass::kComm;
      FillComm(rank.comm(interval), *index, &op);
      // A collective's gloo: range lasts until it completes, as a transfer's does.
      op.transfer_end = TransferEnd(rank, interval, thread.id);
    } else {
      op.op_class = OpClass::kCompute;
      op.hint = IsAutogradOp(rank.name(interval.name)) ? PhaseHint::kBackward : PhaseHint::kNone;
    }
    op.in_optimizer = optimizer.Contains(op.issue);
    index->ops.push_back(op);
  }
}

// Kineto starts a copy 1 ns before its first kernel; an export that rounded times more coarsely
// may put that kernel up to a microsecond before the copy's start.
constexpr TimeNs kMirrorSlackNs = 1000;

std::vector<bool> MirroredAnnotations(const Rank& rank, const RankIndex& index) {
  std::vector<bool> mirrored(rank.annotations.size(), false);
  UnwindingHashMap<NameId, std::vector<TimeRange>> cpu_by_name;
  bool any_gpu = false;
  for (const Annotation& annotation : rank.annotations) {
    if (annotation.scope == AnnotationScope::kCpu) {
      cpu_by_name[annotation.name].push_back(TimeRange{annotation.start, annotation.end});
    } else {
      any_gpu = true;
    }
  }
  if (!any_gpu || cpu_by_name.empty()) return mirrored;
  // Each stream's ops (indices into index.ops), by start: index.ops is sorted by start already.
  UnwindingHashMap<std::pair<int32_t, int64_t>, std::vector<uint32_t>> ops_by_stream;
  for (uint32_t i = 0; i < index.ops.size(); ++i) {
    const Timeline& timeline = rank.timelines[index.ops[i].timeline];
    if (timeline.kind != TimelineKind::kGpuStream) continue;
    ops_by_stream[{timeline.device, timeline.id}].push_back(i);
  }
  for (size_t a = 0; a < rank.annotations.size(); ++a) {
    const Annotation& annotation = rank.annotations[a];
    if (annotation.scope != AnnotationScope::kGpu) continue;
    const auto cpu = cpu_by_name.find(annotation.name);
    if (cpu == cpu_by_name.end()) continue;
    const DeviceOp* first = nullptr;
    const auto stream = ops_by_stream.find({annotation.device, annotation.thread_or_stream});
    if (stream != ops_by_stream.end()) {
      const std::vector<uint32_t>& ops = stream->second;
      auto it = std::lower_bound(ops.begin(), ops.end(), annotation.start,
                                 [&](uint32_t op, TimeNs t) { return index.ops[op].start < t; });
      if (it != ops.end() && index.ops[*it].start < annotation.end) {
        first = &index.ops[*it];
      } else if (it != ops.begin() && index.ops[*std::prev(it)].start >=
                                          SaturatingAdd(annotation.start, -kMirrorSlackNs)) {
        first = &index.ops[*std::prev(it)];
      }
    }
    if (first == nullptr || !first->launched) {
      mirrored[a] = true;  // nothing to check the launch against: the name alone
      continue;
    }
    // The CPU ranges of that name are sorted by start; nested ones of one name are rare, so the
    // few starting last before the launch are enough to look at.
    const std::vector<TimeRange>& ranges = cpu->second;
    auto after = std::upper_bound(ranges.begin(), ranges.end(), first->issue,
                                  [](TimeNs t, const TimeRange& range) { return t < range.start; });
    for (int looked = 0; after != ranges.begin() && looked < 4; ++looked) {
      --after;
      if (after->end >= first->issue) {
        mirrored[a] = true;
        break;
      }
    }
  }
  return mirrored;
}

}  // namespace

std::vector<uint32_t> TopLevelCpuOps(const Timeline& thread) { return CollectTopLevel(thread).ops; }

bool RankIndex::HasP2p() const {
  return std::any_of(ops.begin(), ops.end(),
                     [](const DeviceOp& op) { return op.is_p2p() && !op.in_optimizer; });
}

int32_t TraceIndex::PositionOf(int32_t rank) const {
  for (size_t i = 0; i < ranks.size(); ++i) {
    if (ranks[i].rank == rank) return static_cast<int32_t>(i);
  }
  return -1;
}

RankIndex BuildRank(const Rank& rank) {
  RankIndex index;
  index.rank = rank.rank;
  index.groups = ClassifyGroups(rank);
  index.memory = PeakMemory(rank);
  const IntervalSet optimizer = OptimizerRanges(rank);
  if (rank.HasGpuActivity()) {
    index.device = DeviceKind::kGpu;
    CollectGpu(rank, optimizer, &index);
    GroupsFromStreams(&index);
  } else {
    index.device = DeviceKind::kCpu;
    CollectCpu(rank, optimizer, &index);
  }
  const auto by_start = [](const DeviceOp& a, const DeviceOp& b) {
    return StartsEarlierOrIsLonger(a.start, a.end, b.start, b.end);
  };
  if (!std::is_sorted(index.ops.begin(), index.ops.end(), by_start)) {
    std::stable_sort(index.ops.begin(), index.ops.end(), by_start);
  }
  if (index.device == DeviceKind::kGpu) {
    for (const DeviceOp& op : index.ops) {
      if (op.recompute) index.recompute_ns += op.end - op.start;
    }
  }
  index.issue_order.resize(index.ops.size());
  std::iota(index.issue_order.begin(), index.issue_order.end(), 0u);
  std::stable_sort(index.issue_order.begin(), index.issue_order.end(),
                   [&index](uint32_t a, uint32_t b) {
                     const DeviceOp& x = index.ops[a];
                     const DeviceOp& y = index.ops[b];
                     // (issue, launched first, correlation): a strict weak order.
                     if (x.issue != y.issue) return x.issue < y.issue;
                     if (x.launched != y.launched) return x.launched;
                     return x.launched && x.correlation < y.correlation;
                   });
  index.mirrored_annotation = MirroredAnnotations(rank, index);
  return index;
}

TraceIndex Build(const Trace& trace, size_t workers, const std::function<void()>& rank_done) {
  TraceIndex index;
  index.ranks.resize(trace.ranks.size());
  ParallelFor(trace.ranks.size(), workers, [&](size_t, size_t r) {
    index.ranks[r] = BuildRank(trace.ranks[r]);
    if (rank_done) rank_done();
  });
  return index;
}

}  // namespace bubblescope::index
