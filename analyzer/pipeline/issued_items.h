// A rank's pipeline work in the order the rank issued it: compute and point-to-point transfers,
// each tagged with the step it belongs to (step_map.h). A projection of the rank index
// (index/rank_index.h), made once per rank by the job driver and read by every structure rule.
//
// Pipeline structure is a property of issue order (the CPU posts a recv, the op's compute, then
// its send), not of device timing, where a transfer stream may run ahead of compute. Work issued
// inside an `Optimizer.*` range is not pipeline work and is left out, and so is work in no step
// (before the first one, or in a partial period of a repeating schedule). A CPU transfer ends
// when its `gloo:*` range does (the op itself only posts it).
#pragma once

#include <cstdint>
#include <vector>

#include "bubblescope/trace.h"
#include "index/rank_index.h"
#include "pipeline/step_map.h"

namespace bubblescope::pipeline {

enum class ItemKind : uint8_t { kCompute, kSend, kRecv };

using index::PhaseHint;

struct IssuedItem {
  ItemKind kind = ItemKind::kCompute;
  PhaseHint hint = PhaseHint::kNone;
  int32_t step = 0;       // the step its issue lies in (step_map.h)
  int32_t peer = -1;      // send / recv: the global peer rank when the trace records it
  int64_t bytes = -1;     // send / recv: payload bytes when the trace records them
  NameId name = kNoName;  // the kernel's or operator's name, in the rank's pool
  uint32_t op = 0;        // index into the rank's index::RankIndex::ops
  TimeNs issue = 0;       // launch start (GPU) or op start (CPU)
  TimeNs start = 0;       // the activity itself
  TimeNs end = 0;
};

struct IssuedTimeline {
  int32_t rank = -1;
  bool cpu_only = false;
  std::vector<IssuedItem> items;  // in issue order
  // The rank's names, for comparing item names across ranks; null where a caller built the
  // timeline by hand without them.
  const NamePool* names = nullptr;
};

IssuedTimeline BuildIssuedTimeline(const index::RankIndex& rank, const StepMap& steps);

}  // namespace bubblescope::pipeline
