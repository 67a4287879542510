#include "findings/findings.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace bubblescope::findings {
namespace {

// Share of the window the pipeline's idle time takes, in percent.
double Percent(double fraction) { return 100.0 * fraction; }

void AddPipelineDepth(const bubble::Result& bubble, const schedule_inference::Result& shape,
                      const pipeline::IdealBubble& ideal, const whatif::Result* remedies,
                      std::vector<Finding>* out) {
  const double theoretical = ideal.fraction;
  if (theoretical <= 0.0) return;
  Finding finding;
  finding.kind = Kind::kPipelineDepth;
  finding.severity = Severity::kInfo;
  finding.ranks = bubble.ranks;
  finding.cost_ns = RoundToNs(theoretical * static_cast<double>(bubble.capacity));
  std::string remedy = shape.v > 1
                           ? "more microbatches per iteration would shrink it"
                           : "more microbatches per iteration or an interleaved schedule (several "
                             "virtual stages per rank) would shrink it";
  if (remedies != nullptr) {
    std::vector<std::string> predicted;
    for (const whatif::Prediction& prediction : remedies->candidates) {
      if (!prediction.problem.empty()) continue;
      predicted.push_back(absl::StrFormat(
          "%s would leave %.1f%% idle with a %.3f ms iteration",
          prediction.candidate.same_global_batch
              ? absl::StrCat("the same samples in m=", prediction.candidate.microbatches,
                             " microbatches")
              : absl::StrCat(std::string(sim::ScheduleName(prediction.candidate.schedule)),
                             " with v=", prediction.candidate.virtual_stages),
          Percent(prediction.bubble_fraction), Ms(static_cast<double>(prediction.iteration_ns))));
    }
    if (!predicted.empty()) {
      remedy = absl::StrCat(
          "predicted from this job's stage times and links (bubblescope whatif; ",
          "as measured the model gives ",
          absl::StrFormat("%.1f%% and %.3f ms", Percent(remedies->baseline.bubble_fraction),
                          Ms(static_cast<double>(remedies->baseline.iteration_ns))),
          "): ", absl::StrJoin(predicted, "; "));
    }
  }
  const char* how =
      ideal.source == pipeline::IdealSource::kUpperBound
          ? "(p-1)/(v*m+p-1), an upper bound for this zero-bubble schedule"
      : ideal.source == pipeline::IdealSource::kSimulated
          ? "ZB-H1 simulated with every stage at the mean measured F, B and W times and free "
            "links"
          : "(p-1)/(v*m+p-1)";
  finding.message = absl::StrFormat(
      "the schedule itself leaves %.1f%% of each iteration idle with p=%d stages, m=%d "
      "microbatches and v=%d virtual stages per rank (%s); %s",
      Percent(theoretical), shape.p, shape.m, shape.v, how, remedy);
  out->push_back(std::move(finding));
}

void AddExcessBubble(const bubble::Result& bubble, double theoretical, double excess,
                     const Options& options, std::vector<Finding>* out) {
  if (Percent(excess) <= options.excess_bubble_min_points) return;
  Finding finding;
  finding.kind = Kind::kExcessBubble;
  finding.severity = Severity::kWarning;
  finding.ranks = bubble.ranks;
  finding.cost_ns = RoundToNs(excess * static_cast<double>(bubble.capacity));
  finding.message = absl::StrFormat(
      "measured bubble is %.1f%% against %.1f%% in theory: %.1f percentage points (%.1f ms of "
      "rank time per iteration) are lost to transfers, imbalance or host delays",
      Percent(bubble.bubble_fraction), Percent(theoretical), Percent(excess),
      Ms(static_cast<double>(finding.cost_ns) / static_cast<double>(bubble.complete_iterations)));
  out->push_back(std::move(finding));
}

void AddStageImbalance(const bubble::Result& bubble, const schedule_inference::Result& shape,
                       const Options& options, const ImbalanceEffect* effect,
                       std::vector<Finding>* out) {
  if (shape.slowest_stage < 0 || shape.slowest_excess_percent < options.imbalance_min_percent) {
    return;
  }
  double slowest_ns = 0.0;
  // The words name the op types the stage time adds up: inference has no backward, and only
  // zero-bubble schedules a separate weight gradient.
  bool backward = false;
  bool weight_grad = false;
  for (const schedule_inference::StageFigures& stage : shape.stages) {
    if (stage.stage == shape.slowest_stage) slowest_ns = stage.mean_total_ns;
    backward = backward || stage.backward.count > 0;
    weight_grad = weight_grad || stage.weight_grad.count > 0;
  }
  Finding finding;
  finding.kind = Kind::kStageImbalance;
  finding.severity = Severity::kWarning;
  finding.ranks = {shape.slowest_rank};
  finding.cost_ns = RoundToNs(shape.slowest_excess_ns * static_cast<double>(shape.m) *
                              static_cast<double>(bubble.complete_iterations));
  finding.message = absl::StrFormat(
      "stage %d (rank %d) takes %.2f ms per microbatch (%s), %.1f%% above the %.2f ms mean over "
      "stages; the other stages wait for it",
      shape.slowest_stage, shape.slowest_rank, Ms(slowest_ns),
      weight_grad ? "forward + backward + weight gradient"
                  : (backward ? "forward + backward" : "forward"),
      shape.slowest_excess_percent, Ms(slowest_ns - shape.slowest_excess_ns));
  if (effect != nullptr && effect->stage == shape.slowest_stage) {
    // The saving the simulator predicts: every rank waits out the longer iteration, so the
    // rank time it costs is p x the iteration it adds, per complete iteration. That, not the
    // slow stage's own extra compute, is what fixing it gives back.
    const TimeNs added = effect->iteration_ns - effect->iteration_at_mean_ns;
    // The model says the others do not wait for it (its extra time hides in their stalls):
    // nothing to claim, and no finding.
    if (added <= 0) return;
    finding.cost_ns = RoundToNs(static_cast<double>(added) * static_cast<double>(shape.p) *
                                static_cast<double>(bubble.complete_iterations));
    // The iteration times are the stage_imbalance cause's to quote (its saving, from this same
    // prediction); the finding states the bubble the stage makes, where there is one: a stage
    // brought down to the mean does less work, so the bubble's share of a shorter iteration
    // can grow while the iteration shrinks.
    if (effect->bubble_fraction_at_mean < effect->bubble_fraction) {
      absl::StrAppend(
          &finding.message,
          absl::StrFormat(": the what-if model of this job puts the bubble at %.1f%% where a "
                          "stage at the mean would leave %.1f%%",
                          100.0 * effect->bubble_fraction,
                          100.0 * effect->bubble_fraction_at_mean));
    } else {
      absl::StrAppend(&finding.message,
                      ": the what-if model of this job predicts a shorter iteration with it at "
                      "the mean, though not a smaller bubble share (the stage would do less work)");
    }
  }
  absl::StrAppend(&finding.message,
                  ", so moving layers off it would shorten every iteration (layer counts from "
                  "--layers-per-stage or bubblescope:layers=N annotations give a concrete move)");
  out->push_back(std::move(finding));
}

// `ideal` may be null; its stage_stall_ns, when known, is what the schedule itself leaves each
// stage (bubble.per_rank is in stage order).
void AddPerRank(const bubble::Result& bubble, const pipeline::IdealBubble* ideal,
                const Options& options, std::vector<Finding>* out) {
  double iterations = static_cast<double>(bubble.complete_iterations);
  const bool own_stall_known =
      ideal != nullptr && ideal->stage_stall_ns.size() == bubble.per_rank.size();
  for (size_t stage = 0; stage < bubble.per_rank.size(); ++stage) {
    const bubble::RankTotals& rank = bubble.per_rank[stage];
    if (rank.window <= 0) continue;
    double window = static_cast<double>(rank.window);
    // One rule for both parts of a rank's stall: report it when it exceeds its share of the
    // window, costed at its own length; only the words differ.
    auto add_stall = [&](Kind kind, TimeNs stall, double min_fraction, const char* what,
                         const char* where, const char* why) {
      if (static_cast<double>(stall) <= min_fraction * window) return;
      Finding finding;
      finding.kind = kind;
      finding.severity = Severity::kWarning;
      finding.ranks = {rank.rank};
      finding.cost_ns = stall;
      finding.message =
          absl::StrFormat("rank %d %s %.1f ms per iteration%s (%.1f%% of its window) %s", rank.rank,
                          what, Ms(static_cast<double>(stall) / iterations), where,
                          Percent(static_cast<double>(stall) / window), why);
      out->push_back(std::move(finding));
    };
    // The schedule's own hand-offs leave a stage waiting on its neighbours with nothing to
    // compute; that wait is the pipeline depth, expected, never a fault.
    const TimeNs own = own_stall_known
                           ? static_cast<TimeNs>(std::llround(
                                 static_cast<double>(ideal->stage_stall_ns[stage]) * iterations))
                           : 0;
    add_stall(Kind::kCommWait, std::max<TimeNs>(0, rank.split.comm_wait - own),
              options.comm_wait_min_fraction, "waited",
              own_stall_known ? " in communication beyond what its schedule leaves it"
                              : " in communication",
              "with nothing to compute: its peer was late or the transfer slow");
    // On a CPU rank the "device" is the model thread itself: its gaps are framework or Python
    // time between ops, or a blocking wait that no op records (gloo waits often are).
    add_stall(Kind::kHostBound, rank.split.empty, options.host_bound_min_fraction, "sat idle", "",
              rank.device == index::DeviceKind::kCpu
                  ? "with no op running on its model thread: framework or Python time between "
                    "ops, or a wait no op records"
                  : "with nothing launched on the device: the host did not keep it busy");
  }
}

void AddRecompute(const bubble::Result& bubble, const whatif::Model& model,
                  std::vector<Finding>* out) {
  Finding finding;
  finding.kind = Kind::kRecompute;
  finding.severity = Severity::kInfo;
  double per_iteration = 0.0;
  std::vector<std::string> stages;
  for (size_t s = 0; s < model.stages.size(); ++s) {
    const whatif::StageModel& stage = model.stages[s];
    if (stage.recompute_ns <= 0.0) continue;
    finding.ranks.push_back(stage.rank);
    per_iteration += stage.recompute_ns * static_cast<double>(model.m);
    stages.push_back(absl::StrFormat("stage %d %.2f ms per microbatch, %.0f%% of its backward", s,
                                     Ms(stage.recompute_ns),
                                     Percent(stage.recompute_ns / stage.backward_ns)));
  }
  if (finding.ranks.empty()) return;
  finding.cost_ns = RoundToNs(per_iteration * static_cast<double>(bubble.complete_iterations));
  finding.message = absl::StrFormat(
      "activation checkpointing recomputes forwards inside the backward: %.1f ms of compute per "
      "iteration over the stages (%s); it keeps less activation memory at that price",
      Ms(per_iteration), absl::StrJoin(stages, "; "));
  out->push_back(std::move(finding));
}

void AddIncomplete(const bubble::Result& bubble, std::vector<Finding>* out) {
  int64_t incomplete = static_cast<int64_t>(bubble.iterations.size()) - bubble.complete_iterations;
  if (incomplete <= 0) return;
  Finding finding;
  finding.kind = Kind::kIncompleteIterations;
  finding.severity = Severity::kInfo;
  finding.ranks = bubble.ranks;
  finding.message =
      absl::StrCat(incomplete, " of ", bubble.iterations.size(), " iterations ",
                   incomplete == 1 ? "was" : "were",
                   " left out of every total: a rank lacks it or its trace was cut short in it");
  out->push_back(std::move(finding));
}

}  // namespace

