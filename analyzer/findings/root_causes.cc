#include "findings/root_causes.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace bubblescope::root_causes {
namespace {

using findings::Finding;
using findings::Kind;

int32_t StageOf(const std::vector<int32_t>& order, int32_t rank) {
  const auto it = std::find(order.begin(), order.end(), rank);
  return it == order.end() ? -1 : static_cast<int32_t>(it - order.begin());
}

std::string StageName(const std::vector<int32_t>& order, int32_t rank) {
  const int32_t stage = StageOf(order, rank);
  return stage < 0 ? absl::StrCat("rank ", rank)
                   : absl::StrCat("stage ", stage, " (rank ", rank, ")");
}

// Builds the causes, each prediction made against one baseline of the model.
class Builder {
 public:
  explicit Builder(const Input& input) : input_(input), order_(*input.stage_order) {
    iterations_ = static_cast<double>(std::max<int64_t>(1, input.bubble->complete_iterations));
    if (input.model != nullptr) {
      absl::StatusOr<whatif::Prediction> baseline = whatif::PredictAsMeasured(*input.model);
      if (baseline.ok()) baseline_ = baseline->iteration_ns;
    }
  }

  RootCause New(Cause cause, Severity severity, const Finding& finding, size_t index) const {
    RootCause out;
    out.cause = cause;
    out.severity = severity;
    out.ranks = finding.ranks;
    out.cost_per_iteration_ns = PerIteration(finding.cost_ns);
    out.findings = {index};
    return out;
  }

  TimeNs PerIteration(TimeNs total) const {
    return RoundToNs(static_cast<double>(total) / iterations_);
  }

  // Sets the saving of `cause` to what the model predicts with `fixed` in place of the job.
  void PredictFix(const whatif::Model& fixed, RootCause& cause) const {
    if (baseline_ <= 0) return;
    absl::StatusOr<whatif::Prediction> after = whatif::PredictAsMeasured(fixed);
    if (!after.ok()) return;
    SetSaving(after->iteration_ns, cause);
  }

  void SetSaving(TimeNs iteration_after, RootCause& cause) const {
    cause.iteration_before_ns = baseline_;
    cause.iteration_after_ns = iteration_after;
    cause.saving_per_iteration_ns = std::max<TimeNs>(0, baseline_ - iteration_after);
  }

  RootCause Depth(const Finding& finding, size_t index) const {
    RootCause cause = New(Cause::kScheduleDepth, Severity::kInfo, finding, index);
    cause.summary = "the schedule's own fill and drain (expected with any pipeline schedule)";
    const whatif::Result* remedies = input_.depth_remedies;
    const whatif::Prediction* best = nullptr;
    if (remedies != nullptr && baseline_ > 0) {
      for (const whatif::Prediction& prediction : remedies->candidates) {
        if (!prediction.problem.empty() || prediction.fits_memory == std::optional<bool>(false)) {
          continue;
        }
        if (best == nullptr || prediction.iteration_ns < best->iteration_ns) best = &prediction;
      }
    }
    if (best != nullptr && best->iteration_ns >= baseline_) {
      SetSaving(baseline_, cause);  // predicted, and nothing to gain
      cause.fix = "none of the shallower configurations tried is predicted to be faster";
      cause.next_step = "bubblescope whatif on these traces: more microbatches or another schedule";
      return cause;
    }
    if (best == nullptr) {
      cause.fix = "no shallower configuration could be predicted";
      cause.next_step = "bubblescope whatif on these traces: more microbatches or another schedule";
      return cause;
    }
    SetSaving(best->iteration_ns, cause);
    const whatif::Candidate& c = best->candidate;
    cause.fix = absl::StrCat(
        c.same_global_batch
            ? absl::StrCat("the same samples in m=", c.microbatches, " microbatches")
            : absl::StrCat("the ", std::string(sim::ScheduleName(c.schedule)), " schedule",
                           c.virtual_stages > 1 ? absl::StrCat(" with v=", c.virtual_stages) : ""),
        best->fits_memory.has_value() ? " (fits the measured memory headroom)"
                                      : " (memory headroom unknown)");
    cause.next_step = absl::StrCat("try ", cause.fix,
                                   "; bubblescope whatif lists every candidate with its memory");
    return cause;
  }

