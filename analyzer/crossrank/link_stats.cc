#include "crossrank/link_stats.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <map>
#include <utility>

#include "common/percentile.h"

namespace bubblescope::link_stats {
namespace {

constexpr TimeNs kUnboundedError = std::numeric_limits<TimeNs>::max();

int32_t SizeClass(int64_t bytes) {
  if (bytes <= 0) return -1;
  return static_cast<int32_t>(std::bit_width(static_cast<uint64_t>(bytes)) - 1) / 2;
}

// The uncertainty between two ranks' clocks as applied.
TimeNs PairUncertainty(const std::vector<ClockError>& errors, int32_t src, int32_t dst) {
  const ClockError* from = nullptr;
  const ClockError* to = nullptr;
  for (const ClockError& error : errors) {
    if (error.rank == src) from = &error;
    if (error.rank == dst) to = &error;
  }
  if (from != nullptr && to != nullptr && from->node >= 0 && from->node == to->node) return 0;
  return SaturatingAdd(from == nullptr ? 0 : from->error_ns, to == nullptr ? 0 : to->error_ns);
}

}  // namespace

AlignedTransfer Align(const p2p_matching::Transfer& transfer, const ClockOffsets& offsets) {
  return AlignedTransfer{offsets.ToReference(transfer.src, transfer.send.start),
                         offsets.ToReference(transfer.src, transfer.send.end),
                         offsets.ToReference(transfer.dst, transfer.recv.start),
                         offsets.ToReference(transfer.dst, transfer.recv.end)};
}

std::vector<Link> Analyze(const std::vector<p2p_matching::Transfer>& transfers,
                          const ClockOffsets& offsets, const std::vector<ClockError>& errors) {
  struct Samples {
    std::vector<TimeNs> transfer;
    std::vector<TimeNs> all_durations;
    std::vector<double> gbps;
    std::vector<int64_t> sizes;
  };
  std::map<std::pair<int32_t, int32_t>, std::pair<Link, Samples>> links;
  for (const p2p_matching::Transfer& transfer : transfers) {
    auto& [link, samples] = links[{transfer.src, transfer.dst}];
    link.src = transfer.src;
    link.dst = transfer.dst;
    link.clock_uncertainty_ns = PairUncertainty(errors, transfer.src, transfer.dst);
    const AlignedTransfer aligned = Align(transfer, offsets);
    const int64_t bytes = transfer.send.bytes >= 0 ? transfer.send.bytes : transfer.recv.bytes;
    ++link.transfers;
    if (bytes >= 0) {
      link.bytes = SaturatingAdd(link.bytes, bytes);
      samples.sizes.push_back(bytes);
    }
    const TimeNs both_posted = std::max(aligned.send_start, aligned.recv_start);
    const TimeNs moving = std::max<TimeNs>(0, aligned.recv_end - both_posted);
    samples.all_durations.push_back(moving);
    // Judged only where the clocks' uncertainty cannot move its time by more than a tenth.
    const bool judged =
        link.clock_uncertainty_ns == 0 || (link.clock_uncertainty_ns <= moving / kJudgedShare &&
                                           link.clock_uncertainty_ns != kUnboundedError);
    if (judged) ++link.judged_transfers;
    if (transfer.timed) ++link.timed_transfers;
    if (transfer.timed && judged) {
      link.transfer_total_ns = SaturatingAdd(link.transfer_total_ns, moving);
      samples.transfer.push_back(moving);
      if (bytes > 0 && moving > 0) {
        samples.gbps.push_back(static_cast<double>(bytes) * 8.0 / static_cast<double>(moving));
      }
    }
    link.sender_wait_ns = SaturatingAdd(
        link.sender_wait_ns,
        std::max<TimeNs>(0, std::min(aligned.recv_start, aligned.send_end) - aligned.send_start));
    link.receiver_wait_ns = SaturatingAdd(
        link.receiver_wait_ns,
        std::max<TimeNs>(0, std::min(aligned.send_start, aligned.recv_end) - aligned.recv_start));
  }
  std::vector<Link> out;
  for (auto& [key, entry] : links) {
    auto& [link, samples] = entry;
    link.clock_limited = link.transfers > 0 && link.judged_transfers == 0;
    link.transfer_median_all_ns = NearestRank(samples.all_durations, 50);
    link.transfer_median_ns = NearestRank(samples.transfer, 50);
    link.median_message_bytes = samples.sizes.empty() ? -1 : NearestRank(samples.sizes, 50);
    link.bandwidth_samples = static_cast<int64_t>(samples.gbps.size());
    link.gbps_median = NearestRank(samples.gbps, 50);
    link.gbps_p10 = NearestRank(samples.gbps, 10);
    link.implausible = link.bandwidth_samples > 0 && link.gbps_median > kMaxPhysicalGbps;
    out.push_back(link);
  }
  return out;
}

void MarkSlowLinks(std::vector<std::vector<Link>*> pipelines, const SlowOptions& options) {
  std::map<int32_t, std::vector<double>> by_class;
  for (std::vector<Link>* links : pipelines) {
    for (const Link& link : *links) {
      if (link.bandwidth_samples == 0 || link.implausible) continue;
      by_class[SizeClass(link.median_message_bytes)].push_back(link.gbps_median);
    }
  }
  for (std::vector<Link>* links : pipelines) {
    for (Link& link : *links) {
      link.slow = false;
      link.reference_gbps = 0.0;
      link.reference_links = 0;
      if (link.bandwidth_samples == 0 || link.implausible) continue;
      const std::vector<double>& peers = by_class[SizeClass(link.median_message_bytes)];
      link.reference_links = static_cast<int32_t>(peers.size());
      if (link.reference_links < options.min_links_per_class) continue;
      link.reference_gbps = NearestRank(peers, 50);
      link.slow = link.gbps_median < options.threshold * link.reference_gbps;
    }
  }
}

}  // namespace bubblescope::link_stats
