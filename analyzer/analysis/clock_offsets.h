// How far each rank's clock runs ahead of a pipeline's reference clock, applied the same way by
// every analysis that compares times across ranks (docs/cross-rank.md, "Clocks"): a time t on
// rank r's clock is t - Of(r).At(t) on the reference clock. Ranks without an offset are on it
// already. Nothing is ever copied onto another clock; each consumer shifts the times it reads.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "bubblescope/trace.h"

namespace bubblescope {

// One rank's clock against the reference: offset_ns at `anchor_ns` (on the rank's clock),
// changing by `rate` per unit of time (1e-6 = 1 ppm: two hosts' oscillators drift apart).
struct RankClock {
  TimeNs offset_ns = 0;
  double rate = 0.0;
  TimeNs anchor_ns = 0;

  // Rank clock - reference clock at `time` on the rank's clock. The rate is taken against the
  // rank's own time rather than the reference's: the two differ by offset x rate (100 ns for
  // 5 ms apart at 20 ppm), which clock_alignment counts in the offset's uncertainty.
  TimeNs At(TimeNs time) const;
};

class ClockOffsets {
 public:
  ClockOffsets() = default;

  // Sets rank `rank`'s clock (replacing an earlier one), its offset kept in the model's time
  // range so moving any time of the model by it cannot overflow.
  void Set(int32_t rank, RankClock clock);
  void Set(int32_t rank, TimeNs offset_ns) { Set(rank, RankClock{offset_ns, 0.0, 0}); }
  // The rank's clock against the reference; offset 0 for a rank without one.
  RankClock Of(int32_t rank) const;
  // `time` on `rank`'s clock, on the reference clock, kept in the model's time range.
  TimeNs ToReference(int32_t rank, TimeNs time) const { return Move(time, Of(rank)); }
  // The same for a rank whose clock the caller looked up once (Of), for loops over its ops.
  static TimeNs Move(TimeNs time, const RankClock& clock) {
    return ClampTime(time - clock.At(time));
  }

 private:
  std::vector<std::pair<int32_t, RankClock>> offsets_;  // a pipeline has few ranks
};

}  // namespace bubblescope