  RootCause Imbalance(const Finding& finding, size_t index) const {
    RootCause cause = New(Cause::kStageImbalance, Severity::kWarning, finding, index);
    const int32_t stage = input_.shape->slowest_stage;
    cause.summary = absl::StrCat("stage ", stage, " (rank ", input_.shape->slowest_rank,
                                 ") computes longer per microbatch than the others");
    cause.fix = absl::StrCat("stage ", stage,
                             " at the mean forward, backward and weight-gradient "
                             "time over stages");
    const rebalance::ImbalanceEffect* effect = input_.slowest_stage_effect;
    if (effect != nullptr && effect->stage == stage) {
      // The job driver's one prediction of this fix, the one the finding quotes.
      cause.iteration_before_ns = effect->iteration_ns;
      cause.iteration_after_ns = effect->iteration_at_mean_ns;
      cause.saving_per_iteration_ns =
          std::max<TimeNs>(0, effect->iteration_ns - effect->iteration_at_mean_ns);
    }
    const rebalance::Result* move = input_.rebalance;
    if (move != nullptr && move->suggested) {
      cause.next_step =
          absl::StrCat("move ", move->layers, move->layers == 1 ? " layer" : " layers",
                       " from stage ", move->from_stage, " to stage ", move->to_stage);
      const whatif::Result* predicted = input_.rebalance_predicted;
      if (predicted != nullptr && !predicted->candidates.empty() &&
          predicted->candidates.front().problem.empty()) {
        const whatif::Prediction& after = predicted->candidates.front();
        absl::StrAppend(&cause.next_step,
                        absl::StrFormat(" (predicted iteration %.3f ms",
                                        static_cast<double>(after.iteration_ns) / 1e6));
        const auto to = static_cast<size_t>(move->to_stage);
        if (to < after.memory.size()) {
          absl::StrAppend(
              &cause.next_step,
              absl::StrFormat(", stage %d's peak %.2f GiB%s", move->to_stage,
                              static_cast<double>(after.memory[to].peak_allocated_bytes) /
                                  static_cast<double>(int64_t{1} << 30),
                              after.fits_memory == std::optional<bool>(false)
                                  ? ", over its memory headroom"
                                  : ""));
        }
        absl::StrAppend(&cause.next_step, ")");
      }
      absl::StrAppend(&cause.next_step, "; see the pipeline's rebalance lines");
    } else {
      cause.next_step =
          "move layers off the slow stage: bubblescope analyze --layers-per-stage N,N,... "
          "predicts the best move";
    }
    return cause;
  }

  RootCause SlowLink(const Finding& finding, size_t index) const {
    RootCause cause = New(Cause::kSlowLink, Severity::kWarning, finding, index);
    const int32_t src = finding.ranks.size() == 2 ? finding.ranks[0] : -1;
    const int32_t dst = finding.ranks.size() == 2 ? finding.ranks[1] : -1;
    cause.summary = absl::StrCat("the link ", StageName(order_, src), " -> ",
                                 StageName(order_, dst), " is slow");
    const link_stats::Link* link = nullptr;
    for (const link_stats::Link& each : *input_.links) {
      if (each.src == src && each.dst == dst) link = &each;
    }
    cause.next_step =
        "check the slow link's path (NIC, switch port, NVLink/PCIe topology) "
        "against the job's other links";
    if (link == nullptr || link->reference_gbps <= 0.0 || link->gbps_median <= 0.0) {
      cause.fix = "its bandwidth has no reference to be fixed to";
      return cause;
    }
    cause.fix =
        absl::StrFormat("the link at the job's median of %.2f Gbit/s", link->reference_gbps);
    const TimeNs fixed = RoundToNs(static_cast<double>(link->transfer_median_ns) *
                                   link->gbps_median / link->reference_gbps);
    const int32_t src_stage = StageOf(order_, src);
    const int32_t dst_stage = StageOf(order_, dst);
    if (input_.model != nullptr && src_stage >= 0 && dst_stage >= 0) {
      PredictFix(whatif::WithLinkTransfer(*input_.model, src_stage, dst_stage, fixed), cause);
    }
    return cause;
  }

