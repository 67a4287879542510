#include "readers/rank_builder.h"

#include <algorithm>
#include <limits>
#include <optional>

#include "bubblescope/op_names.h"
#include "bubblescope/rank_finish.h"
#include "common/unwinding_hash.h"
#include "readers/event_classifier.h"
#include "text/json_tokens.h"

namespace bubblescope::kineto {
namespace {

bool FitsInt32(int64_t value) {
  return value >= std::numeric_limits<int32_t>::min() &&
         value <= std::numeric_limits<int32_t>::max();
}

int32_t ToInt32OrUnknown(int64_t value) {
  return value >= 0 && FitsInt32(value) ? static_cast<int32_t>(value) : -1;
}

bool IsCpuEventCategory(EventCategory category) {
  return category == EventCategory::kCpuOp || category == EventCategory::kAbsent ||
         category == EventCategory::kUserAnnotation || category == EventCategory::kRuntime;
}

}  // namespace

void RankBuilder::AddEvent(const EventFields& fields, const std::vector<int32_t>& pg_ranks,
                           int64_t offset) {
  if (fields.damaged) return Bump(fields.damage, offset);
  if (!fields.has_ph) return Bump(ImportCounter::kMissingField, offset);
  if (fields.ph.size() != 1) return Bump(ImportCounter::kUnknownPhase, offset);
  switch (fields.ph[0]) {
    case 'X':
      return AddComplete(fields, pg_ranks, offset);
    case 'i':
    case 'I':
      return AddMemorySample(fields, offset);
    case 's':
    case 'f':
      return AddFlow(fields, offset);
    case 'M':
      return;  // process/thread names for trace viewers: nothing to model
    default:
      return Bump(ImportCounter::kUnknownPhase, offset);
  }
}

void RankBuilder::AddComplete(const EventFields& fields, const std::vector<int32_t>& pg_ranks,
                              int64_t offset) {
  const EventCategory category = fields.category;
  if (category == EventCategory::kOther || category == EventCategory::kFlow ||
      category == EventCategory::kMemory) {
    return Bump(ImportCounter::kIgnoredCategory, offset);
  }
  if (!fields.has_ts || !fields.has_dur || !fields.has_name) {
    return Bump(ImportCounter::kMissingField, offset);
  }
  if (fields.dur < 0) return Bump(ImportCounter::kNegativeDuration, offset);
  const std::optional<TimeNs> end = CheckedAdd(fields.ts, fields.dur);
  if (!end) return Bump(ImportCounter::kBadNumber, offset);
  if (const std::optional<ImportCounter> problem = SpanProblem(fields.ts, *end)) {
    return Bump(*problem, offset);
  }
  if (IsCpuEventCategory(category) && !pid_known_ && fields.pid.present && !fields.pid.is_string) {
    pid_known_ = true;
    rank_->pid = fields.pid.value;
  }
  switch (category) {
    case EventCategory::kKernel:
    case EventCategory::kMemcpy:
    case EventCategory::kMemset:
      return AddGpuOp(fields, pg_ranks, *end, offset);
    case EventCategory::kRuntime: {
      if (fields.args.damaged_groups & kArgGroupGpu) return Bump(fields.args.damage, offset);
      if (!HasCpuPlace(fields, offset)) return;
      const NameId name = InternEscaped(fields.name);
      Interval interval;
      interval.start = fields.ts;
      interval.end = *end;
      interval.correlation = fields.args.correlation;
      interval.name = name;
      interval.kind = IntervalKind::kRuntime;
      TimelineFor(TimelineKind::kCpuThread, fields.pid.value, fields.tid.value, fields.pid.value)
          .intervals.push_back(interval);
      ++usable_events_;
      return;
    }
    case EventCategory::kUserAnnotation:
      return AddAnnotation(fields, AnnotationScope::kCpu, *end, offset);
    case EventCategory::kGpuUserAnnotation:
      return AddAnnotation(fields, AnnotationScope::kGpu, *end, offset);
    default:  // kCpuOp, and "X" events without a category (bare-array traces)
      return AddCpuOp(fields, pg_ranks, *end, offset);
  }
}

void RankBuilder::AddGpuOp(const EventFields& fields, const std::vector<int32_t>& pg_ranks,
                           TimeNs end, int64_t offset) {
  if (fields.args.damaged_groups & kArgGroupGpu) return Bump(fields.args.damage, offset);
  int32_t device = -1;
  int64_t stream = 0;
  if (!GpuPlace(fields, offset, &device, &stream)) return;
  const NameId name = InternEscaped(fields.name);
  IntervalKind kind = IntervalKind::kComputeKernel;
  CommKind comm_kind = CommKind::kUnknown;
  if (fields.category == EventCategory::kMemcpy) {
    kind = IntervalKind::kMemcpy;
  } else if (fields.category == EventCategory::kMemset) {
    kind = IntervalKind::kMemset;
  } else if (IsCommKernel(name, &comm_kind)) {
    kind = IntervalKind::kCommKernel;
    if (fields.args.damaged_groups & kArgGroupComm) return Bump(fields.args.damage, offset);
  }
  uint32_t comm = kNoIndex;
  if (kind == IntervalKind::kCommKernel) comm = AddComm(comm_kind, fields.args, pg_ranks);
  Interval interval;
  interval.start = fields.ts;
  interval.end = end;
  interval.correlation = fields.args.correlation;
  interval.name = name;
  interval.comm = comm;
  interval.kind = kind;
  TimelineFor(TimelineKind::kGpuStream, device, stream, fields.pid.value)
      .intervals.push_back(interval);
  ++usable_events_;
}

void RankBuilder::AddCpuOp(const EventFields& fields, const std::vector<int32_t>& pg_ranks,
                           TimeNs end, int64_t offset) {
  const std::string_view name_text = UnescapeJsonString(fields.name, &scratch_);
  // Catless events come from torch builds without Kineto, where record_function ranges (PP:F3,
  // gloo:send) are written like operators; they are annotations, as Kineto's user_annotation.
  if (op_names::ProfilerStepNumber(name_text) ||
      (fields.category == EventCategory::kAbsent && !op_names::IsOperatorName(name_text))) {
    return AddAnnotation(fields, AnnotationScope::kCpu, end, offset);
  }
  const std::optional<CommKind> comm_kind = op_names::CpuCommOpKind(name_text);
  if (comm_kind && (fields.args.damaged_groups & kArgGroupComm)) {
    return Bump(fields.args.damage, offset);
  }
  if (!HasCpuPlace(fields, offset)) return;
  const NameId name = Intern(name_text);
  Interval interval;
  interval.start = fields.ts;
  interval.end = end;
  interval.name = name;
  interval.kind = IntervalKind::kCpuOp;
  if (comm_kind) {
    interval.kind = IntervalKind::kCpuCommOp;
    interval.comm = AddComm(*comm_kind, fields.args, pg_ranks);
  }
  TimelineFor(TimelineKind::kCpuThread, fields.pid.value, fields.tid.value, fields.pid.value)
      .intervals.push_back(interval);
  ++usable_events_;
}

void RankBuilder::AddAnnotation(const EventFields& fields, AnnotationScope scope, TimeNs end,
                                int64_t offset) {
  Annotation annotation;
  annotation.start = fields.ts;
  annotation.end = end;
  annotation.scope = scope;
  if (scope == AnnotationScope::kGpu) {
    if (fields.args.damaged_groups & kArgGroupGpu) return Bump(fields.args.damage, offset);
    if (!GpuPlace(fields, offset, &annotation.device, &annotation.thread_or_stream)) return;
  } else {
    if (!HasCpuPlace(fields, offset)) return;
    annotation.thread_or_stream = fields.tid.value;
  }
  const std::string_view name_text = UnescapeJsonString(fields.name, &scratch_);
  annotation.name = Intern(name_text);
  if (scope == AnnotationScope::kCpu) {
    if (const std::optional<int64_t> step = op_names::ProfilerStepNumber(name_text)) {
      rank_->steps.push_back(ProfilerStep{.number = *step, .start = fields.ts, .end = end});
    }
  }
  rank_->annotations.push_back(annotation);
  ++usable_events_;
}

void RankBuilder::AddMemorySample(const EventFields& fields, int64_t offset) {
  if (fields.category != EventCategory::kMemory && fields.name != "[memory]") {
    return Bump(ImportCounter::kIgnoredCategory, offset);
  }
  const EventArgs& args = fields.args;
  // c10::DeviceType: 0 CPU (host memory), 1 CUDA (ROCm builds report HIP memory as CUDA too).
  if (args.has_device_type && args.device_type != 0 && args.device_type != 1) {
    return Bump(ImportCounter::kIgnoredCategory, offset);
  }
  const bool host = args.has_device_type && args.device_type == 0;
  if (!fields.has_ts) return Bump(ImportCounter::kMissingField, offset);
  if (!InTimeRange(fields.ts)) return Bump(ImportCounter::kTimeOutOfRange, offset);
  if ((args.damaged_groups & kArgGroupMemory) ||
      (!args.has_device_type && (!args.has_device_id || args.device_id < 0))) {
    return Bump(ImportCounter::kBadMemorySample, offset);
  }
  // 2021 Kineto (torch 1.8 to 1.10) wrote one event per allocation and free, its size in
  // "Bytes" and no totals: kept to be summed once every event is in.
  if (!args.has_total_allocated && !args.has_total_reserved && args.has_bytes) {
    if (args.bytes < -kMaxMemoryBytes || args.bytes > kMaxMemoryBytes) {
      return Bump(ImportCounter::kBadMemorySample, offset);
    }
    allocations_.push_back(PendingAllocation{.time = fields.ts,
                                             .bytes = args.bytes,
                                             .device = host ? -1 : ToInt32OrUnknown(args.device_id),
                                             .host = host});
    ++usable_events_;
    return;
  }
  if (!args.has_total_allocated || !args.has_total_reserved) {
    return Bump(ImportCounter::kBadMemorySample, offset);
  }
  for (int64_t bytes : {args.total_allocated, args.total_reserved}) {
    if (bytes < 0 || bytes > kMaxMemoryBytes) return Bump(ImportCounter::kBadMemorySample, offset);
  }
  rank_->memory.push_back(MemorySample{.time = fields.ts,
                                       .allocated_bytes = args.total_allocated,
                                       .reserved_bytes = args.total_reserved,
                                       .device = host ? -1 : ToInt32OrUnknown(args.device_id),
                                       .host = host});
  ++usable_events_;
}

void RankBuilder::AddFlow(const EventFields& fields, int64_t offset) {
  if (fields.category != EventCategory::kFlow) return Bump(ImportCounter::kIgnoredCategory, offset);
  if (!fields.has_ts || !fields.id.present || !fields.pid.present || !fields.tid.present) {
    return Bump(ImportCounter::kMissingField, offset);
  }
  flows_.push_back(PendingFlow{.pid = fields.pid.value,
                               .tid = fields.tid.value,
                               .ts = fields.ts,
                               .id = fields.id.value,
                               .offset = offset,
                               .is_start = fields.ph[0] == 's'});
  ++usable_events_;
}

bool RankBuilder::GpuPlace(const EventFields& fields, int64_t offset, int32_t* device,
                           int64_t* stream) {
  const EventArgs& args = fields.args;
  if ((!args.has_device && !fields.pid.present) || (!args.has_stream && !fields.tid.present)) {
    Bump(ImportCounter::kMissingField, offset);
    return false;
  }
  const int64_t raw_device = args.has_device ? args.device : fields.pid.value;
  if (args.has_device && !FitsInt32(raw_device)) {
    Bump(ImportCounter::kBadId, offset);
    return false;
  }
  *device = FitsInt32(raw_device) ? static_cast<int32_t>(raw_device) : -1;
  *stream = args.has_stream ? args.stream : fields.tid.value;
  return true;
}

bool RankBuilder::HasCpuPlace(const EventFields& fields, int64_t offset) {
  if (fields.pid.present && fields.tid.present) return true;
  Bump(ImportCounter::kMissingField, offset);
  return false;
}

Timeline& RankBuilder::TimelineFor(TimelineKind kind, int64_t a, int64_t b, int64_t pid) {
  const TimelineKey key{static_cast<uint8_t>(kind), a, b};
  if (key != last_key_) {
    auto [it, inserted] =
        timeline_index_.try_emplace(key, static_cast<uint32_t>(rank_->timelines.size()));
    if (inserted) {
      Timeline& timeline = rank_->timelines.emplace_back();
      timeline.kind = kind;
      if (kind == TimelineKind::kGpuStream) {
        timeline.device = static_cast<int32_t>(a);
        timeline.pid = pid;
      } else {
        timeline.pid = a;
      }
      timeline.id = b;
    }
    last_key_ = key;
    last_index_ = it->second;
  }
  return rank_->timelines[last_index_];
}

Timeline* RankBuilder::FindTimeline(TimelineKind kind, int64_t a, int64_t b) {
  const auto it = timeline_index_.find(TimelineKey{static_cast<uint8_t>(kind), a, b});
  return it == timeline_index_.end() ? nullptr : &rank_->timelines[it->second];
}

NameId RankBuilder::InternEscaped(std::string_view escaped) {
  return Intern(UnescapeJsonString(escaped, &scratch_));
}

bool RankBuilder::IsCommKernel(NameId name, CommKind* kind) {
  if (name >= kernel_class_.size()) kernel_class_.resize(rank_->names.size(), 0);
  uint8_t& cached = kernel_class_[name];
  if (cached == 0) {
    const std::string_view text = rank_->names.Get(name);
    const std::optional<CommKind> comm = op_names::CommKernelKind(text);
    cached = comm ? static_cast<uint8_t>(2 + static_cast<int>(*comm)) : 1;
  }
  if (cached == 1) return false;
  *kind = static_cast<CommKind>(cached - 2);
  return true;
}

uint32_t RankBuilder::AddComm(CommKind name_kind, const EventArgs& args,
                              const std::vector<int32_t>& pg_ranks) {
  CommInfo info;
  info.kind = name_kind;
  if (!args.collective.empty()) {
    const std::string_view collective = UnescapeJsonString(args.collective, &scratch_);
    const CommKind arg_kind = op_names::CommKindFromName(collective);
    if (arg_kind != CommKind::kUnknown) info.kind = arg_kind;
    info.collective = Intern(collective);
  }
  if (!args.dtype.empty()) {
    const std::string_view dtype = UnescapeJsonString(args.dtype, &scratch_);
    info.dtype = Intern(dtype);
    const int64_t elements = std::max(args.in_nelems, args.out_nelems);
    const int element_size = op_names::DtypeSize(dtype);
    int64_t bytes = 0;
    if (elements >= 0 && element_size > 0 &&
        !__builtin_mul_overflow(elements, int64_t{element_size}, &bytes)) {
      info.bytes = bytes;
    }
  }
  // p2p: a send's peer is where it goes, a recv's where it comes from.
  if (info.kind == CommKind::kSend) {
    info.peer = ToInt32OrUnknown(args.dst_rank);
  } else if (info.kind == CommKind::kRecv) {
    info.peer = ToInt32OrUnknown(args.src_rank);
  } else {
    info.peer = ToInt32OrUnknown(args.dst_rank >= 0 ? args.dst_rank : args.src_rank);
  }
  info.group_size = ToInt32OrUnknown(args.group_size);
  if (args.seq >= 0) info.seq = args.seq;
  if (args.has_pg_ranks || !args.pg_name.empty() || !args.pg_desc.empty()) {
    const std::string name(UnescapeJsonString(args.pg_name, &scratch_));
    const std::string_view description = UnescapeJsonString(args.pg_desc, &scratch_);
    info.process_group =
        AddProcessGroup(name, description, args.has_pg_ranks ? &pg_ranks : nullptr);
  }
  rank_->comms.push_back(info);
  return static_cast<uint32_t>(rank_->comms.size() - 1);
}

uint32_t RankBuilder::AddProcessGroup(std::string_view name, std::string_view description,
                                      const std::vector<int32_t>* ranks) {
  return groups_.Add(name, description, ranks);
}

void RankBuilder::SetBaseTime(int64_t base_ns, int64_t offset) {
  base_ns_ = base_ns;
  base_offset_ = offset;
}

void RankBuilder::Finish(bool keep_empty_steps) {
  // Flows link intervals by their place in a timeline, which needs them in order first.
  for (Timeline& timeline : rank_->timelines) SortIntervals(&timeline.intervals);
  LinkFlows();
  AddRunningTotals();
  FinishRank(
      FinishOptions{
          .base_ns = base_ns_, .base_offset = base_offset_, .keep_empty_steps = keep_empty_steps},
      rank_);
  timeline_index_.clear();
}

void RankBuilder::AddRunningTotals() {
  if (allocations_.empty()) return;
  std::stable_sort(
      allocations_.begin(), allocations_.end(),
      [](const PendingAllocation& a, const PendingAllocation& b) { return a.time < b.time; });
  // One running total per memory (a device, or the host); a handful, so a plain list.
  struct Running {
    int32_t device;
    bool host;
    int64_t total = 0;
    int64_t lowest = 0;
  };
  std::vector<Running> memories;
  const size_t first = rank_->memory.size();
  for (const PendingAllocation& allocation : allocations_) {
    auto memory = std::find_if(memories.begin(), memories.end(), [&](const Running& m) {
      return m.device == allocation.device && m.host == allocation.host;
    });
    if (memory == memories.end()) {
      memories.push_back(Running{.device = allocation.device, .host = allocation.host});
      memory = memories.end() - 1;
    }
    // Each step is within 2^53, so the sum cannot overflow before it is held to the bound.
    memory->total = std::clamp(memory->total + allocation.bytes, -kMaxMemoryBytes, kMaxMemoryBytes);
    memory->lowest = std::min(memory->lowest, memory->total);
    rank_->memory.push_back(MemorySample{.time = allocation.time,
                                         .allocated_bytes = memory->total,
                                         .reserved_bytes = 0,
                                         .device = allocation.device,
                                         .host = allocation.host});
  }
  // Frees of memory allocated before the trace began take a total below 0: each memory's
  // totals count from its lowest point, so its peak is the most allocated at once within the
  // trace above that point. No "Total Reserved" was written: the allocated total stands for it
  // (the allocator reserves at least that much).
  for (size_t i = first; i < rank_->memory.size(); ++i) {
    MemorySample& sample = rank_->memory[i];
    const auto memory = std::find_if(memories.begin(), memories.end(), [&](const Running& m) {
      return m.device == sample.device && m.host == sample.host;
    });
    sample.allocated_bytes = std::min(sample.allocated_bytes - memory->lowest, kMaxMemoryBytes);
    sample.reserved_bytes = sample.allocated_bytes;
  }
  allocations_.clear();
}

void RankBuilder::LinkFlows() {
  // The intervals of one timeline that start at one timestamp, as flows link them: whether any is
  // of the kind the flow links to, and the next of those still lacking a correlation id. One slot
  // per (timeline, timestamp), so a million flows at one timestamp cost one pass over the
  // intervals there, not one pass each.
  struct Slot {
    size_t next = 0;  // index of the next accepted interval lacking a correlation id, or `end`
    size_t end = 0;   // one past the last interval starting at the timestamp
    bool any = false;
  };
  UnwindingHashMap<std::pair<const Timeline*, TimeNs>, Slot> slots;
  // A flow opens at most one slot on its CPU thread and one on its GPU stream, and most open one
  // (a launch's "s", or an op's "f" whose CPU timeline does not exist): sized once rather than
  // doubled, each doubling a new table faulted in page by page.
  slots.reserve(flows_.size());
  // Advances `slot.next` from `from` to the next accepted interval without a correlation id.
  auto seek = [](const Timeline& timeline, size_t from, Slot& slot, auto accept) {
    slot.next = from;
    while (slot.next < slot.end && (!accept(timeline.intervals[slot.next].kind) ||
                                    timeline.intervals[slot.next].correlation != 0)) {
      ++slot.next;
    }
  };
  // Links flow `id` at `ts` on `timeline`: true if an interval of an accepted kind starts there;
  // with `fill`, the first of them lacking a correlation id takes `id`.
  auto link = [&](Timeline* timeline, TimeNs ts, int64_t id, bool fill, auto accept) {
    if (timeline == nullptr) return false;
    auto [entry, inserted] = slots.try_emplace(std::make_pair(timeline, ts));
    Slot& slot = entry->second;
    if (inserted) {
      const auto first =
          std::lower_bound(timeline->intervals.begin(), timeline->intervals.end(), ts,
                           [](const Interval& interval, TimeNs t) { return interval.start < t; });
      const size_t begin = static_cast<size_t>(first - timeline->intervals.begin());
      slot.end = begin;
      while (slot.end < timeline->intervals.size() && timeline->intervals[slot.end].start == ts) {
        slot.any = slot.any || accept(timeline->intervals[slot.end].kind);
        ++slot.end;
      }
      seek(*timeline, begin, slot, accept);
    }
    if (fill && slot.next < slot.end) {
      timeline->intervals[slot.next].correlation = id;
      seek(*timeline, slot.next + 1, slot, accept);
    }
    return slot.any;
  };
  auto is_runtime = [](IntervalKind kind) { return kind == IntervalKind::kRuntime; };
  for (const PendingFlow& flow : flows_) {
    Timeline* cpu = FindTimeline(TimelineKind::kCpuThread, flow.pid, flow.tid);
    bool linked = link(cpu, flow.ts, flow.id, flow.is_start, is_runtime);
    if (!flow.is_start && FitsInt32(flow.pid)) {
      Timeline* gpu = FindTimeline(TimelineKind::kGpuStream, flow.pid, flow.tid);
      linked = link(gpu, flow.ts, flow.id, true, IsDeviceKind) || linked;
    }
    if (!linked) Bump(ImportCounter::kUnmatchedFlow, flow.offset);
  }
  flows_.clear();
}

}  // namespace bubblescope::kineto
