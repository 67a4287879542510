// How far each rank's clock runs ahead of a pipeline's reference clock, applied the same way by
// every analysis that compares times across ranks (docs/cross-rank.md, "Clocks"): a time t on
// rank r's clock is t - Of(r) on the reference clock. Ranks without an offset are on it already.
// Nothing is ever copied onto another clock; each consumer shifts the times it reads.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "bubblescope/trace.h"

namespace bubblescope {

class ClockOffsets {
 public:
  ClockOffsets() = default;

  // Sets rank `rank`'s offset (replacing an earlier one), kept in the model's time range so
  // moving any time of the model by it cannot overflow.
  void Set(int32_t rank, TimeNs offset_ns);
  // Rank clock - reference clock; 0 for a rank without an offset.
  TimeNs Of(int32_t rank) const;
  // `time` on `rank`'s clock, on the reference clock, kept in the model's time range.
  TimeNs ToReference(int32_t rank, TimeNs time) const { return Move(time, Of(rank)); }
  // The same for a rank whose offset the caller looked up once (Of), for loops over its ops.
  static TimeNs Move(TimeNs time, TimeNs offset) { return ClampTime(time - offset); }

 private:
  std::vector<std::pair<int32_t, TimeNs>> offsets_;  // a pipeline has few ranks
};

}  // namespace bubblescope
