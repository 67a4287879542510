#include "crossrank/clock_tolerance.h"

#include <algorithm>

namespace bubblescope::clock_alignment {
namespace {

constexpr TimeNs kFloorNs = 1000;
constexpr TimeNs kShareOfABlock = 10;  // the tolerance is 1/10 of the median block

}  // namespace

TimeNs ClockTolerance(const std::vector<const pipeline::IssuedTimeline*>& timelines) {
  std::vector<TimeNs> blocks;
  for (const pipeline::IssuedTimeline* timeline : timelines) {
    if (timeline == nullptr) continue;
    bool open = false;
    int32_t step = 0;
    TimeNs start = 0;
    TimeNs end = 0;
    for (const pipeline::IssuedItem& item : timeline->items) {
      const bool compute = item.kind == pipeline::ItemKind::kCompute;
      if (open && (!compute || item.step != step)) {
        blocks.push_back(end - start);
        open = false;
      }
      if (!compute) continue;
      if (!open) {
        start = item.start;
        step = item.step;
      }
      end = open ? std::max(end, item.end) : item.end;
      open = true;
    }
    if (open) blocks.push_back(end - start);
  }
  if (blocks.empty()) return kFloorNs;
  const auto middle = blocks.begin() + static_cast<std::ptrdiff_t>((blocks.size() - 1) / 2);
  std::nth_element(blocks.begin(), middle, blocks.end());
  return std::max(kFloorNs, *middle / kShareOfABlock);
}

}  // namespace bubblescope::clock_alignment
