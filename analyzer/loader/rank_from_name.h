// Guesses a rank id from a trace file's name ("sampled_rank-0.json.gz", "worker7_step_12...").
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace bubblescope {

// The number after the last "rank" or "worker" (any case) in the last component of `path`,
// optionally separated from it by one of '-', '_', '.': "trace_rank12.json" -> 12,
// "Worker_3.json" -> 3. nullopt if there is none ("myrank.json") or it does not fit an int32.
std::optional<int32_t> RankFromFileName(std::string_view path);

}  // namespace bubblescope
