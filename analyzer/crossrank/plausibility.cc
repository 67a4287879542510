#include "crossrank/plausibility.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace bubblescope::plausibility {

Result Analyze(const std::vector<link_stats::Link>& links,
               const std::vector<clock_alignment::RankOffset>& offsets,
               const schedule_inference::Result* shape) {
  Result result;
  for (const link_stats::Link& link : links) {
    if (!link.implausible) continue;
    result.notes.push_back(absl::StrFormat(
        "link %d -> %d: a median of %.0f Gbit/s is above any physical link (NVLink 5 moves "
        "%.0f Gbit/s per direction), so its transfer times are not transfers (a send completing "
        "before its peer posts, or transfers paired wrongly); no finding is built on it",
        link.src, link.dst, link.gbps_median, link_stats::kMaxPhysicalGbps));
  }
  if (shape == nullptr || shape->stages.empty()) return result;
  double microbatch_ns = 0.0;
  for (const schedule_inference::StageFigures& stage : shape->stages) {
    microbatch_ns += stage.mean_total_ns * static_cast<double>(shape->v);
  }
  microbatch_ns /= static_cast<double>(shape->stages.size());
  if (microbatch_ns <= 0.0) return result;
  for (const clock_alignment::RankOffset& offset : offsets) {
    if (static_cast<double>(offset.ErrorBound()) <= microbatch_ns) continue;
    result.uncertain_clock_ranks.push_back(offset.rank);
  }
  std::sort(result.uncertain_clock_ranks.begin(), result.uncertain_clock_ranks.end());
  if (!result.uncertain_clock_ranks.empty()) {
    const bool one = result.uncertain_clock_ranks.size() == 1;
    result.notes.push_back(absl::StrFormat(
        "clock alignment uncertain by more than one microbatch's forward and backward (%.3f ms) "
        "on %s %s: %s fill, drain and stall may be off by that much, and no link finding names "
        "%s",
        microbatch_ns / 1e6, one ? "rank" : "ranks",
        absl::StrJoin(result.uncertain_clock_ranks, ","), one ? "its" : "their",
        one ? "it" : "them"));
  }
  return result;
}

}  // namespace bubblescope::plausibility
