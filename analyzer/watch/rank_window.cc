#include "watch/rank_window.h"

#include <algorithm>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "bubblescope/rank_finish.h"

namespace bubblescope::watch {
namespace {

// Ids of one pool's names in another, interned on first use.
class NameMap {
 public:
  NameMap(const NamePool& from, NamePool& to) : from_(from), to_(to), ids_(from.size(), kUnset) {}

  NameId operator()(NameId id) {
    if (id == kNoName || id >= ids_.size()) return kNoName;
    if (ids_[id] == kUnset) ids_[id] = to_.Intern(from_.Get(id));
    return ids_[id];
  }

 private:
  static constexpr NameId kUnset = UINT32_MAX;
  const NamePool& from_;
  NamePool& to_;
  std::vector<NameId> ids_;
};

uint32_t GroupIndex(Rank& held, const ProcessGroup& group) {
  for (size_t i = 0; i < held.process_groups.size(); ++i) {
    const ProcessGroup& have = held.process_groups[i];
    if (have.name == group.name && have.ranks == group.ranks &&
        have.description == group.description) {
      return static_cast<uint32_t>(i);
    }
  }
  held.process_groups.push_back(group);
  return static_cast<uint32_t>(held.process_groups.size() - 1);
}

Timeline& MatchingTimeline(Rank& held, const Timeline& like) {
  for (Timeline& timeline : held.timelines) {
    if (timeline.kind == like.kind && timeline.device == like.device && timeline.pid == like.pid &&
        timeline.id == like.id) {
      return timeline;
    }
  }
  Timeline& added = held.timelines.emplace_back();
  added.kind = like.kind;
  added.device = like.device;
  added.pid = like.pid;
  added.id = like.id;
  return added;
}

template <typename Fact>
void TakeIfUnset(Fact& held, Fact& part, const Fact& unset) {
  if (held == unset && part != unset) held = std::move(part);
}

void TakeFacts(Rank& held, Rank& part) {
  TakeIfUnset(held.rank, part.rank, -1);
  TakeIfUnset(held.world_size, part.world_size, -1);
  TakeIfUnset(held.pid, part.pid, int64_t{0});
  const std::string none;
  TakeIfUnset(held.source_path, part.source_path, none);
  TakeIfUnset(held.source_format, part.source_format, none);
  TakeIfUnset(held.host, part.host, none);
  TakeIfUnset(held.backend, part.backend, none);
  TakeIfUnset(held.record_run_id, part.record_run_id, none);
  TakeIfUnset(held.rank_source, part.rank_source, none);
  TakeIfUnset(held.time_base, part.time_base, none);
  TakeIfUnset(held.time_evidence, part.time_evidence, none);
  for (DeviceInfo& device : part.devices) {
    const bool known = std::any_of(held.devices.begin(), held.devices.end(),
                                   [&](const DeviceInfo& have) { return have.id == device.id; });
    if (!known) held.devices.push_back(std::move(device));
  }
}

}  // namespace

void AppendRank(Rank& held, Rank part) {
  TakeFacts(held, part);
  NameMap names(part.names, held.names);
  std::vector<uint32_t> groups;
  for (const ProcessGroup& group : part.process_groups) groups.push_back(GroupIndex(held, group));
  const size_t comm_base = held.comms.size();
  for (CommInfo comm : part.comms) {
    comm.collective = names(comm.collective);
    comm.dtype = names(comm.dtype);
    if (comm.process_group != kNoIndex && comm.process_group < groups.size()) {
      comm.process_group = groups[comm.process_group];
    }
    held.comms.push_back(comm);
  }
  for (const Timeline& timeline : part.timelines) {
    Timeline& into = MatchingTimeline(held, timeline);
    for (Interval interval : timeline.intervals) {
      interval.name = names(interval.name);
      if (interval.comm != kNoIndex) interval.comm += static_cast<uint32_t>(comm_base);
      into.intervals.push_back(interval);
    }
    SortIntervals(&into.intervals);
  }
  // The model's order of timelines (as FinishRank leaves them), new ones among the old.
  std::stable_sort(
      held.timelines.begin(), held.timelines.end(), [](const Timeline& a, const Timeline& b) {
        return std::tie(a.kind, a.device, a.pid, a.id) < std::tie(b.kind, b.device, b.pid, b.id);
      });
  for (Annotation annotation : part.annotations) {
    annotation.name = names(annotation.name);
    held.annotations.push_back(annotation);
  }
  SortAnnotations(&held.annotations);
  held.steps.insert(held.steps.end(), part.steps.begin(), part.steps.end());
  std::stable_sort(held.steps.begin(), held.steps.end(),
                   [](const ProfilerStep& a, const ProfilerStep& b) { return a.start < b.start; });
  held.memory.insert(held.memory.end(), part.memory.begin(), part.memory.end());
  std::stable_sort(held.memory.begin(), held.memory.end(),
                   [](const MemorySample& a, const MemorySample& b) { return a.time < b.time; });
  held.stats.Merge(part.stats);
}

void TrimRankBefore(Rank& rank, TimeNs cut) {
  for (Timeline& timeline : rank.timelines) {
    std::erase_if(timeline.intervals,
                  [cut](const Interval& interval) { return interval.end < cut; });
  }
  std::erase_if(rank.annotations,
                [cut](const Annotation& annotation) { return annotation.start < cut; });
  std::erase_if(rank.steps, [cut](const ProfilerStep& step) { return step.start < cut; });
  std::erase_if(rank.memory, [cut](const MemorySample& sample) { return sample.time < cut; });

  // The names and communication records left: a new pool and table of only those, so that what
  // a long job adds (a name per step, "ProfilerStep#N") does not pile up.
  NamePool kept_names;
  NameMap names(rank.names, kept_names);
  std::vector<CommInfo> kept_comms;
  std::vector<uint32_t> comm_ids(rank.comms.size(), kNoIndex);
  for (Timeline& timeline : rank.timelines) {
    for (Interval& interval : timeline.intervals) {
      interval.name = names(interval.name);
      if (interval.comm == kNoIndex || interval.comm >= rank.comms.size()) continue;
      uint32_t& id = comm_ids[interval.comm];
      if (id == kNoIndex) {
        CommInfo comm = rank.comms[interval.comm];
        comm.collective = names(comm.collective);
        comm.dtype = names(comm.dtype);
        id = static_cast<uint32_t>(kept_comms.size());
        kept_comms.push_back(comm);
      }
      interval.comm = id;
    }
  }
  for (Annotation& annotation : rank.annotations) annotation.name = names(annotation.name);
  rank.names = std::move(kept_names);
  rank.comms = std::move(kept_comms);
}

std::optional<int64_t> SettledStep(const Rank& rank, bool finished) {
  if (rank.steps.empty()) return std::nullopt;
  if (finished) return rank.steps.back().number;
  if (rank.steps.size() < 2) return std::nullopt;
  return rank.steps[rank.steps.size() - 2].number;
}

std::optional<TimeNs> StepStart(const Rank& rank, int64_t number) {
  for (const ProfilerStep& step : rank.steps) {
    if (step.number == number) return step.start;
  }
  return std::nullopt;
}

}  // namespace bubblescope::watch