std::string_view KindName(Kind kind) {
  switch (kind) {
    case Kind::kPipelineDepth:
      return "pipeline_depth";
    case Kind::kExcessBubble:
      return "excess_bubble";
    case Kind::kStageImbalance:
      return "stage_imbalance";
    case Kind::kCommWait:
      return "comm_wait";
    case Kind::kHostBound:
      return "host_bound";
    case Kind::kIncompleteIterations:
      return "incomplete_iterations";
    case Kind::kScheduleUnknown:
      return "schedule_unknown";
    case Kind::kSlowLink:
      return "slow_link";
    case Kind::kLateSender:
      return "late_sender";
    case Kind::kUnmatchedP2p:
      return "unmatched_p2p";
    case Kind::kRecompute:
      return "recompute";
  }
  return "unknown";
}

Result Analyze(const bubble::Result& bubble, const schedule_inference::Result* shape,
               const pipeline::IdealBubble* ideal, std::optional<double> excess_bubble_fraction,
               const Options& options, const ImbalanceEffect* imbalance,
               const whatif::Result* depth_remedies, const whatif::Model* model) {
  Result result;
  std::vector<Finding>& out = result.findings;
  if (bubble.complete_iterations > 0) {
    if (shape != nullptr && ideal != nullptr) {
      AddPipelineDepth(bubble, *shape, *ideal, depth_remedies, &out);
      if (excess_bubble_fraction.has_value()) {
        AddExcessBubble(bubble, ideal->fraction, *excess_bubble_fraction, options, &out);
      }
    }
    if (shape != nullptr) {
      AddStageImbalance(bubble, *shape, options, imbalance, &out);
    }
    AddPerRank(bubble, shape != nullptr ? ideal : nullptr, options, &out);
    if (model != nullptr) AddRecompute(bubble, *model, &out);
  }
  AddIncomplete(bubble, &out);
  if (shape == nullptr) {
    Finding finding;
    finding.kind = Kind::kScheduleUnknown;
    finding.severity = Severity::kInfo;
    finding.ranks = bubble.ranks;
    finding.message =
        options.shape_unknown_reason.empty()
            ? "the pipeline's stages, microbatches and schedule could not be "
              "inferred, so only the measured bubble is reported"
            : absl::StrCat(
                  "the pipeline's stages, microbatches and schedule could "
                  "not be inferred (",
                  options.shape_unknown_reason, "), so only the measured bubble is reported");
    out.push_back(std::move(finding));
  }
  // A cost is rank time summed over ranks and iterations: times years apart (a hostile trace)
  // can sum past the model's time range, which no report can carry (its readers refuse a time
  // beyond 2^62 ns). No real job comes near it, so the cost stops there.
  for (Finding& finding : out) finding.cost_ns = std::min(finding.cost_ns, kMaxTimeNs);
  std::stable_sort(out.begin(), out.end(),
                   [](const Finding& a, const Finding& b) { return a.cost_ns > b.cost_ns; });
  return result;
}

}  // namespace bubblescope::findings
