#include "crossrank/stall_attribution.h"

#include <algorithm>
#include <map>
#include <utility>

#include "common/interval_set.h"
#include "crossrank/link_stats.h"

namespace bubblescope::stall_attribution {
namespace {

// The rank's compute on the reference clock.
IntervalSet ComputeOf(const index::TraceIndex& index, int32_t rank_id,
                      const ClockOffsets& offsets) {
  std::vector<TimeRange> ranges;
  const int32_t position = index.PositionOf(rank_id);
  if (position < 0) return {};
  const RankClock offset = offsets.Of(rank_id);
  for (const index::DeviceOp& op : index.ranks[static_cast<size_t>(position)].ops) {
    if (op.op_class == index::OpClass::kCompute) {
      ranges.push_back(
          TimeRange{ClockOffsets::Move(op.start, offset), ClockOffsets::Move(op.end, offset)});
    }
  }
  return IntervalSet::FromRanges(std::move(ranges));
}

// The rank's stall region over the complete iterations.
IntervalSet StallRegion(const bubble::Result& bubble, int32_t rank, const IntervalSet& compute) {
  std::vector<TimeRange> spans;
  for (const bubble::IterationFigures& iteration : bubble.iterations) {
    if (!iteration.complete) continue;
    for (const bubble::RankIterationFigures& figures : iteration.ranks) {
      if (figures.rank != rank || !figures.present) continue;
      spans.push_back(TimeRange{figures.first_compute_start, figures.last_compute_end});
    }
  }
  return IntervalSet::FromRanges(std::move(spans)).Subtract(compute);
}

}  // namespace

Result Analyze(const index::TraceIndex& index, const bubble::Result& bubble,
               const std::vector<p2p_matching::Transfer>& transfers, const ClockOffsets& offsets) {
  Result result;
  result.complete_iterations = bubble.complete_iterations;
  struct Parts {
    std::vector<TimeRange> waiting;
    std::vector<TimeRange> moving;
  };
  std::map<std::pair<int32_t, int32_t>, Parts> parts;  // (receiver, sender)
  for (const p2p_matching::Transfer& transfer : transfers) {
    if (std::find(bubble.ranks.begin(), bubble.ranks.end(), transfer.dst) == bubble.ranks.end()) {
      continue;
    }
    const link_stats::AlignedTransfer times = link_stats::Align(transfer, offsets);
    Parts& pair = parts[{transfer.dst, transfer.src}];
    const TimeNs posted = std::min(std::max(times.send_start, times.recv_start), times.recv_end);
    pair.waiting.push_back(TimeRange{times.recv_start, posted});
    pair.moving.push_back(TimeRange{posted, times.recv_end});
  }
  int32_t region_rank = -1;
  IntervalSet region;
  for (auto& [key, pair] : parts) {
    if (key.first != region_rank) {
      region_rank = key.first;
      region = StallRegion(bubble, region_rank, ComputeOf(index, region_rank, offsets));
    }
    PeerStall stall;
    stall.rank = key.first;
    stall.peer = key.second;
    stall.waiting_for_post_ns =
        IntervalSet::FromRanges(std::move(pair.waiting)).IntersectionLength(region);
    stall.in_transfer_ns =
        IntervalSet::FromRanges(std::move(pair.moving)).IntersectionLength(region);
    if (stall.total_ns() > 0) result.stalls.push_back(stall);
  }
  return result;
}

}  // namespace bubblescope::stall_attribution
