// Per directed link: how much moved, how fast, and who waited (docs/cross-rank.md, "Links").
//
// On the aligned clock (each op's time minus its rank's clock offset), for a matched transfer
// whose times are its own (p2p_matching::Transfer::timed):
//   transfer time = recv end - the later of the two posts (send start, recv start), so time spent
//                   waiting for the peer to post is not counted as transfer;
//   bandwidth     = bytes * 8 / transfer time, in Gbit/s (bits per ns); transfers without a
//                   known size or with zero transfer time have none;
//   sender wait   = from the send's post to the recv's post (0 when the recv was posted first);
//   receiver wait = from the recv's post to the send's post (0 when the send was posted first).
// Links are judged only where the clocks allow: a transfer's figures count only when the
// uncertainty of its two ends' clocks against each other (0 on one clock; else the sum of each
// clock's error bound as applied, clock_alignment::RankOffset::ErrorBound) is at most a tenth of
// its own duration (recv end - the later post, on the aligned clocks), so no clock error can move
// its time by more than 10 %. A link with transfers but none judged says it cannot be judged
// (`clock_limited`), with the uncertainty: no bandwidth, never slow, no reference, no late sender.
// Percentiles are nearest-rank: the q-quantile of n sorted values is the ceil(q n)-th smallest.
//
// Slow link (MarkSlowLinks, over every link of the job at once): a link whose median bandwidth is
// below threshold × the job's reference for messages of its size class, the reference being the
// nearest-rank median of the median bandwidths of the job's links in that class. Size classes
// are factor-of-4 bands of a link's median message size (floor(log2(bytes) / 2)). A class needs
// at least 3 links for a reference, so a lone slow link stands out against healthy ones and a
// job whose links are all alike is never flagged.
#pragma once

#include <cstdint>
#include <vector>

#include "analysis/clock_offsets.h"
#include "bubblescope/trace.h"
#include "crossrank/p2p_matching.h"

namespace bubblescope::link_stats {

struct Link {
  int32_t src = -1;
  int32_t dst = -1;
  int64_t transfers = 0;
  int64_t bytes = 0;                  // total of the known sizes
  int64_t median_message_bytes = -1;  // -1 when no size is known
  // Transfers whose own times are known (p2p_matching::Transfer::timed); the transfer times and
  // bandwidths below are over those of these that are judged (above) only. A link of batches that
  // each also carry another peer's transfers has none, so it is never slow nor a reference.
  int64_t timed_transfers = 0;
  TimeNs transfer_median_ns = 0;  // 0 without timed transfers
  TimeNs transfer_total_ns = 0;
  int64_t bandwidth_samples = 0;
  double gbps_median = 0.0;  // 0 when bandwidth_samples is 0
  double gbps_p10 = 0.0;
  // The median bandwidth is above any physical link (kMaxPhysicalGbps): the "transfers" did not
  // move the bytes in that time (a send completing before its peer posts, wrong pairing), so
  // the link is never marked slow nor used as a reference.
  bool implausible = false;
  // The uncertainty of the link's two clocks against each other (kUnbounded when nothing aligns
  // them), and the transfers long enough against it to be judged; only these give transfer
  // times and bandwidths.
  TimeNs clock_uncertainty_ns = 0;
  int64_t judged_transfers = 0;
  // Transfers, none long enough against the clocks' uncertainty: the link cannot be judged.
  bool clock_limited = false;
  TimeNs transfer_median_all_ns = 0;  // median duration over every transfer, judged or not
  TimeNs sender_wait_ns = 0;          // summed over transfers
  TimeNs receiver_wait_ns = 0;        // summed over transfers
  // Set by MarkSlowLinks.
  bool slow = false;
  double reference_gbps = 0.0;  // 0 when the size class has no reference
  int32_t reference_links = 0;  // links in the size class
};

// A transfer's times on the aligned clock.
struct AlignedTransfer {
  TimeNs send_start = 0;
  TimeNs send_end = 0;
  TimeNs recv_start = 0;
  TimeNs recv_end = 0;
};
AlignedTransfer Align(const p2p_matching::Transfer& transfer, const ClockOffsets& offsets);

// How far one rank's clock as applied may be from the reference (ErrorBound), and its clock
// node (ranks of one node share a clock, so their clocks agree exactly).
struct ClockError {
  int32_t rank = -1;
  int32_t node = -1;
  TimeNs error_ns = 0;
};

// A transfer is judged when 10 x the uncertainty is at most its duration.
inline constexpr TimeNs kJudgedShare = 10;

// One Link per directed (src, dst) pair with matched transfers, ordered by (src, dst). Ranks
// missing from `errors` are taken to be on the reference clock exactly.
std::vector<Link> Analyze(const std::vector<p2p_matching::Transfer>& transfers,
                          const ClockOffsets& offsets, const std::vector<ClockError>& errors = {});

// The fastest link a GPU has: NVLink 5, 900 GB/s per direction.
inline constexpr double kMaxPhysicalGbps = 7200.0;

struct SlowOptions {
  double threshold = 0.5;  // fraction of the reference bandwidth
  int32_t min_links_per_class = 3;
};

// Sets slow / reference_gbps / reference_links on every link of every pipeline of the job.
void MarkSlowLinks(std::vector<std::vector<Link>*> pipelines, const SlowOptions& options);

}  // namespace bubblescope::link_stats
