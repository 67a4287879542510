#include "analysis/clock_offsets.h"

#include <algorithm>
#include <cmath>

namespace bubblescope {

TimeNs RankClock::At(TimeNs time) const {
  if (rate == 0.0) return offset_ns;
  const double drifted = rate * (static_cast<double>(time) - static_cast<double>(anchor_ns));
  // A drift beyond the model's range is damage, not a clock: kept in range.
  const double limited = std::clamp(drifted, -1e15, 1e15);
  return ClampTime(SaturatingAdd(offset_ns, static_cast<TimeNs>(std::llround(limited))));
}

void ClockOffsets::Set(int32_t rank, RankClock clock) {
  clock.offset_ns = ClampTime(clock.offset_ns);
  for (auto& [id, offset] : offsets_) {
    if (id == rank) {
      offset = clock;
      return;
    }
  }
  offsets_.emplace_back(rank, clock);
}

RankClock ClockOffsets::Of(int32_t rank) const {
  for (const auto& [id, offset] : offsets_) {
    if (id == rank) return offset;
  }
  return RankClock{};
}

}  // namespace bubblescope
