// Clock offsets between the ranks of one pipeline (docs/cross-rank.md, "Clocks"), and whether the
// evidence for them is strong enough to apply. Consumers apply them through ClockOffsets
// (analysis/clock_offsets.h); nothing is copied onto the reference clock.
//
// A rank's offset is how far its clock runs ahead of the reference clock (the pipeline's first
// stage): trace time = reference time + offset. Evidence, strongest first:
//  1. same host: ranks whose traces name one host (Kineto's `host_name`) share one clock, so
//     they are one clock node and never move against each other;
//  2. collectives paired by the sequence number each end carries (`Seq`);
//  3. rendezvous ends of transfers (clock_evidence.h);
//  4. collectives paired by position;
//  5. causality bounds alone.
// One clock model per job (FitJob): every piece of evidence of every pipeline and of the job's
// collectives is pooled per pair of clock nodes, and each pair's difference is fitted as a line,
// an offset and a rate (drift between two hosts' oscillators): with samples, a robust line
// (Theil-Sen over time bins, kept only where it leaves a smaller largest residual than a constant)
// uncertain by its largest residual; samples whose residual exceeds the median receive's
// duration (at least 1 us) disagree (as_recorded). An estimate that puts any receive's end before
// its send's start, or a collective's end before another member started it, is rejected (the
// pair's `rejected_by` names that sample) and the pair falls back to its bounds. Bounds alone:
// 0 when every bound allows it (uncertain by the farther bound), else the middle of the
// narrowest band the bounds leave (a constant, or a line where drift leaves no constant),
// uncertain by half its width; bounds on one side only leave it unbounded. Each pipeline's
// nodes are placed from its reference's along the chain of least total uncertainty (ties by
// node); uncertainties add along the chain, and a rank carries the weakest kind of evidence on
// its chain. A placement that breaks a causality bound of the job is rejected the same way.
//
// Applied only where the evidence is tight (Verdict): uncertainty at most Options::tolerance_ns
// (small against the ops it moves), not from bounds of guessed peers, samples that agree, and an
// estimate at least twice its uncertainty from 0 (else the recorded clocks are within the
// evidence and stay). Then the true offset lies within the uncertainty of the estimate, closer
// to it than to the recorded 0, so moving the clock never takes it farther from the truth. And
// offsets are applied to all or none of the pipeline: when one rank cannot be aligned, moving
// only the others could make the figures between them worse, so every clock stays as recorded
// (a loose estimate far from the recorded clock, moved as a guess, is held back alike).
// A rank whose trace starts at its own zero has no recorded clock worth keeping: its estimate is
// applied even when weak, as a guess (kGuessApplied).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "analysis/clock_offsets.h"
#include "bubblescope/trace.h"
#include "crossrank/clock_evidence.h"
#include "crossrank/collective_matching.h"
#include "crossrank/p2p_matching.h"

namespace bubblescope::clock_alignment {

// Where a rank's estimate comes from: the weakest evidence on its chain to the reference.
enum class Source : uint8_t {
  kReference,  // the pipeline's first stage
  kSameHost,   // the reference's host: its clock
  kMatchedIds,
  kRendezvous,
  kCollectives,
  kCausalityBounds,
  kNone,  // nothing connects it to the reference
};

std::string_view SourceName(Source source);  // "reference", "same_host", "matched_ids", ...

// What became of a rank's estimate.
enum class Verdict : uint8_t {
  kSameClock,     // the reference, or on its host: offset 0 by fact
  kApplied,       // tight evidence: the estimate is the offset
  kConsistent,    // tight evidence that allows the recorded clocks: offset 0
  kHeldBack,      // tight, but another rank of the pipeline is not: offset 0
  kNoEvidence,    // unaligned: nothing connects it to the reference
  kLoose,         // unaligned: uncertain beyond the tolerance
  kDisagree,      // unaligned: the samples put the clocks on both sides of each other
  kGuessedPeers,  // unaligned: only bounds, from transfers paired through guessed peers
  // Unaligned, yet moved: its trace's times start at its own zero (no shared time base), so the
  // recorded clock says nothing and the weak estimate is the best there is; or the estimate is
  // too loose for the tolerance but at least twice its uncertainty from the recorded clock, which
  // is then surely farther from the truth. A guess.
  kGuessApplied,
  // Unaligned: every estimate the evidence allowed would put a receive's end before its send's
  // start (or a collective's end before a member started it); kept as recorded.
  kBreaksCausality,
};

std::string_view VerdictName(Verdict verdict);  // "same_clock", "applied", ...

struct RankOffset {
  int32_t rank = -1;
  int32_t clock_node = -1;  // ranks with one node share one clock (one host)
  std::string host = {};    // as the trace names it; empty when unknown
  Source source = Source::kNone;
  Verdict verdict = Verdict::kNoEvidence;
  // On the reference clock: its offset (possibly 0) is what the evidence says, within the
  // tolerance. False: left on its own clock, which may be off by more.
  bool aligned = false;
  TimeNs offset_ns = 0;  // rank clock - reference clock at anchor_ns, as every consumer applies it
  TimeNs estimate_ns =
      0;  // what the evidence says at anchor_ns, applied or not (0 without evidence)
  // How fast the rank's clock runs against the reference's (1e-6: 1 ppm); applied with the
  // offset, 0 when the fit supports none.
  double rate = 0.0;
  TimeNs anchor_ns = 0;       // where offset_ns and estimate_ns hold, on the rank's clock
  TimeNs farthest_ns = 0;     // the estimate's largest distance from 0 over the job's span
  TimeNs uncertainty_ns = 0;  // of the estimate; kUnbounded when no bound holds
  TimeNs residual_ns = 0;     // largest residual of the placing pair's samples about its fit
  int64_t samples = 0;        // on the chain edge that placed it (0 for the reference)
  // An estimate on its chain broke causality (clock_evidence.h) and was rejected: the sample it
  // broke. Empty when none was.
  std::string rejected_by = {};
  // Its samples disagreed on which clock runs ahead (see above): kept as recorded, a guess.
  bool as_recorded = false;
  // Its trace's times start at its own zero (StartsAtItsOwnZero): why a guess may be applied.
  bool own_zero = false;

