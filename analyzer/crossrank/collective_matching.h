// The collectives that ranks of a pipeline ran together, as clock evidence (docs/cross-rank.md,
// "Clocks").
//
// A collective kernel of a process group runs on every member, and the k-th collective of a
// group on one rank is the k-th on every other member (NCCL requires all members to issue a
// group's collectives in the same order). Its kernels end together: the last exchange of a ring
// or tree completes on every rank within a link latency of the others. So two members' k-th
// ends are one instant, a sample of their clocks' difference, independent of point-to-point
// traffic, which is what a pipeline whose batched transfers give no sample (a batch with both
// neighbours ends with whichever finished last) needs.
//
// Groups are known by their ranks (`Process Group Ranks`) or, without them, their name; a
// collective whose group is unknown is not used. When every collective of a group on two
// members carries the group's sequence number (Kineto's `Seq`, copied onto the kernel from its
// `record_param_comms` op since kineto #1296, 2026), equal numbers are one collective, so the
// pair is exact even when one window started or ended mid-way. Otherwise a group whose members
// recorded different numbers of collectives (a profiling window that started or ended mid-way on
// some rank) gives nothing: the k-th ones may not be the same. CPU-only ranks are left out: gloo
// collectives are not one kernel that ends together.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "bubblescope/trace.h"
#include "index/rank_index.h"

namespace bubblescope::collective_matching {

// The k-th collective of one group on two member ranks: a is the group's lowest rank among the
// pipeline's, b another member; each end on its own clock.
struct MatchedEnds {
  int32_t a = -1;
  int32_t b = -1;
  TimeNs a_end = 0;
  TimeNs b_end = 0;
  TimeNs b_duration = 0;  // of b's kernel: how long it may have waited for the others
  TimeNs a_duration = 0;  // of a's kernel (its start bounds b's end: causality)
  // Paired by the sequence number both kernels carry (Kineto's "Seq"), not by position.
  bool by_id = false;
};

struct Options {
  std::vector<int32_t>
      ranks;  // the ranks considered (a pipeline's, or the job's); only pairs of them are matched
};

// One collective kernel of a group on one member, on the member's clock.
struct Kernel {
  TimeNs end = 0;
  TimeNs duration = 0;
  int64_t seq = -1;  // the group's sequence number (Kineto's "Seq"); -1 when not recorded
};

// Per group (a key naming it the same way on every member): per member rank, its collective
// kernels in start order. What matching reads of the ranks, so that ranks read apart (a job
// analysed part by part, job/job_parts.h) can be matched together: each rank's kernels are
// collected where its events are, and the collections joined (Join) before matching.
struct Kernels {
  std::map<std::string, std::map<int32_t, std::vector<Kernel>>> groups;
};

Kernels Collect(const Trace& trace, const index::TraceIndex& index, const Options& options);

// Adds `other`'s ranks to `into` (a rank in both keeps `into`'s kernels).
void Join(Kernels& into, Kernels other);

// Each member of each group against the group's lowest rank.
std::vector<MatchedEnds> Match(const Kernels& kernels);

// Match(Collect(...)).
std::vector<MatchedEnds> Analyze(const Trace& trace, const index::TraceIndex& index,
                                 const Options& options);

}  // namespace bubblescope::collective_matching