  RootCause LateSender(const Finding& finding, size_t index) const {
    RootCause cause = New(Cause::kLateSender, Severity::kWarning, finding, index);
    const int32_t sender = finding.ranks.empty() ? -1 : finding.ranks[0];
    const int32_t stage = StageOf(order_, sender);
    cause.summary = absl::StrCat(StageName(order_, sender), " posts its sends late: it is busy");
    cause.next_step = "balance the sender's work or overlap its sends with compute";
    cause.fix = absl::StrCat("stage ", stage, " at the mean time per microbatch");
    if (input_.model != nullptr && stage >= 0) {
      PredictFix(whatif::WithStageAtMean(*input_.model, stage), cause);
    }
    if (!cause.saving_per_iteration_ns.has_value() || *cause.saving_per_iteration_ns == 0) {
      cause.saving_per_iteration_ns.reset();
      cause.fix =
          "not predicted: the sender's extra time is outside its microbatch ops, which "
          "the model does not see";
    }
    return cause;
  }

  RootCause Recompute(const Finding& finding, size_t index) const {
    RootCause cause = New(Cause::kRecompute, Severity::kInfo, finding, index);
    cause.summary = "activation checkpointing runs forwards again inside the backward";
    cause.fix = "no recomputation: each backward without its recomputed forward";
    cause.next_step =
        "recompute less where memory allows (Megatron-LM: --recompute-granularity selective, "
        "or fewer --recompute-num-layers; torch: fewer checkpointed blocks): the activations "
        "it would then keep are not in this trace, so check the memory headroom first";
    if (input_.model != nullptr) PredictFix(whatif::WithoutRecompute(*input_.model), cause);
    return cause;
  }

  RootCause HostBound(const Finding& finding, size_t index) const {
    RootCause cause = New(Cause::kHostBound, Severity::kWarning, finding, index);
    cause.fix =
        "no host gaps: the model with each host-bound rank's empty time spread over its "
        "ops, against the model without it";
    return cause;
  }

  // Worded once every host_bound finding has joined: a CPU rank has no device to keep busy,
  // its model thread is what sits idle.
  void DescribeHost(RootCause& cause) const {
    const bool all_cpu = std::all_of(cause.ranks.begin(), cause.ranks.end(), [&](int32_t rank) {
      const bubble::RankTotals* totals = TotalsOf(rank);
      return totals != nullptr && totals->device == index::DeviceKind::kCpu;
    });
    if (all_cpu) {
      cause.summary =
          "the model thread sits idle between ops: no op runs on it (framework or "
          "Python time, or a wait no op records)";
      cause.next_step =
          "look at the gaps between ops on the idle ranks' model threads: data "
          "loading, Python, blocking waits (gloo) the profiler does not record";
      return;
    }
    cause.summary = "the host does not keep the device busy: idle time with nothing running";
    cause.next_step =
        "look at the gaps between launches of the idle ranks' threads: data "
        "loading, Python, synchronizations";
  }

  // The model has no host gaps, so they are put back into it: each host-bound rank's empty
  // time per iteration spread over its ops. The saving is that model minus the model as
  // measured, from the same empty time the cost sums, so it never exceeds the cost.
  void PredictHost(RootCause& cause) const {
    if (baseline_ <= 0 || input_.model == nullptr) return;
    std::vector<TimeNs> gaps(input_.model->stages.size(), 0);
    for (int32_t rank : cause.ranks) {
      const int32_t stage = StageOf(order_, rank);
      const bubble::RankTotals* totals = TotalsOf(rank);
      if (stage < 0 || static_cast<size_t>(stage) >= gaps.size() || totals == nullptr) continue;
      gaps[static_cast<size_t>(stage)] = PerIteration(totals->split.empty);
    }
    absl::StatusOr<whatif::Prediction> with_gaps =
        whatif::PredictAsMeasured(whatif::WithHostGaps(*input_.model, gaps));
    if (!with_gaps.ok()) return;
    cause.iteration_before_ns = with_gaps->iteration_ns;
    cause.iteration_after_ns = baseline_;
    cause.saving_per_iteration_ns = std::max<TimeNs>(0, with_gaps->iteration_ns - baseline_);
  }

