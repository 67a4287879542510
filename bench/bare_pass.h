// The practical speed limit for `analyze`: the same file loading as the loader, then one
// simdjson On-Demand pass that reads only ph/cat/name/ts/dur/pid/tid of every event and keeps
// nothing.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace bubblescope::bench {

struct BarePassResult {
  int64_t events = 0;
  int64_t largest_file_bytes = 0;  // decompressed
  uint64_t checksum = 0;           // of the values read, so the pass cannot be optimised away
};

absl::StatusOr<BarePassResult> BareSimdjsonPass(const std::vector<std::string>& files);

}  // namespace bubblescope::bench
