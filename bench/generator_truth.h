// What the trace generator knows it generated, per rank: op counts and exact device-time figures
// worked out from its own schedule. The benchmark checks the analyzer against these.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "bubblescope/trace.h"

namespace bubblescope::bench {

enum class DeviceOpKind { kCompute, kComm, kCopy };

// One GPU op as the generator's schedule placed it.
struct DeviceOp {
  TimeNs start = 0;
  TimeNs end = 0;
  DeviceOpKind kind = DeviceOpKind::kCompute;
};

struct RankTruth {
  int32_t rank = -1;
  int64_t kernels = 0;  // compute + communication kernels
  int64_t comm_ops = 0;
  int64_t memcpys = 0;  // memcpy + memset
  int64_t steps = 0;
  TimeNs span = 0;     // first device op start to last device op end
  TimeNs compute = 0;  // union of compute kernels
  TimeNs comm = 0;     // union of communication kernels
  TimeNs memcpy = 0;   // union of memcpy + memset
  TimeNs idle = 0;     // span minus the union of every device op
  int64_t peak_allocated_bytes = -1;
  int64_t peak_reserved_bytes = -1;
  friend bool operator==(const RankTruth&, const RankTruth&) = default;
};

// Counts and unions of `ops` (in any order); steps and memory peaks are filled by the caller.
RankTruth TruthFromDeviceOps(int32_t rank, const std::vector<DeviceOp>& ops);

std::string TruthJson(const std::vector<RankTruth>& ranks);
absl::StatusOr<std::vector<RankTruth>> ParseTruthJson(const std::string& text);

}  // namespace bubblescope::bench