  // The measured iteration less the model's and less what `explained_ns` (the host gaps) puts
  // back: time no cause accounts for. A cause of its own when it is more than jitter, with the
  // per-rank figures that say where to look.
  std::optional<RootCause> Unexplained(TimeNs explained_ns) const {
    const TimeNs measured = input_.bubble->latency.p50;
    if (baseline_ <= 0 || measured <= 0) return std::nullopt;
    const TimeNs modelled = baseline_ + explained_ns;
    const TimeNs rest = measured - modelled;
    if (static_cast<double>(rest) <=
        input_.unexplained_min_fraction * static_cast<double>(measured)) {
      return std::nullopt;
    }
    RootCause cause;
    cause.cause = Cause::kUnexplained;
    cause.severity = Severity::kWarning;
    cause.ranks = input_.bubble->ranks;
    cause.cost_per_iteration_ns =
        SaturatingMul(rest, static_cast<int64_t>(input_.bubble->per_rank.size()));
    cause.saving_per_iteration_ns = rest;
    cause.iteration_before_ns = measured;
    cause.before_is_measured = true;
    cause.iteration_after_ns = modelled;
    cause.summary = absl::StrFormat(
        "the iteration measures %.3f ms where the model of its stage times and links gives "
        "%.3f ms%s: no cause above explains the %.3f ms between",
        MsOf(measured), MsOf(baseline_),
        explained_ns > 0 ? absl::StrFormat(" (%.3f ms with its host gaps)", MsOf(modelled)) : "",
        MsOf(rest));
    cause.fix =
        "not identified: the measured iteration down to the model's, as if whatever "
        "the ranks spend it on were gone";
    cause.next_step = absl::StrCat(
        Evidence(rest),
        "look for what the model leaves out: what the waiting ranks wait for (the links "
        "table's sender_wait and receiver_wait, the stall lines), work outside the microbatch "
        "ops (optimizer step, data loading), ops slower than their medians, ranks descheduled "
        "(more processes than cores)");
    return cause;
  }

  // Waits no finding explains: transfers on the critical path when free links would save
  // time, else unattributed.
  RootCause Unattributed() const {
    RootCause cause{.cause = Cause::kUnattributed,
                    .severity = Severity::kWarning,
                    .ranks = {},
                    .cost_per_iteration_ns = 0,
                    .saving_per_iteration_ns = std::nullopt,
                    .iteration_before_ns = 0,
                    .before_is_measured = false,
                    .iteration_after_ns = 0,
                    .summary =
                        "ranks wait on communication beyond their schedule, and no "
                        "finding names why",
                    .fix = "no cause identified",
                    .next_step =
                        "find who the waiting ranks wait for in the links table "
                        "(sender_wait, receiver_wait) and the stall lines under it",
                    .findings = {}};
    if (input_.bubble->ranks.size() == 1) {
      // One rank alone has no peer in the trace: no link or stall line can say who it waits
      // for, so the cause says what is missing rather than pointing at an empty table.
      cause.summary =
          "the rank waits on communication, and with one rank loaded there is no "
          "pipeline evidence of why";
      cause.fix = "no cause identified: the ranks it exchanges with are not in the trace";
      cause.next_step =
          "load every rank's trace of one window (one file per rank) to see whom "
          "it waits for";
      return cause;
    }
    if (input_.model == nullptr || input_.model->links.empty()) return cause;
    PredictFix(whatif::WithFreeLinks(*input_.model), cause);
    if (!cause.saving_per_iteration_ns.has_value() || *cause.saving_per_iteration_ns == 0) {
      cause.saving_per_iteration_ns.reset();
      return cause;
    }
    cause.cause = Cause::kTransferTime;
    cause.summary =
        "hand-offs wait for their transfers: no link is slow, but every transfer "
        "on the critical path adds to the iteration";
    cause.fix = "every transfer free, as when overlapped with compute";
    cause.next_step =
        "overlap point-to-point transfers with compute (Megatron-LM: "
        "--overlap-p2p-communication), or send fewer, larger messages";
    return cause;
  }

