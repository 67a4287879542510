// Nearest-rank percentiles, the one definition every figure of bubblescope uses: the q-quantile
// of n values is the ceil(q·n)-th smallest (at least the first), so p50 of 4 values is the 2nd
// and p90 of 10 values the 9th. No interpolation: every percentile is a value that occurred.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

namespace bubblescope {

// The `percent`-th percentile (0..100) of `sorted` (ascending); a value-initialised T when empty.
template <typename T>
T NearestRankOfSorted(const std::vector<T>& sorted, int64_t percent) {
  if (sorted.empty()) return T{};
  const int64_t n = static_cast<int64_t>(sorted.size());
  const int64_t rank = std::clamp<int64_t>((percent * n + 99) / 100, 1, n);
  return sorted[static_cast<size_t>(rank - 1)];
}

// The same of unsorted values (sorted here; the argument is a copy).
template <typename T>
T NearestRank(std::vector<T> values, int64_t percent) {
  std::sort(values.begin(), values.end());
  return NearestRankOfSorted(values, percent);
}

}  // namespace bubblescope
