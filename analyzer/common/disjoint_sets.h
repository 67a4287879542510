// Union-find over the indices 0 .. n-1, with path halving: near-constant time per call, so
// grouping n things by pairs that belong together stays linear. Which member ends up the root
// is unspecified; callers that need an order sort the groups themselves.
#pragma once

#include <cstddef>
#include <numeric>
#include <vector>

namespace bubblescope {

class DisjointSets {
 public:
  explicit DisjointSets(size_t n) : parent_(n) { std::iota(parent_.begin(), parent_.end(), 0); }

  // The representative of i's group.
  size_t Find(size_t i) {
    while (parent_[i] != i) i = parent_[i] = parent_[parent_[i]];
    return i;
  }

  void Join(size_t a, size_t b) { parent_[Find(a)] = Find(b); }

 private:
  std::vector<size_t> parent_;
};

}  // namespace bubblescope
