// Findings about a pipeline's links and its senders (docs/cross-rank.md, "Slow link or late
// sender"). Kinds (cost_ns as in findings/findings.h: idle rank time, complete iterations):
//  - "slow_link" (warning): a link link_stats marked slow; evidence: its median and p10
//    bandwidth, transfers, message size and the job's reference; cost = the receiver's stall
//    spent in transfers on that link.
//  - "late_sender" (warning): the receiver's stall spent waiting for a sender to post is at least
//    Options::late_min_fraction of the mean iteration window, on a link that is not slow, and the
//    sender's compute per iteration exceeds the pipeline's median rank compute by at least
//    Options::busy_min_percent: the sender is late because it is busy, and the link is fine.
//    Waiting behind a slow link or a late rank further up arrives on a sender that is not busy,
//    so it is not blamed on that sender. cost = that waiting.
//  - "unmatched_p2p" (warning): a directed pair whose send and receive counts differ; cost 0.
// No slow_link or late_sender names a rank whose clock is too uncertain, nor an implausible link,
// nor a link whose clocks are too uncertain against its transfers to judge it
// (link_stats::Link::clock_limited).
#pragma once

#include <cstdint>
#include <vector>

#include "analysis/bubble.h"
#include "crossrank/link_stats.h"
#include "crossrank/p2p_matching.h"
#include "crossrank/stall_attribution.h"
#include "findings/findings.h"

namespace bubblescope::link_findings {

struct Options {
  double late_min_fraction = 0.05;  // of the mean complete-iteration window
  double busy_min_percent = 10.0;   // sender compute above the pipeline's median rank compute
};

struct Input {
  const std::vector<int32_t>* stage_order = nullptr;  // rank of each stage
  const bubble::Result* bubble = nullptr;
  const std::vector<link_stats::Link>* links = nullptr;
  const stall_attribution::Result* stalls = nullptr;
  const std::vector<p2p_matching::Unmatched>* unmatched = nullptr;
  // Ranks whose clock alignment is too uncertain to time their links by
  // (crossrank/plausibility.h): no slow_link or late_sender names them. Null: none.
  const std::vector<int32_t>* uncertain_clock_ranks = nullptr;
};

std::vector<findings::Finding> Analyze(const Input& input, const Options& options);

}  // namespace bubblescope::link_findings
