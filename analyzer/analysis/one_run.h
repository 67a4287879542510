// Whether the files of a job can be one run's. Files are paired by rank id, so two files of
// different jobs with the same world size (a 2022 V100 trace beside a 2024 A100 trace) would
// otherwise be measured as one pipeline that never existed. Each file says something of its job;
// this compares what the ranks say and names each disagreement, as one of two strengths
// (docs/analyze.md, "One run"):
//  - conclusive, the files cannot be one run's: different world sizes declared; one process
//    group name declared with different members; spans on the epoch clock that do not overlap
//    and lie a day or more apart;
//  - a sign only, legal in rare setups or on a skewed clock: no GPU model in common; ProfilerStep
//    numbers with none in common; spans apart by an hour or more; one host and process id
//    named by two files.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/rank_summary.h"
#include "bubblescope/trace.h"

namespace bubblescope::one_run {

enum class SignKind : uint8_t {
  kWorldSize,      // conclusive
  kProcessGroups,  // conclusive
  kTimes,          // conclusive a day or more apart, a sign from an hour
  kDevices,
  kSteps,
  kProcess,
};

// "world_size", "process_groups", "times", "devices", "steps", "process".
std::string_view SignKindName(SignKind kind);

struct Sign {
  SignKind kind = SignKind::kWorldSize;
  bool conclusive = false;  // the two ranks cannot be one run's
  int32_t rank_a = -1;      // the two ranks that disagree, rank_a < rank_b
  int32_t rank_b = -1;
  std::string detail;  // what each says, in words
};

struct Result {
  // At most one of each kind (the first pair found, in rank order), the conclusive ones first.
  std::vector<Sign> signs;
  bool CannotBeOneRun() const;
};

// Spans apart by these much, without overlap, on the epoch clock: the sign and the proof.
inline constexpr TimeNs kApartSignNs = TimeNs{3'600} * 1'000'000'000;
inline constexpr TimeNs kApartProofNs = TimeNs{86'400} * 1'000'000'000;

// `trace` needs only the ranks' headers (trace.h's RankHeader); `ranks` gives their spans.
Result Compare(const Trace& trace, const rank_summary::Result& ranks);

}  // namespace bubblescope::one_run
