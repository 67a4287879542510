#include "schedule_engine/memory.h"

#include <algorithm>

namespace bubblescope::sim {
namespace {

struct StashChange {
  TimeNs time = 0;
  int64_t delta = 0;
};

int64_t RoundUpToSegment(int64_t bytes) {
  return (bytes + kReservedGranularityBytes - 1) / kReservedGranularityBytes *
         kReservedGranularityBytes;
}

// The op type whose end releases a forward's stash.
OpType ReleasingOp(Schedule schedule) {
  switch (schedule) {
    case Schedule::kZeroBubbleH1:
      return OpType::kWeightGrad;
    case Schedule::kForwardOnly:
      return OpType::kForward;
    default:
      return OpType::kBackward;
  }
}

}  // namespace

std::vector<MemorySample> MemorySamples(const Config& config, const RankRecord& rank) {
  const int64_t stash = config.activation_stash_bytes;
  const int64_t weights =
      config.weights_bytes.empty() ? 0 : config.weights_bytes[static_cast<size_t>(rank.stage)];
  std::vector<StashChange> changes;
  if (stash > 0) {
    const OpType releasing = ReleasingOp(config.schedule);
    for (const OpRecord& op : rank.ops) {
      if (op.op.type == OpType::kForward) changes.push_back({op.start, stash});
      if (op.op.type == releasing) changes.push_back({op.end, -stash});
    }
  }
  // Releases (negative deltas) first at equal times.
  std::stable_sort(changes.begin(), changes.end(), [](const StashChange& a, const StashChange& b) {
    return a.time != b.time ? a.time < b.time : a.delta < b.delta;
  });
  std::vector<MemorySample> samples;
  samples.reserve(changes.size() + 1);
  TimeNs first = rank.steps.empty() ? config.start_time_ns : rank.steps.front().start;
  int64_t allocated = weights;
  int64_t reserved = RoundUpToSegment(allocated);
  samples.push_back(MemorySample{first, allocated, reserved, 0});
  for (const StashChange& change : changes) {
    allocated += change.delta;
    reserved = std::max(reserved, RoundUpToSegment(allocated));
    samples.push_back(MemorySample{change.time, allocated, reserved, 0});
  }
  return samples;
}

}  // namespace bubblescope::sim