  TimeNs baseline() const { return baseline_; }

 private:
  static double MsOf(TimeNs ns) { return static_cast<double>(ns) / 1e6; }

  const bubble::RankTotals* TotalsOf(int32_t rank) const {
    for (const bubble::RankTotals& totals : input_.bubble->per_rank) {
      if (totals.rank == rank) return &totals;
    }
    return nullptr;
  }

  // "waits in communication per iteration: rank 0 55.1 ms, ...; " for each part of the
  // ranks' time that could hold `rest`: communication waits, idle time with nothing running,
  // and compute outside the modelled microbatch ops (the rank's compute less m x v x its
  // F+B+W). A part is named when some rank spends at least a tenth of `rest` on it.
  std::string Evidence(TimeNs rest) const {
    struct Part {
      const char* what;
      std::vector<TimeNs> per_rank;
    };
    std::vector<Part> parts = {{"waits in communication", {}},
                               {"compute outside the microbatch ops", {}},
                               {"idle with nothing running", {}}};
    std::vector<int32_t> ranks;
    for (const bubble::RankTotals& totals : input_.bubble->per_rank) {
      ranks.push_back(totals.rank);
      parts[0].per_rank.push_back(PerIteration(totals.split.comm_wait));
      TimeNs modelled_ops = 0;
      const int32_t stage = StageOf(order_, totals.rank);
      if (input_.model != nullptr && stage >= 0 &&
          static_cast<size_t>(stage) < input_.model->stages.size()) {
        const whatif::StageModel& model = input_.model->stages[static_cast<size_t>(stage)];
        modelled_ops =
            RoundToNs(static_cast<double>(input_.model->m) * static_cast<double>(input_.model->v) *
                      (model.forward_ns + model.backward_ns + model.weight_grad_ns));
      }
      parts[1].per_rank.push_back(
          std::max<TimeNs>(0, PerIteration(totals.split.compute) - modelled_ops));
      parts[2].per_rank.push_back(PerIteration(totals.split.empty));
    }
    std::string out;
    for (const Part& part : parts) {
      if (part.per_rank.empty() ||
          10 * *std::max_element(part.per_rank.begin(), part.per_rank.end()) < rest) {
        continue;
      }
      absl::StrAppend(&out, part.what, " per iteration:");
      for (size_t i = 0; i < part.per_rank.size(); ++i) {
        absl::StrAppend(&out, i == 0 ? " " : ", ", "rank ", ranks[i],
                        absl::StrFormat(" %.1f ms", MsOf(part.per_rank[i])));
      }
      absl::StrAppend(&out, "; ");
    }
    return out;
  }

