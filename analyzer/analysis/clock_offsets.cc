#include "analysis/clock_offsets.h"

namespace bubblescope {

void ClockOffsets::Set(int32_t rank, TimeNs offset_ns) {
  offset_ns = ClampTime(offset_ns);
  for (auto& [id, offset] : offsets_) {
    if (id == rank) {
      offset = offset_ns;
      return;
    }
  }
  offsets_.emplace_back(rank, offset_ns);
}

TimeNs ClockOffsets::Of(int32_t rank) const {
  for (const auto& [id, offset] : offsets_) {
    if (id == rank) return offset;
  }
  return 0;
}

}  // namespace bubblescope
