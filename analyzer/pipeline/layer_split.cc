#include "pipeline/layer_split.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace bubblescope::pipeline {

absl::Status CheckResplit(const std::vector<int32_t>& before, const std::vector<int32_t>& after) {
  if (before.size() != after.size()) {
    return absl::InvalidArgumentError(absl::StrCat("the new split has ", after.size(),
                                                   " stages but the pipeline has ", before.size()));
  }
  int64_t total_before = 0;
  int64_t total_after = 0;
  for (size_t s = 0; s < before.size(); ++s) {
    if (before[s] < 1 || after[s] < 1) {
      return absl::InvalidArgumentError(absl::StrCat("stage ", s, " has ",
                                                     std::min(before[s], after[s]),
                                                     " layers; every stage needs at least 1"));
    }
    total_before += before[s];
    total_after += after[s];
  }
  if (total_before != total_after) {
    return absl::InvalidArgumentError(absl::StrCat("the new split holds ", total_after,
                                                   " layers but the pipeline has ", total_before));
  }
  return absl::OkStatus();
}

std::vector<double> Resplit(const std::vector<double>& per_stage,
                            const std::vector<int32_t>& before, const std::vector<int32_t>& after) {
  std::vector<double> out(after.size(), 0.0);
  // Walk both splits along the layer sequence: [old_begin, old_end) is the old stage's range,
  // [new_begin, new_end) the new one's; each overlap carries its layers' shares.
  size_t old_stage = 0;
  int64_t old_begin = 0;
  int64_t new_begin = 0;
  for (size_t s = 0; s < after.size(); ++s) {
    const int64_t new_end = new_begin + after[s];
    while (old_stage < before.size() && old_begin < new_end) {
      const int64_t old_end = old_begin + before[old_stage];
      const int64_t overlap = std::min(old_end, new_end) - std::max(old_begin, new_begin);
      if (overlap > 0) {
        out[s] += per_stage[old_stage] * static_cast<double>(overlap) /
                  static_cast<double>(before[old_stage]);
      }
      if (old_end > new_end) break;  // the old stage continues into the next new stage
      old_begin = old_end;
      ++old_stage;
    }
    new_begin = new_end;
  }
  return out;
}

std::vector<int32_t> AfterMove(std::vector<int32_t> split, int32_t from, int32_t to,
                               int32_t layers) {
  split[static_cast<size_t>(from)] -= layers;
  split[static_cast<size_t>(to)] += layers;
  return split;
}

}  // namespace bubblescope::pipeline