  const Input& input_;
  const std::vector<int32_t>& order_;
  double iterations_ = 1.0;
  TimeNs baseline_ = 0;  // the model as measured; 0 when there is no model
};

bool Ranked(const RootCause& a, const RootCause& b) {
  const bool a_saving = a.saving_per_iteration_ns.has_value();
  const bool b_saving = b.saving_per_iteration_ns.has_value();
  if (a_saving != b_saving) return a_saving;
  if (a_saving && *a.saving_per_iteration_ns != *b.saving_per_iteration_ns) {
    return *a.saving_per_iteration_ns > *b.saving_per_iteration_ns;
  }
  return a.cost_per_iteration_ns > b.cost_per_iteration_ns;
}

// The causes the findings name one by one, and where the rest went: the host-bound ranks are
// one cause, the incomplete-job findings another, and symptoms (excess bubble, comm wait, a late
// sender that is the slow stage itself) join a cause afterwards.
struct Sorted {
  std::vector<RootCause> causes;
  std::optional<size_t> host;        // index in causes
  std::optional<size_t> incomplete;  // index in causes
  std::vector<size_t> symptoms;      // indices in the findings
};

Sorted SortFindings(const Input& input, const Builder& builder) {
  Sorted sorted;
  std::vector<RootCause>& causes = sorted.causes;
  const std::vector<Finding>& all = *input.findings;
  const int32_t slow_rank =
      input.shape != nullptr &&
              std::any_of(all.begin(), all.end(),
                          [](const Finding& f) { return f.kind == Kind::kStageImbalance; })
          ? input.shape->slowest_rank
          : -1;
  for (size_t i = 0; i < all.size(); ++i) {
    const Finding& finding = all[i];
    switch (finding.kind) {
      case Kind::kPipelineDepth:
        causes.push_back(builder.Depth(finding, i));
        break;
      case Kind::kStageImbalance:
        causes.push_back(builder.Imbalance(finding, i));
        break;
      case Kind::kSlowLink:
        causes.push_back(builder.SlowLink(finding, i));
        break;
      case Kind::kLateSender:
        if (!finding.ranks.empty() && finding.ranks[0] == slow_rank) {
          sorted.symptoms.push_back(i);  // joins the imbalance below
        } else {
          causes.push_back(builder.LateSender(finding, i));
        }
        break;
      case Kind::kHostBound:
        if (sorted.host.has_value()) {
          RootCause& cause = causes[*sorted.host];
          cause.findings.push_back(i);
          cause.ranks.insert(cause.ranks.end(), finding.ranks.begin(), finding.ranks.end());
          cause.cost_per_iteration_ns =
              SaturatingAdd(cause.cost_per_iteration_ns, builder.PerIteration(finding.cost_ns));
        } else {
          sorted.host = causes.size();
          causes.push_back(builder.HostBound(finding, i));
        }
        break;
      case Kind::kIncompleteIterations:
      case Kind::kUnmatchedP2p:
        if (sorted.incomplete.has_value()) {
          causes[*sorted.incomplete].findings.push_back(i);
        } else {
          sorted.incomplete = causes.size();
          RootCause cause = builder.New(Cause::kIncompleteJob, Severity::kInfo, finding, i);
          cause.summary = "part of the job is missing from the trace";
          cause.fix = "nothing to predict: the figures cover what was loaded";
          cause.next_step = "load every rank's trace of one window";
          causes.push_back(std::move(cause));
        }
        if (finding.kind == Kind::kUnmatchedP2p) {
          causes[*sorted.incomplete].severity = Severity::kWarning;
        }
        break;
      case Kind::kScheduleUnknown: {
        RootCause cause = builder.New(Cause::kShapeUnknown, Severity::kInfo, finding, i);
        cause.summary = "the pipeline's shape could not be inferred";
        cause.fix = "nothing can be predicted without the shape";
        cause.next_step =
            "annotate the microbatches (docs/bubble.md, PP: ranges) or record "
            "NCCL args";
        causes.push_back(std::move(cause));
        break;
      }
      case Kind::kExcessBubble:
      case Kind::kCommWait:
        sorted.symptoms.push_back(i);
        break;
      case Kind::kRecompute:
        causes.push_back(builder.Recompute(finding, i));
        break;
    }
  }
  return sorted;
}

// Finishes the host-bound cause (its ranks once each, its description and prediction), then adds
// whatever of the measured iteration neither the model nor its host gaps account for. The other
// causes' savings lie within the modelled iteration, so they explain none of it.
void AddHostAndUnexplained(const Builder& builder, Sorted* sorted) {
  TimeNs host_gaps_ns = 0;  // what the host gaps put back into the model
  if (sorted->host.has_value()) {
    RootCause& cause = sorted->causes[*sorted->host];
    std::sort(cause.ranks.begin(), cause.ranks.end());
    cause.ranks.erase(std::unique(cause.ranks.begin(), cause.ranks.end()), cause.ranks.end());
    builder.DescribeHost(cause);
    builder.PredictHost(cause);
    host_gaps_ns = cause.saving_per_iteration_ns.value_or(0);
  }
  if (std::optional<RootCause> rest = builder.Unexplained(host_gaps_ns); rest.has_value()) {
    sorted->causes.push_back(*std::move(rest));
  }
}

// Symptoms join the warning cause predicted to save the most (a late sender: the imbalance);
// without one, an unattributed cause holds them.
void AttachSymptoms(const std::vector<Finding>& all, const Builder& builder,
                    const std::vector<size_t>& symptoms, std::vector<RootCause>* causes) {
  RootCause* owner = nullptr;
  for (RootCause& cause : *causes) {
    if (cause.severity != Severity::kWarning || cause.cause == Cause::kIncompleteJob) continue;
    if (owner == nullptr || Ranked(cause, *owner)) owner = &cause;
  }
  for (size_t i : symptoms) {
    const Finding& finding = all[i];
    RootCause* target = owner;
    if (finding.kind == Kind::kLateSender) {
      for (RootCause& cause : *causes) {
        if (cause.cause == Cause::kStageImbalance) target = &cause;
      }
    }
    if (target == nullptr) {
      causes->push_back(builder.Unattributed());
      target = owner = &causes->back();
    }
    target->findings.push_back(i);
    const bool unexplained =
        target->cause == Cause::kUnattributed || target->cause == Cause::kTransferTime;
    if (unexplained && finding.kind == Kind::kCommWait) {
      target->cost_per_iteration_ns =
          SaturatingAdd(target->cost_per_iteration_ns, builder.PerIteration(finding.cost_ns));
      target->ranks.insert(target->ranks.end(), finding.ranks.begin(), finding.ranks.end());
    }
  }
}

// Says why a cause that could have been predicted was not; lists findings and ranks in order,
// ranks once each.
void Tidy(const Builder& builder, RootCause* cause) {
  const bool predictable = cause->cause != Cause::kIncompleteJob &&
                           cause->cause != Cause::kShapeUnknown &&
                           cause->cause != Cause::kUnattributed;
  if (predictable && !cause->saving_per_iteration_ns.has_value() && builder.baseline() <= 0) {
    cause->fix =
        "not predicted: the job could not be modelled (per-stage times unknown or "
        "unreliable)";
  }
  std::sort(cause->findings.begin(), cause->findings.end());
  std::sort(cause->ranks.begin(), cause->ranks.end());
  cause->ranks.erase(std::unique(cause->ranks.begin(), cause->ranks.end()), cause->ranks.end());
}

}  // namespace

