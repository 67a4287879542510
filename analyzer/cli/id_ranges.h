// The list syntax of the flags that choose pipelines or ranks (`--perfetto-ranks 0-7,12`):
// comma-separated whole numbers and ranges FIRST-LAST, both ends included.
#pragma once

#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "perfetto/perfetto_overlay.h"

namespace bubblescope {

// Errors, one line naming the item: not a whole number from 0 to 2147483647, a range that runs
// backwards, an empty item.
absl::StatusOr<std::vector<perfetto::IdRange>> ParseIdRanges(std::string_view text);

}  // namespace bubblescope
