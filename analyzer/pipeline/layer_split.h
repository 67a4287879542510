// Moving layers between stages: what each stage carries after a new contiguous split of the same
// layers. A stage's figure (a time per microbatch, a memory floor, an activation) is taken as
// spread evenly over its layers, and a layer keeps its share wherever it lands, so a new stage's
// figure is the sum of the shares of the layers it now holds. Layers stay in order: moving k
// layers from stage i to stage j shifts every stage in between along by k.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/status.h"

namespace bubblescope::pipeline {

// InvalidArgumentError unless both splits have one entry >= 1 per stage and the same total.
absl::Status CheckResplit(const std::vector<int32_t>& before, const std::vector<int32_t>& after);

// `per_stage` (one value per stage of `before`) carried over to `after`; O(stages). Assumes
// CheckResplit passed.
std::vector<double> Resplit(const std::vector<double>& per_stage,
                            const std::vector<int32_t>& before, const std::vector<int32_t>& after);

// The split after moving `layers` from stage `from` to stage `to` (contiguity kept by the shift).
std::vector<int32_t> AfterMove(std::vector<int32_t> split, int32_t from, int32_t to,
                               int32_t layers);

}  // namespace bubblescope::pipeline