std::string_view CauseName(Cause cause) {
  switch (cause) {
    case Cause::kScheduleDepth:
      return "schedule_depth";
    case Cause::kStageImbalance:
      return "stage_imbalance";
    case Cause::kSlowLink:
      return "slow_link";
    case Cause::kLateSender:
      return "late_sender";
    case Cause::kHostBound:
      return "host_bound";
    case Cause::kRecompute:
      return "recompute";
    case Cause::kTransferTime:
      return "transfer_time";
    case Cause::kIncompleteJob:
      return "incomplete_job";
    case Cause::kShapeUnknown:
      return "shape_unknown";
    case Cause::kUnattributed:
      return "unattributed";
    case Cause::kUnexplained:
      return "unexplained";
  }
  return "unknown";
}

Result Analyze(const Input& input) {
  const Builder builder(input);
  Sorted sorted = SortFindings(input, builder);
  AddHostAndUnexplained(builder, &sorted);
  AttachSymptoms(*input.findings, builder, sorted.symptoms, &sorted.causes);
  for (RootCause& cause : sorted.causes) Tidy(builder, &cause);
  std::stable_sort(sorted.causes.begin(), sorted.causes.end(), Ranked);
  Result result;
  result.causes = std::move(sorted.causes);
  return result;
}

}  // namespace bubblescope::root_causes