  // The estimate is the offset (tight, or a guess on a clock that started at its own zero).
  bool applied() const { return verdict == Verdict::kApplied || verdict == Verdict::kGuessApplied; }
  // How far its clock as applied may be from the reference clock: the uncertainty when aligned,
  // else the estimate's distance plus its uncertainty (unbounded without evidence).
  TimeNs ErrorBound() const;
};

struct Options {
  // The pipeline's ranks; the first is the reference.
  std::vector<int32_t> ranks;
  // Each rank's host as its trace names it, in `ranks` order; empty (or missing): unknown.
  std::vector<std::string> hosts = {};
  // The most uncertainty an applied offset may have (ClockTolerance). The default holds any
  // bounded uncertainty tight.
  TimeNs tolerance_ns = kUnbounded - 1;
  // The transfers were paired through peers inferred from the schedule, not recorded: their
  // causality bounds prove nothing (a wrong pairing bounds the wrong clocks).
  bool peers_guessed = false;
  // Per rank of `ranks` (missing: false): its trace's times start at its own zero
  // (StartsAtItsOwnZero), so its recorded clock is no evidence against any estimate.
  std::vector<bool> own_zero = {};
  // Where the pipeline's offsets are given, and half the time its transfers span; with a span
  // of 0, the job's anchor and span (JobClocks). The pipeline's own, so that a pipeline reads
  // the same whether the rest of the job was analysed with it or not.
  TimeNs anchor_ns = 0;
  TimeNs half_span_ns = 0;
};

struct Result {
  std::vector<RankOffset> offsets;  // in Options::ranks order
};

// A line d(t) = offset_ns + rate * (t - anchor): a difference of two clocks over time.
struct Line {
  TimeNs offset_ns = 0;
  double rate = 0.0;
};

// What one pair of clock nodes' pooled evidence says (FitJob).
struct PairFit {
  Line line;  // d = clock(b) - clock(a), a < b
  TimeNs uncertainty_ns = kUnbounded;
  TimeNs residual_ns = 0;  // largest residual of the samples about the line
  int64_t samples = 0;
  Source source = Source::kCausalityBounds;
  bool as_recorded = false;      // the samples disagree
  bool bounds_guessed = false;   // only bounds, some from transfers paired through guessed peers
  std::string rejected_by = {};  // the samples' line broke this causality bound
};

// Everything the job's clocks are fitted from.
struct JobInput {
  std::vector<int32_t> ranks;      // every rank of every pipeline
  std::vector<std::string> hosts;  // per rank of `ranks`; empty (or missing): unknown
  std::vector<TransferSet> transfers;
  std::vector<collective_matching::MatchedEnds> collectives;
};

// The job's clock model: one clock per node, the pooled evidence and each pair's fit.
struct JobClocks {
  std::map<int32_t, int32_t> node_of;  // rank -> clock node
  int32_t nodes = 0;
  TimeNs anchor_ns = 0;     // the middle of the job's evidence, where offsets are given
  TimeNs half_span_ns = 0;  // half the time the evidence spans
  std::map<std::pair<int32_t, int32_t>, PairEvidence> evidence;
  std::map<std::pair<int32_t, int32_t>, PairFit> fits;
};

JobClocks FitJob(const JobInput& input);

// One pipeline's offsets against its first stage (Options::ranks[0]) from the job's model.
// Options::hosts and peers_guessed are read by the two-step form below only.
Result Analyze(const JobClocks& clocks, const Options& options);

// The job model of these transfers and collectives alone, then Analyze: one pipeline on its own.
// `collectives` (collective_matching.h) give samples to pairs whose transfers give none.
Result Analyze(const std::vector<p2p_matching::Transfer>& transfers, const Options& options,
               const std::vector<collective_matching::MatchedEnds>& collectives = {});

// The rank's times start within a minute of zero: a trace written against its own start (torch
// without Kineto), not a clock other ranks share (wall or boot time, days and years from zero).
bool StartsAtItsOwnZero(const Rank& rank);

// A host name that identifies no machine ("localhost", empty): ranks naming it are not taken
// to share a clock.
bool IsAnonymousHost(std::string_view host);

// The offsets as the per-rank map every consumer applies.
ClockOffsets AsClockOffsets(const std::vector<RankOffset>& offsets);

}  // namespace bubblescope::clock_alignment
