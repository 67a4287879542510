// Turns decoded Kineto events into the timeline model: picks the timeline, the interval kind and
// the comm metadata of each event, collects annotations, steps and memory samples, and at the end
// links ac2g flows and finishes the rank as every reader does (bubblescope/rank_finish.h). What the
// events only imply (the direction of a p2p kernel without args, from the op that launched it) is
// the rank index's to derive (index/rank_index.h).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "bubblescope/rank_finish.h"
#include "bubblescope/trace.h"
#include "common/unwinding_hash.h"
#include "readers/kineto_event.h"

namespace bubblescope::kineto {

class RankBuilder {
 public:
  explicit RankBuilder(Rank* rank) : rank_(rank), groups_(rank) {}

  // Adds one event read from byte `offset`; a damaged or unmodelled one only bumps its counter.
  // `pg_ranks` holds the event's "Process Group Ranks" when fields.args.has_pg_ranks.
  void AddEvent(const EventFields& fields, const std::vector<int32_t>& pg_ranks, int64_t offset);

  // Index of the process group in rank->process_groups, adding it on first sight
  // (ProcessGroupTable, bubblescope/rank_finish.h).
  uint32_t AddProcessGroup(std::string_view name, std::string_view description,
                           const std::vector<int32_t>* ranks);

  // baseTimeNanoseconds, read from byte `offset`: added to every time when Finish() runs.
  void SetBaseTime(int64_t base_ns, int64_t offset);

  // Fills missing correlation ids from ac2g flows, then finishes the rank as every reader does
  // (FinishRank: the base time applied, everything in the model's orders). Call once, after the
  // last event. `keep_empty_steps`: FinishOptions' (bubblescope/rank_finish.h).
  void Finish(bool keep_empty_steps = false);

  // Events that became part of the model (intervals, annotations, samples, flows).
  size_t usable_events() const { return usable_events_; }

 private:
  // (kind, device or pid, stream or tid).
  using TimelineKey = std::tuple<uint8_t, int64_t, int64_t>;
  struct PendingFlow {
    int64_t pid;
    int64_t tid;
    TimeNs ts;
    int64_t id;
    int64_t offset;
    bool is_start;  // "s" (on the launch) rather than "f" (on the GPU op)
  };

  // A 2021 Kineto [memory] event: one allocation or free, no totals.
  struct PendingAllocation {
    TimeNs time;
    int64_t bytes;  // + allocated, - freed
    int32_t device;
    bool host;
  };

  // The 2021 format's allocations summed, in time order, into each device's running total, as
  // the samples of the later format hold it (docs/trace-sources.md, "Memory").
  void AddRunningTotals();

  void AddComplete(const EventFields& fields, const std::vector<int32_t>& pg_ranks, int64_t offset);
  void AddGpuOp(const EventFields& fields, const std::vector<int32_t>& pg_ranks, TimeNs end,
                int64_t offset);
  void AddCpuOp(const EventFields& fields, const std::vector<int32_t>& pg_ranks, TimeNs end,
                int64_t offset);
  void AddAnnotation(const EventFields& fields, AnnotationScope scope, TimeNs end, int64_t offset);
  void AddMemorySample(const EventFields& fields, int64_t offset);
  void AddFlow(const EventFields& fields, int64_t offset);

  // GPU device and stream of a GPU event: args, falling back to pid/tid. False (counted) if absent.
  bool GpuPlace(const EventFields& fields, int64_t offset, int32_t* device, int64_t* stream);
  // False (counted) if the event lacks pid or tid.
  bool HasCpuPlace(const EventFields& fields, int64_t offset);
  Timeline& TimelineFor(TimelineKind kind, int64_t a, int64_t b, int64_t pid);
  Timeline* FindTimeline(TimelineKind kind, int64_t a, int64_t b);
  NameId InternEscaped(std::string_view escaped);
  NameId Intern(std::string_view name) { return rank_->names.Intern(name); }
  // Comm metadata of a communication event whose kind the name already suggests.
  uint32_t AddComm(CommKind name_kind, const EventArgs& args, const std::vector<int32_t>& pg_ranks);
  // Cached per name: whether a kernel is NCCL-like and its kind.
  bool IsCommKernel(NameId name, CommKind* kind);
  void LinkFlows();
  void Bump(ImportCounter counter, int64_t offset) { rank_->stats.Bump(counter, offset); }

  Rank* rank_;
  UnwindingHashMap<TimelineKey, uint32_t> timeline_index_;
  TimelineKey last_key_{UINT8_MAX, 0, 0};
  uint32_t last_index_ = 0;
  ProcessGroupTable groups_;
  std::vector<uint8_t> kernel_class_;  // by NameId: 0 unknown, 1 compute, 2 + CommKind comm
  std::vector<PendingFlow> flows_;
  std::vector<PendingAllocation> allocations_;
  std::string scratch_;
  int64_t base_ns_ = 0;
  int64_t base_offset_ = -1;
  bool pid_known_ = false;
  size_t usable_events_ = 0;
};

}  // namespace bubblescope::kineto
