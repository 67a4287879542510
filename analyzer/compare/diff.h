// The differences between two runs (`bubblescope diff A B`, docs/diff-and-gate.md): pipelines
// paired by their stage structure, then per pipeline its shape, bubble, latency, per-stage
// figures, links and findings on both sides. A pure function of two RunFigures; reports render
// the result.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "compare/run_figures.h"

namespace bubblescope::compare {

// One figure on both sides (nullopt where a side lacks it).
struct Change {
  std::optional<double> a;
  std::optional<double> b;
  // The larger of the two sides' iteration-to-iteration ranges (max - min over the complete
  // iterations) of this figure; nullopt when no side has two complete iterations or the figure
  // has no per-iteration values.
  std::optional<double> spread;

  bool Both() const { return a.has_value() && b.has_value(); }
  double Delta() const { return Both() ? *b - *a : 0.0; }
  // Delta / a; nullopt unless both sides have the figure and a is not 0.
  std::optional<double> Relative() const;
  // Both sides have it, the spread is known and |delta| is no larger than it.
  bool WithinSpread() const;
};

// How two pipelines were paired, strongest first.
enum class Pairing : uint8_t {
  kSameRanks,       // the same ranks in the same stage order
  kSameRankSet,     // the same ranks, in another order
  kSameStageCount,  // as many stages (p), other ranks: the k-th such pipeline of each side
  kPosition,        // what was left, in report order (p differs)
  kOnlyA,
  kOnlyB,
};
std::string_view PairingName(Pairing pairing);  // "same_ranks", ..., "only_a", "only_b"

// p, m, v or the schedule differs (or is known on one side only).
struct ShapeChange {
  std::string figure;  // "p", "m", "v", "schedule"
  std::string a;       // "-" when unknown
  std::string b;
};

// One pipeline position on both sides.
struct StageDiff {
  int32_t stage = 0;
  std::optional<int32_t> rank_a;
  std::optional<int32_t> rank_b;
  Change bubble_fraction;
  Change peak_allocated_bytes;
  Change peak_reserved_bytes;
  Change forward_us;
  Change backward_us;
  Change weight_grad_us;
};

// One directed link, keyed by the pipeline positions of its ends.
struct LinkDiff {
  int32_t src_stage = 0;
  int32_t dst_stage = 0;
  std::optional<std::pair<int32_t, int32_t>> ranks_a;  // (src, dst) rank ids
  std::optional<std::pair<int32_t, int32_t>> ranks_b;
  Change transfer_us_median;
  Change gbps_median;
  Change wait_us;
  std::optional<bool> slow_a;
  std::optional<bool> slow_b;
};

enum class FindingChange : uint8_t { kAppeared, kDisappeared, kPersisting };
std::string_view FindingChangeName(FindingChange change);  // "appeared", ...

// A finding matched across the sides by its kind and the pipeline positions of its ranks (or
// "the whole pipeline" when it names every rank), so a job moved to other rank ids still pairs.
struct FindingDiff {
  FindingChange change = FindingChange::kPersisting;
  std::string kind;
  std::string severity;  // B's when both sides have it
  std::string message;   // B's when both sides have it
  std::vector<int32_t> ranks_a;
  std::vector<int32_t> ranks_b;
  Change cost_us;
};

struct PipelineDiff {
  Pairing pairing = Pairing::kSameRanks;
  std::optional<int32_t> index_a;  // into each side's pipelines
  std::optional<int32_t> index_b;
  std::vector<int32_t> ranks_a;
  std::vector<int32_t> ranks_b;
  std::vector<ShapeChange> shape_changes;
  Change bubble_fraction;
  Change theoretical_bubble_fraction;
  Change excess_bubble_fraction;
  Change latency_p50_us;
  Change latency_p90_us;
  Change latency_max_us;
  Change complete_iterations;
  // Why a side has no complete iteration (PipelineFigures::no_complete_iteration); empty when
  // it has one. Such a side has no bubble or latency (nullopt above, the stages' bubble too).
  std::string no_complete_iteration_a;
  std::string no_complete_iteration_b;
  std::vector<StageDiff> stages;      // by position
  std::vector<LinkDiff> links;        // by (src, dst) position
  std::vector<FindingDiff> findings;  // appeared, disappeared, persisting; by cost within each
};

struct DiffResult {
  std::string source_a;
  std::string source_b;
  // Paired pipelines in A's order, then those only in A, then those only in B.
  std::vector<PipelineDiff> pipelines;
};

DiffResult Diff(const RunFigures& a, const RunFigures& b);

// "pipeline 0", "pipeline 0 -> 1" (paired at other indices), "pipeline 2 (A only)".
std::string PipelineLabel(const PipelineDiff& pipeline);

}  // namespace bubblescope::compare
