#include "findings/link_findings.h"

#include <algorithm>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace bubblescope::link_findings {
namespace {

using findings::Ms;

// "stage 2 (rank 5)", or "rank 5" when the rank is not in the stage order.
std::string StageName(const std::vector<int32_t>& order, int32_t rank) {
  auto it = std::find(order.begin(), order.end(), rank);
  if (it == order.end()) return absl::StrCat("rank ", rank);
  return absl::StrCat("stage ", it - order.begin(), " (rank ", rank, ")");
}

const link_stats::Link* FindLink(const std::vector<link_stats::Link>& links, int32_t src,
                                 int32_t dst) {
  for (const link_stats::Link& link : links) {
    if (link.src == src && link.dst == dst) return &link;
  }
  return nullptr;
}

TimeNs ComputeOf(const bubble::Result& bubble, int32_t rank) {
  for (const bubble::RankTotals& totals : bubble.per_rank) {
    if (totals.rank == rank) return totals.split.compute;
  }
  return 0;
}

// A message's size in a finding's sentence: one decimal in the largest unit up to MiB. The
// reports' byte spellings (report/units.h) are of another layer, for tables.
std::string MessageSize(int64_t bytes) {
  if (bytes < 0) return "unknown size";
  const double size = static_cast<double>(bytes);
  if (bytes >= (int64_t{1} << 20)) return absl::StrFormat("%.1f MiB", size / (1 << 20));
  if (bytes >= 1024) return absl::StrFormat("%.1f KiB", size / 1024);
  return absl::StrCat(bytes, " B");
}

}  // namespace

std::vector<findings::Finding> Analyze(const Input& input, const Options& options) {
  std::vector<findings::Finding> out;
  const std::vector<int32_t>& order = *input.stage_order;
  const bubble::Result& bubble = *input.bubble;
  const int64_t iterations = std::max<int64_t>(1, bubble.complete_iterations);

  const auto uncertain = [&input](int32_t rank) {
    return input.uncertain_clock_ranks != nullptr &&
           std::binary_search(input.uncertain_clock_ranks->begin(),
                              input.uncertain_clock_ranks->end(), rank);
  };
  for (const link_stats::Link& link : *input.links) {
    if (!link.slow || link.clock_limited || uncertain(link.src) || uncertain(link.dst)) continue;
    findings::Finding finding;
    finding.kind = findings::Kind::kSlowLink;
    finding.severity = Severity::kWarning;
    finding.ranks = {link.src, link.dst};
    for (const stall_attribution::PeerStall& stall : input.stalls->stalls) {
      if (stall.rank == link.dst && stall.peer == link.src) finding.cost_ns = stall.in_transfer_ns;
    }
    finding.message = absl::StrFormat(
        "the link %s -> %s is slow: median %.2f Gbit/s (p10 %.2f) over %d transfers of %s, "
        "%.2fx the job's median of %.2f Gbit/s over %d links of similar message size; "
        "%s stalled %.3f ms per iteration in its transfers",
        StageName(order, link.src), StageName(order, link.dst), link.gbps_median, link.gbps_p10,
        link.transfers, MessageSize(link.median_message_bytes),
        link.gbps_median / link.reference_gbps, link.reference_gbps, link.reference_links,
        StageName(order, link.dst),
        Ms(static_cast<double>(finding.cost_ns) / static_cast<double>(iterations)));
    out.push_back(std::move(finding));
  }

  std::vector<TimeNs> computes;
  for (const bubble::RankTotals& totals : bubble.per_rank) computes.push_back(totals.split.compute);
  std::sort(computes.begin(), computes.end());
  const double median_compute =
      computes.empty() ? 0.0 : static_cast<double>(computes[(computes.size() - 1) / 2]);
  TimeNs windows = 0;
  for (const bubble::IterationFigures& iteration : bubble.iterations) {
    if (iteration.complete) windows += iteration.window();
  }
  const double mean_window = static_cast<double>(windows) / static_cast<double>(iterations);
  for (const stall_attribution::PeerStall& stall : input.stalls->stalls) {
    const link_stats::Link* link = FindLink(*input.links, stall.peer, stall.rank);
    if (link == nullptr || link->slow || link->implausible || link->clock_limited ||
        bubble.complete_iterations == 0 || uncertain(stall.rank) || uncertain(stall.peer)) {
      continue;
    }
    const double waited =
        static_cast<double>(stall.waiting_for_post_ns) / static_cast<double>(iterations);
    const double sender_compute = static_cast<double>(ComputeOf(bubble, stall.peer));
    const double busy_percent =
        median_compute > 0.0 ? 100.0 * (sender_compute - median_compute) / median_compute : 0.0;
    if (waited < options.late_min_fraction * mean_window ||
        busy_percent < options.busy_min_percent) {
      continue;
    }
    findings::Finding finding;
    finding.kind = findings::Kind::kLateSender;
    finding.severity = Severity::kWarning;
    finding.ranks = {stall.peer, stall.rank};
    finding.cost_ns = stall.waiting_for_post_ns;
    finding.message = absl::StrFormat(
        "%s waited %.3f ms per iteration for %s, which posted its sends late: its compute is "
        "%.0f%% above the pipeline's median rank; the link itself is not slow%s",
        StageName(order, stall.rank), Ms(waited), StageName(order, stall.peer), busy_percent,
        link->bandwidth_samples == 0
            ? std::string(" (no message sizes recorded, so its bandwidth is unknown)")
            : absl::StrFormat(" (median %.2f Gbit/s)", link->gbps_median));
    out.push_back(std::move(finding));
  }

  for (const p2p_matching::Unmatched& pair : *input.unmatched) {
    findings::Finding finding;
    finding.kind = findings::Kind::kUnmatchedP2p;
    finding.severity = Severity::kWarning;
    finding.ranks = {pair.src, pair.dst};
    std::string why = pair.dst_missing   ? absl::StrCat(" (no trace of rank ", pair.dst, ")")
                      : pair.src_missing ? absl::StrCat(" (no trace of rank ", pair.src, ")")
                                         : std::string(" (a trace ends early or lost events)");
    finding.message = absl::StrFormat(
        "rank %d issued %d sends to rank %d but rank %d issued %d receives from rank %d%s; the "
        "first %d of each are matched in order, the rest are left out of the link figures",
        pair.src, pair.sends, pair.dst, pair.dst, pair.recvs, pair.src, why,
        std::min(pair.sends, pair.recvs));
    out.push_back(std::move(finding));
  }
  // Summed rank time stops at the model's time range, as findings::Analyze's costs do.
  for (findings::Finding& finding : out) finding.cost_ns = std::min(finding.cost_ns, kMaxTimeNs);
  return out;
}

}  // namespace bubblescope::link_findings
