#include "compare/report_schema.h"

#include <algorithm>
#include <string>
#include <type_traits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "bubblescope/import_stats.h"
#include "bubblescope/trace.h"
#include "crossrank/clock_evidence.h"
#include "text/utf8.h"

namespace bubblescope::compare::schema {
namespace {

using V = Value;

// The rows' accessors. A pipeline "measured" has a complete iteration; without one, its bubble
// and latency are no figures and the report writes null for them.
bool Measured(const job::Pipeline& p) { return p.no_complete_iteration.empty(); }
bool Shaped(const job::Pipeline& p) { return p.shape.has_value(); }
bool Ideal(const job::Pipeline& p) { return p.shape.has_value() && p.ideal.has_value(); }

// A stage's mean op time as the report writes it: whole nanoseconds; null without such ops.
Value MeanOp(const schedule_inference::OpStats* op) {
  return op == nullptr || op->count == 0 ? V::Null() : V::Micros(RoundToNs(op->mean_ns));
}
const schedule_inference::OpStats* OpOf(
    const RankOfPipeline& r, schedule_inference::OpStats schedule_inference::StageFigures::*op) {
  return r.stage_figures == nullptr ? nullptr : &(r.stage_figures->*op);
}

constexpr PipelineField kPipeline[] = {
    {.key = "stages",
     .unit = Unit::kNumber,
     .nullable = true,
     .meaning = "p, pipeline stages (ranks); null when the shape could not be inferred",
     .value = [](const job::Pipeline& p) { return Shaped(p) ? V::Int(p.shape->p) : V::Null(); },
     .slot = [](PipelineFigures& f) -> Slot { return &f.stages; }},
    {.key = "microbatches",
     .unit = Unit::kNumber,
     .nullable = true,
     .meaning = "m, microbatches per iteration; null as above",
     .value = [](const job::Pipeline& p) { return Shaped(p) ? V::Int(p.shape->m) : V::Null(); },
     .slot = [](PipelineFigures& f) -> Slot { return &f.microbatches; }},
    {.key = "virtual_stages",
     .unit = Unit::kNumber,
     .nullable = true,
     .meaning = "v, model chunks per rank (1 unless interleaved); null as above",
     .value = [](const job::Pipeline& p) { return Shaped(p) ? V::Int(p.shape->v) : V::Null(); },
     .slot = [](PipelineFigures& f) -> Slot { return &f.virtual_stages; }},
    {.key = "schedule",
     .unit = Unit::kString,
     .nullable = true,
     .meaning = "`gpipe`, `1f1b`, `interleaved`, `zb` or `fwd-only`; null as above",
     .value =
         [](const job::Pipeline& p) {
           return Shaped(p) ? V::String(schedule_inference::ScheduleFamilyName(p.shape->family))
                            : V::Null();
         },
     .slot = [](PipelineFigures& f) -> Slot { return &f.schedule; }},
    {.key = "bubble_fraction",
     .unit = Unit::kFraction,
     .nullable = true,
     .required = true,
     .meaning = "measured: Σ idle / Σ (p × window) over the complete iterations; null without a "
                "complete iteration (`no_complete_iteration` says why)",
     .value =
         [](const job::Pipeline& p) {
           return Measured(p) ? V::Double(p.bubble.bubble_fraction) : V::Null();
         },
     .slot = [](PipelineFigures& f) -> Slot { return &f.bubble_fraction; }},
    {.key = "theoretical_bubble_fraction",
     .unit = Unit::kFraction,
     .nullable = true,
     .meaning = "the bubble the schedule leaves by itself: (p−1)/(v·m+p−1), looped GPipe with m "
                "< p [its own](bubble.md#the-schedules-own-bubble); null when the shape is "
                "unknown",
     .value =
         [](const job::Pipeline& p) { return Ideal(p) ? V::Double(p.ideal->fraction) : V::Null(); },
     .slot = [](PipelineFigures& f) -> Slot { return &f.theoretical_bubble_fraction; }},
    {.key = "excess_bubble_fraction",
     .unit = Unit::kSignedFraction,
     .nullable = true,
     .meaning = "measured − theoretical; null when the shape is unknown or no iteration is "
                "complete",
     .value =
         [](const job::Pipeline& p) {
           return Ideal(p) && Measured(p) ? V::Double(p.excess_bubble_fraction.value_or(0.0))
                                          : V::Null();
         },
     .slot = [](PipelineFigures& f) -> Slot { return &f.excess_bubble_fraction; }},
    {.key = "latency_us",
     .unit = Unit::kObject,
     .nullable = true,
     .required = true,
     .meaning = "`p50`, `p90`, `max` of the complete iterations' windows (nearest rank); null "
                "without a complete iteration",
     .value = [](const job::Pipeline& p) { return Measured(p) ? V::Present() : V::Null(); },
     .nest = Nest::kLatency},
    {.key = "ranks",
     .unit = Unit::kRanks,
     .required = true,
     .meaning = "the pipeline's rank ids, in stage order (rank id order when the order could not "
                "be inferred)",
     .value = [](const job::Pipeline& p) { return V::Ints(p.bubble.ranks); },
     .slot = [](PipelineFigures& f) -> Slot { return &f.ranks; }},
    {.key = "complete_iterations",
     .unit = Unit::kCount,
     .meaning = "iterations that every pipeline rank has in full; only these enter the totals",
     .value = [](const job::Pipeline& p) { return V::Int(p.bubble.complete_iterations); },
     .slot = [](PipelineFigures& f) -> Slot { return &f.complete_iterations; }},
    {.key = "no_complete_iteration",
     .unit = Unit::kString,
     .nullable = true,
     .meaning = "why the pipeline has no complete iteration (null when it has one). Then its "
                "bubble and latency figures are null: no report shows them, diff shows `-`, the "
                "gate calls a check on them an error (exit 2), `--strict` refuses the job, "
                "`whatif_model` is null, and `job.worst_pipeline` passes the pipeline over",
     .value =
         [](const job::Pipeline& p) {
           return Measured(p) ? V::Null() : V::String(p.no_complete_iteration);
         },
     .slot = [](PipelineFigures& f) -> Slot { return &f.no_complete_iteration; }},
    {.key = "iterations",
     .unit = Unit::kArray,
     .meaning = "every iteration, incomplete ones included, ascending",
     .value = [](const job::Pipeline&) { return V::Present(); },
     .nest = Nest::kIterations},
    {.key = "rank_stats",
     .unit = Unit::kArray,
     .meaning = "one entry per pipeline rank, summed over complete iterations",
     .value = [](const job::Pipeline&) { return V::Present(); },
     .nest = Nest::kRankStats},
    {.key = "rebalance",
     .unit = Unit::kObject,
     .nullable = true,
     .meaning = "null unless `--layers-per-stage` was given or the pipeline's ranks declare "
                "`bubblescope:layers=N` annotations "
                "([bubble.md](bubble.md#rebalance-suggestion-rebalance))",
     .value =
         [](const job::Pipeline& p) { return p.rebalance.has_value() ? V::Present() : V::Null(); },
     .nest = Nest::kRebalance},
    {.key = "links",
     .unit = Unit::kArray,
     .meaning = "one per directed link with matched transfers, by (src, dst)",
     .value = [](const job::Pipeline&) { return V::Present(); },
     .nest = Nest::kLinks},
    {.key = "whatif_model",
     .unit = Unit::kObject,
     .nullable = true,
     .meaning = "the what-if model of the measured job that `bubblescope whatif REPORT.json` "
                "predicts from ([whatif.md](whatif.md#from-a-report)); null when the job cannot "
                "be modelled",
     .value = [](const job::Pipeline& p) { return p.model.has_value() ? V::Present() : V::Null(); },
     .nest = Nest::kWhatIfModel},
    {.key = "whatif_model_problem",
     .unit = Unit::kString,
     .nullable = true,
     .meaning = "why there is no model",
     .value =
         [](const job::Pipeline& p) {
           return p.model.has_value() ? V::Null() : V::String(p.model_problem);
         },
     .slot = [](PipelineFigures& f) -> Slot { return &f.whatif_model_problem; }},
};
static_assert(std::size(kPipeline) == static_cast<size_t>(PipelineMember::kWhatIfModelProblem) + 1);

constexpr Field<bubble::Latency, PipelineFigures> kLatency[] = {
    {.key = "p50",
     .unit = Unit::kMicroseconds,
     .required = true,
     .message_key = "latency_us.p50",
     .meaning = "median iteration",
     .value = [](const bubble::Latency& l) { return V::Micros(l.p50); },
     .slot = [](PipelineFigures& f) -> Slot { return &f.latency_p50_us; }},
    {.key = "p90",
     .unit = Unit::kMicroseconds,
     .required = true,
     .message_key = "latency_us.p90",
     .meaning = "90th-percentile iteration",
     .value = [](const bubble::Latency& l) { return V::Micros(l.p90); },
     .slot = [](PipelineFigures& f) -> Slot { return &f.latency_p90_us; }},
    {.key = "max",
     .unit = Unit::kMicroseconds,
     .required = true,
     .message_key = "latency_us.max",
     .meaning = "longest iteration",
     .value = [](const bubble::Latency& l) { return V::Micros(l.max); },
     .slot = [](PipelineFigures& f) -> Slot { return &f.latency_max_us; }},
};

constexpr Field<bubble::IterationFigures, IterationFigures> kIteration[] = {
    {.key = "step",
     .unit = Unit::kNumber,
     .required = true,
     .meaning = "iteration number",
     .value = [](const bubble::IterationFigures& i) { return V::Int(i.number); },
     .slot = [](IterationFigures& f) -> Slot { return &f.step; }},
    {.key = "complete",
     .unit = Unit::kBool,
     .required = true,
     .meaning = "every pipeline rank has it in full",
     .value = [](const bubble::IterationFigures& i) { return V::Bool(i.complete); },
     .slot = [](IterationFigures& f) -> Slot { return &f.complete; }},
    {.key = "window_us",
     .unit = Unit::kMicroseconds,
     .required = true,
     .meaning = "from the first to the last device activity of any rank in it",
     .value = [](const bubble::IterationFigures& i) { return V::Micros(i.window()); },
     .slot = [](IterationFigures& f) -> Slot { return &f.window_us; }},
    {.key = "bubble_fraction",
     .unit = Unit::kFraction,
     .required = true,
     .meaning = "idle / (ranks × window), over the ranks that have it",
     .value = [](const bubble::IterationFigures& i) { return V::Double(i.bubble_fraction); },
     .slot = [](IterationFigures& f) -> Slot { return &f.bubble_fraction; }},
};

// A rank's time as rank_stats[] writes it (not compared).
template <TimeNs IdleSplit::*kTime>
Value RankTime(const RankOfPipeline& r) {
  return V::Micros(r.totals->split.*kTime);
}

constexpr Field<RankOfPipeline, StageFigures> kRankStat[] = {
    {.key = "rank",
     .unit = Unit::kNumber,
     .required = true,
     .meaning = "rank id",
     .value = [](const RankOfPipeline& r) { return V::Int(r.totals->rank); },
     .slot = [](StageFigures& f) -> Slot { return &f.rank; }},
    {.key = "stage",
     .unit = Unit::kNumber,
     .nullable = true,
     .meaning = "the rank's pipeline position; null when the shape is unknown",
     .value = [](const RankOfPipeline& r) { return V::IntOrNull(r.stage); },
     .slot = [](StageFigures& f) -> Slot { return &f.stage; }},
    {.key = "compute_us",
     .unit = Unit::kMicroseconds,
     .meaning = "compute ([bubble.md](bubble.md))",
     .value = RankTime<&IdleSplit::compute>},
    {.key = "idle_us",
     .unit = Unit::kMicroseconds,
     .meaning = "fill + drain + stall",
     .value = RankTime<&IdleSplit::idle>},
    {.key = "fill_us",
     .unit = Unit::kMicroseconds,
     .meaning = "idle before the rank's first compute of each iteration",
     .value = RankTime<&IdleSplit::fill>},
    {.key = "drain_us",
     .unit = Unit::kMicroseconds,
     .meaning = "idle after its last compute of each iteration",
     .value = RankTime<&IdleSplit::drain>},
    {.key = "stall_us",
     .unit = Unit::kMicroseconds,
     .meaning = "comm_wait + empty",
     .value = RankTime<&IdleSplit::stall>},
    {.key = "comm_wait_us",
     .unit = Unit::kMicroseconds,
     .meaning = "stall with a transfer running and nothing computing",
     .value = RankTime<&IdleSplit::comm_wait>},
    {.key = "empty_us",
     .unit = Unit::kMicroseconds,
     .meaning = "stall with nothing running: the host did not keep the device busy",
     .value = RankTime<&IdleSplit::empty>},
    {.key = "in_stage_comm_us",
     .unit = Unit::kMicroseconds,
     .meaning = "in-stage communication (tensor, context, expert parallel groups; all-to-alls) "
                "no compute overlaps: counted as work, not idle; window = compute + "
                "in_stage_comm + idle ([bubble.md](bubble.md))",
     .value = RankTime<&IdleSplit::in_stage_comm>},
    {.key = "dp_sync_us",
     .unit = Unit::kMicroseconds,
     .meaning = "the part of idle in which a data-parallel group's communication runs (the "
                "exposed DP gradient sync)",
     .value = RankTime<&IdleSplit::dp_sync>},
    {.key = "bubble_fraction",
     .unit = Unit::kFraction,
     .required = true,
     .meaning = "the rank's idle / its summed window",
     .value = [](const RankOfPipeline& r) { return V::Double(r.totals->bubble_fraction); },
     .slot = [](StageFigures& f) -> Slot { return &f.bubble_fraction; }},
    {.key = "peak_allocated_bytes",
     .unit = Unit::kBytes,
     .nullable = true,
     .meaning = "largest Total Allocated of the rank's memory samples; null without samples",
     .value =
         [](const RankOfPipeline& r) { return V::IntOrNull(r.totals->memory.allocated_bytes); },
     .slot = [](StageFigures& f) -> Slot { return &f.peak_allocated_bytes; }},
    {.key = "peak_reserved_bytes",
     .unit = Unit::kBytes,
     .nullable = true,
     .meaning = "largest Total Reserved of the rank's memory samples; null without samples",
     .value = [](const RankOfPipeline& r) { return V::IntOrNull(r.totals->memory.reserved_bytes); },
     .slot = [](StageFigures& f) -> Slot { return &f.peak_reserved_bytes; }},
    {.key = "fwd_us_per_microbatch",
     .unit = Unit::kMicroseconds,
     .nullable = true,
     .meaning = "mean compute of one forward op of the rank's stage (per chunk when v > 1); null "
                "when unknown",
     .value =
         [](const RankOfPipeline& r) {
           return MeanOp(OpOf(r, &schedule_inference::StageFigures::forward));
         },
     .slot = [](StageFigures& f) -> Slot { return &f.forward_us; }},
    {.key = "bwd_us_per_microbatch",
     .unit = Unit::kMicroseconds,
     .nullable = true,
     .meaning = "mean compute of one backward op of the rank's stage (per chunk when v > 1); "
                "null when unknown",
     .value =
         [](const RankOfPipeline& r) {
           return MeanOp(OpOf(r, &schedule_inference::StageFigures::backward));
         },
     .slot = [](StageFigures& f) -> Slot { return &f.backward_us; }},
    {.key = "wgt_us_per_microbatch",
     .unit = Unit::kMicroseconds,
     .nullable = true,
     .meaning = "mean compute of one separate weight-gradient (W) op of the rank's stage "
                "(zero-bubble schedules); null when the stage has no separate W ops or its times "
                "are unknown",
     .value =
         [](const RankOfPipeline& r) {
           return MeanOp(OpOf(r, &schedule_inference::StageFigures::weight_grad));
         },
     .slot = [](StageFigures& f) -> Slot { return &f.weight_grad_us; }},
};

bool Timed(const link_stats::Link& l) { return l.timed_transfers > 0 && !l.clock_limited; }

constexpr Field<link_stats::Link, LinkFigures> kLink[] = {
    {.key = "src",
     .unit = Unit::kNumber,
     .required = true,
     .meaning = "sending rank",
     .value = [](const link_stats::Link& l) { return V::Int(l.src); },
     .slot = [](LinkFigures& f) -> Slot { return &f.src; }},
    {.key = "dst",
     .unit = Unit::kNumber,
     .required = true,
     .meaning = "receiving rank",
     .value = [](const link_stats::Link& l) { return V::Int(l.dst); },
     .slot = [](LinkFigures& f) -> Slot { return &f.dst; }},
    {.key = "transfers",
     .unit = Unit::kCount,
     .meaning = "matched transfers",
     .value = [](const link_stats::Link& l) { return V::Int(l.transfers); }},
    {.key = "bytes",
     .unit = Unit::kBytes,
     .meaning = "their total known size",
     .value = [](const link_stats::Link& l) { return V::Int(l.bytes); }},
    {.key = "timed_transfers",
     .unit = Unit::kCount,
     .meaning = "transfers whose times are their own (not inside a batch that also carries "
                "another peer's transfers; [cross-rank.md](cross-rank.md#links-link_stats))",
     .value = [](const link_stats::Link& l) { return V::Int(l.timed_transfers); }},
    {.key = "judged_transfers",
     .unit = Unit::kCount,
     .meaning = "transfers long enough to judge against the uncertainty of the link's two "
                "clocks: that uncertainty is at most a tenth of the transfer's duration "
                "([cross-rank.md](cross-rank.md#links-link_stats))",
     .value = [](const link_stats::Link& l) { return V::Int(l.judged_transfers); }},
    {.key = "judged",
     .unit = Unit::kBool,
     .meaning = "false: the link has transfers but none long enough against its clocks' "
                "uncertainty, so it cannot be judged: no transfer time, bandwidth, `slow` or late "
                "sender from it",
     .value = [](const link_stats::Link& l) { return V::Bool(!l.clock_limited); }},
    {.key = "clock_uncertainty_us",
     .unit = Unit::kMicroseconds,
     .nullable = true,
     .meaning = "how far the link's two clocks as applied may be off each other (0 on one "
                "clock); null when nothing bounds it",
     .value =
         [](const link_stats::Link& l) {
           return l.clock_uncertainty_ns == clock_alignment::kUnbounded
                      ? V::Null()
                      : V::Micros(l.clock_uncertainty_ns);
         }},
    {.key = "transfer_us_median",
     .unit = Unit::kMicroseconds,
     .nullable = true,
     .meaning = "median transfer time of the timed, judged transfers (from the later post to "
                "completion); null without any",
     .value =
         [](const link_stats::Link& l) {
           return Timed(l) ? V::Micros(l.transfer_median_ns) : V::Null();
         },
     .slot = [](LinkFigures& f) -> Slot { return &f.transfer_us_median; }},
    {.key = "gbps_median",
     .unit = Unit::kGbps,
     .nullable = true,
     .meaning = "median bandwidth of the timed, judged transfers, Gbit/s; null when no size or "
                "no such transfer is known",
     .value =
         [](const link_stats::Link& l) {
           return l.bandwidth_samples == 0 ? V::Null() : V::Double(l.gbps_median);
         },
     .slot = [](LinkFigures& f) -> Slot { return &f.gbps_median; }},
    {.key = "gbps_p10",
     .unit = Unit::kGbps,
     .nullable = true,
     .meaning = "10th-percentile bandwidth of the same transfers, Gbit/s; null as above",
     .value =
         [](const link_stats::Link& l) {
           return l.bandwidth_samples == 0 ? V::Null() : V::Double(l.gbps_p10);
         }},
    {.key = "wait_us",
     .unit = Unit::kMicroseconds,
     .required = true,
     .meaning = "sender_wait_us + receiver_wait_us",
     .value =
         [](const link_stats::Link& l) { return V::Micros(l.sender_wait_ns + l.receiver_wait_ns); },
     .slot = [](LinkFigures& f) -> Slot { return &f.wait_us; }},
    {.key = "sender_wait_us",
     .unit = Unit::kMicroseconds,
     .meaning = "summed waits of the sender for the receiver to post",
     .value = [](const link_stats::Link& l) { return V::Micros(l.sender_wait_ns); }},
    {.key = "receiver_wait_us",
     .unit = Unit::kMicroseconds,
     .meaning = "summed waits of the receiver for the sender to post",
     .value = [](const link_stats::Link& l) { return V::Micros(l.receiver_wait_ns); }},
    {.key = "slow",
     .unit = Unit::kBool,
     .meaning = "median bandwidth below the threshold × the reference",
     .value = [](const link_stats::Link& l) { return V::Bool(l.slow); },
     .slot = [](LinkFigures& f) -> Slot { return &f.slow; }},
    {.key = "reference_gbps",
     .unit = Unit::kGbps,
     .nullable = true,
     .meaning = "the job's median link bandwidth for this size class; null when the class has "
                "fewer than 3 links",
     .value =
         [](const link_stats::Link& l) {
           return l.reference_gbps > 0.0 ? V::Double(l.reference_gbps) : V::Null();
         }},
};

constexpr Field<rebalance::Result, PipelineFigures> kRebalance[] = {
    {.key = "layers_after",
     .unit = Unit::kRanks,
     .message_key = "rebalance.layers_after",
     .meaning = "layer counts after the move (only when `suggested`)",
     .value =
         [](const rebalance::Result& r) {
           return r.suggested ? V::Ints(r.layers_after) : V::Absent();
         },
     .slot = [](PipelineFigures& f) -> Slot { return &f.rebalance_layers_after; }},
};

constexpr Field<findings::Finding, FindingFigures> kFinding[] = {
    {.key = "kind",
     .unit = Unit::kString,
     .required = true,
     .meaning = "`pipeline_depth`, `excess_bubble`, `stage_imbalance`, `comm_wait`, `host_bound`, "
                "`recompute`, `incomplete_iterations`, `schedule_unknown` "
                "([bubble.md](bubble.md#findings)), `slow_link`, `late_sender` or "
                "`unmatched_p2p` ([cross-rank.md](cross-rank.md#slow-link-or-late-sender))",
     .value = [](const findings::Finding& f) { return V::String(findings::KindName(f.kind)); },
     .slot = [](FindingFigures& f) -> Slot { return &f.kind; }},
    {.key = "severity",
     .unit = Unit::kString,
     .meaning = "`info` or `warning`",
     .value = [](const findings::Finding& f) { return V::String(SeverityName(f.severity)); },
     .slot = [](FindingFigures& f) -> Slot { return &f.severity; }},
    {.key = "message",
     .unit = Unit::kString,
     .meaning = "the finding in plain words, times in ms",
     .value = [](const findings::Finding& f) { return V::String(f.message); },
     .slot = [](FindingFigures& f) -> Slot { return &f.message; }},
    {.key = "ranks",
     .unit = Unit::kRanks,
     .required = true,
     .meaning = "the ranks concerned (all pipeline ranks for pipeline-wide kinds)",
     .value = [](const findings::Finding& f) { return V::Ints(f.ranks); },
     .slot = [](FindingFigures& f) -> Slot { return &f.ranks; }},
    {.key = "cost_us",
     .unit = Unit::kMicroseconds,
     .required = true,
     .meaning = "rank time lost to it over the complete iterations (0 for info-only kinds); "
                "comparable across kinds",
     .value = [](const findings::Finding& f) { return V::Micros(f.cost_ns); },
     .slot = [](FindingFigures& f) -> Slot { return &f.cost_us; }},
};

using ModelField = Field<whatif::Model, whatif::Model>;
constexpr ModelField kWhatIfModel[] = {
    {.key = "schedule",
     .unit = Unit::kSchedule,
     .message_key = "whatif_model.schedule",
     .meaning = "the measured schedule as the simulator names it: gpipe, 1f1b, interleaved, "
                "zb-h1, fwd-only",
     .value = [](const whatif::Model& m) { return V::String(sim::ScheduleName(m.schedule)); },
     .slot = [](whatif::Model& m) -> Slot { return &m.schedule; }},
    {.key = "p",
     .unit = Unit::kNumber,
     .message_key = "whatif_model.p",
     .meaning = "the measured stages",
     .value = [](const whatif::Model& m) { return V::Int(m.p); },
     .slot = [](whatif::Model& m) -> Slot { return &m.p; }},
    {.key = "m",
     .unit = Unit::kNumber,
     .message_key = "whatif_model.m",
     .meaning = "the measured microbatches",
     .value = [](const whatif::Model& m) { return V::Int(m.m); },
     .slot = [](whatif::Model& m) -> Slot { return &m.m; }},
    {.key = "v",
     .unit = Unit::kNumber,
     .message_key = "whatif_model.v",
     .meaning = "the measured chunks per rank",
     .value = [](const whatif::Model& m) { return V::Int(m.v); },
     .slot = [](whatif::Model& m) -> Slot { return &m.v; }},
    {.key = "separate_weight_grad",
     .unit = Unit::kBool,
     .message_key = "whatif_model.separate_weight_grad",
     .meaning = "the schedule runs W apart from B",
     .value = [](const whatif::Model& m) { return V::Bool(m.separate_weight_grad); },
     .slot = [](whatif::Model& m) -> Slot { return &m.separate_weight_grad; }},
    {.key = "multi_chunk_zero_bubble",
     .unit = Unit::kBool,
     .message_key = "whatif_model.multi_chunk_zero_bubble",
     .meaning = "a zero-bubble schedule with several chunks per rank (modelled as ZB-H1)",
     .value = [](const whatif::Model& m) { return V::Bool(m.multi_chunk_zero_bubble); },
     .slot = [](whatif::Model& m) -> Slot { return &m.multi_chunk_zero_bubble; }},
    {.key = "batched_p2p",
     .unit = Unit::kBool,
     .message_key = "whatif_model.batched_p2p",
     .meaning = "the measured transfers shared batch kernels (batch_isend_irecv): 1F1B and "
                "interleaved candidates are simulated batched "
                "([whatif.md](whatif.md#the-model)); absent in older reports, read as false",
     .value = [](const whatif::Model& m) { return V::Bool(m.batched_p2p); },
     .slot = [](whatif::Model& m) -> Slot { return &m.batched_p2p; }},
    {.key = "measured_iteration_ns",
     .unit = Unit::kWholeNanoseconds,
     .message_key = "whatif_model.measured_iteration_ns",
     .meaning = "the measured median iteration",
     .value = [](const whatif::Model& m) { return V::Int(m.measured_iteration_ns); },
     .slot = [](whatif::Model& m) -> Slot { return &m.measured_iteration_ns; }},
    {.key = "measured_bubble_fraction",
     .unit = Unit::kFraction,
     .message_key = "whatif_model.measured_bubble_fraction",
     .meaning = "the measured bubble",
     .value = [](const whatif::Model& m) { return V::Double(m.measured_bubble_fraction); },
     .slot = [](whatif::Model& m) -> Slot { return &m.measured_bubble_fraction; }},
    {.key = "stages",
     .unit = Unit::kArray,
     .message_key = "whatif_model.stages",
     .meaning = "by stage",
     .value = [](const whatif::Model&) { return V::Present(); },
     .nest = Nest::kWhatIfStages},
    {.key = "links",
     .unit = Unit::kArray,
     .message_key = "whatif_model.links",
     .meaning = "measured links",
     .value = [](const whatif::Model&) { return V::Present(); },
     .nest = Nest::kWhatIfLinks},
};

using StageField = Field<whatif::StageModel, whatif::StageModel>;
constexpr StageField kWhatIfStage[] = {
    {.key = "rank",
     .unit = Unit::kNumber,
     .message_key = "stages[].rank",
     .meaning = "the stage's rank",
     .value = [](const whatif::StageModel& s) { return V::Int(s.rank); },
     .slot = [](whatif::StageModel& s) -> Slot { return &s.rank; }},
    {.key = "forward_ns",
     .unit = Unit::kNanoseconds,
     .message_key = "stages[].forward_ns",
     .meaning = "mean forward per microbatch over all of the rank's chunks, ns, an exact double",
     .value = [](const whatif::StageModel& s) { return V::Double(s.forward_ns); },
     .slot = [](whatif::StageModel& s) -> Slot { return &s.forward_ns; }},
    {.key = "backward_ns",
     .unit = Unit::kNanoseconds,
     .message_key = "stages[].backward_ns",
     .meaning = "mean backward per microbatch, as above",
     .value = [](const whatif::StageModel& s) { return V::Double(s.backward_ns); },
     .slot = [](whatif::StageModel& s) -> Slot { return &s.backward_ns; }},
    {.key = "weight_grad_ns",
     .unit = Unit::kNanoseconds,
     .message_key = "stages[].weight_grad_ns",
     .meaning = "mean separate weight gradient per microbatch, as above",
     .value = [](const whatif::StageModel& s) { return V::Double(s.weight_grad_ns); },
     .slot = [](whatif::StageModel& s) -> Slot { return &s.weight_grad_ns; }},
    {.key = "recompute_ns",
     .unit = Unit::kNanoseconds,
     .message_key = "stages[].recompute_ns",
     .meaning = "of the backward, the recomputed forward (0 without activation checkpointing)",
     .value = [](const whatif::StageModel& s) { return V::Double(s.recompute_ns); },
     .slot = [](whatif::StageModel& s) -> Slot { return &s.recompute_ns; }},
    {.key = "memory_floor_bytes",
     .unit = Unit::kBytes,
     .nullable = true,
     .message_key = "stages[].memory_floor_bytes",
     .meaning = "the rank's lowest allocated sample (weights, gradients, optimizer state); null "
                "when unknown",
     .value = [](const whatif::StageModel& s) { return V::IntOrNull(s.memory_floor_bytes); },
     .slot = [](whatif::StageModel& s) -> Slot { return &s.memory_floor_bytes; }},
    {.key = "memory_peak_bytes",
     .unit = Unit::kBytes,
     .nullable = true,
     .message_key = "stages[].memory_peak_bytes",
     .meaning = "the rank's highest allocated sample; null when unknown",
     .value = [](const whatif::StageModel& s) { return V::IntOrNull(s.memory_peak_bytes); },
     .slot = [](whatif::StageModel& s) -> Slot { return &s.memory_peak_bytes; }},
    {.key = "memory_headroom_bytes",
     .unit = Unit::kBytes,
     .nullable = true,
     .message_key = "stages[].memory_headroom_bytes",
     .meaning = "the device memory the reserved peak left free; null when unknown",
     .value = [](const whatif::StageModel& s) { return V::IntOrNull(s.memory_headroom_bytes); },
     .slot = [](whatif::StageModel& s) -> Slot { return &s.memory_headroom_bytes; }},
    {.key = "layers",
     .unit = Unit::kNumber,
     .message_key = "stages[].layers",
     .meaning = "model layers on the stage; 0 when unknown",
     .value = [](const whatif::StageModel& s) { return V::Int(s.layers); },
     .slot = [](whatif::StageModel& s) -> Slot { return &s.layers; }},
};

using LinkCostField = Field<whatif::LinkCost, whatif::LinkCost>;
constexpr LinkCostField kWhatIfLink[] = {
    {.key = "src_stage",
     .unit = Unit::kNumber,
     .message_key = "links[].src_stage",
     .meaning = "sending stage",
     .value = [](const whatif::LinkCost& l) { return V::Int(l.src_stage); },
     .slot = [](whatif::LinkCost& l) -> Slot { return &l.src_stage; }},
    {.key = "dst_stage",
     .unit = Unit::kNumber,
     .message_key = "links[].dst_stage",
     .meaning = "receiving stage",
     .value = [](const whatif::LinkCost& l) { return V::Int(l.dst_stage); },
     .slot = [](whatif::LinkCost& l) -> Slot { return &l.dst_stage; }},
    {.key = "transfer_ns",
     .unit = Unit::kWholeNanoseconds,
     .message_key = "links[].transfer_ns",
     .meaning = "the link's median transfer",
     .value = [](const whatif::LinkCost& l) { return V::Int(l.transfer_ns); },
     .slot = [](whatif::LinkCost& l) -> Slot { return &l.transfer_ns; }},
};

// The type column of the reference table.
std::string TypeText(Unit unit, bool nullable) {
  std::string_view type;
  switch (unit) {
    case Unit::kFraction:
    case Unit::kSignedFraction:
    case Unit::kMicroseconds:
    case Unit::kNanoseconds:
    case Unit::kGbps:
      type = "number";
      break;
    case Unit::kWholeNanoseconds:
    case Unit::kBytes:
    case Unit::kCount:
    case Unit::kNumber:
      type = "integer";
      break;
    case Unit::kRanks:
      type = "array of integers";
      break;
    case Unit::kString:
    case Unit::kSchedule:
      type = "string";
      break;
    case Unit::kBool:
      type = "boolean";
      break;
    case Unit::kObject:
      type = "object";
      break;
    case Unit::kArray:
      type = "array";
      break;
  }
  return nullable ? absl::StrCat(std::string(type), " or null") : std::string(type);
}

// Appends the rows of `fields` under `prefix` ("pipelines[]."), each nested table after its row.
template <typename Source, typename Figures>
void AppendRows(std::span<const Field<Source, Figures>> fields, const std::string& prefix,
                std::vector<std::string>* rows);

void AppendNest(Nest nest, const std::string& prefix, std::vector<std::string>* rows) {
  switch (nest) {
    case Nest::kNone:
      return;
    case Nest::kLatency:
      return AppendRows(kLatencyFields, prefix, rows);
    case Nest::kIterations:
      return AppendRows(kIterationFields, prefix, rows);
    case Nest::kRankStats:
      return AppendRows(kRankStatFields, prefix, rows);
    case Nest::kLinks:
      return AppendRows(kLinkFields, prefix, rows);
    case Nest::kRebalance:
      return AppendRows(kRebalanceFields, prefix, rows);
    case Nest::kWhatIfModel:
      return AppendRows(kWhatIfModelFields, prefix, rows);
    case Nest::kWhatIfStages:
      return AppendRows(kWhatIfStageFields, prefix, rows);
    case Nest::kWhatIfLinks:
      return AppendRows(kWhatIfLinkFields, prefix, rows);
  }
}

template <typename Source, typename Figures>
void AppendRows(std::span<const Field<Source, Figures>> fields, const std::string& prefix,
                std::vector<std::string>* rows) {
  for (const Field<Source, Figures>& field : fields) {
    const std::string path =
        absl::StrCat(prefix, std::string(field.key), field.unit == Unit::kArray ? "[]" : "");
    rows->push_back(absl::StrCat("| `", path, "` | ", TypeText(field.unit, field.nullable), " | ",
                                 std::string(field.meaning), " |"));
    AppendNest(field.nest, absl::StrCat(path, "."), rows);
  }
}

}  // namespace

const std::span<const PipelineField> kPipelineFields = kPipeline;
const std::span<const Field<bubble::Latency, PipelineFigures>> kLatencyFields = kLatency;
const std::span<const Field<bubble::IterationFigures, IterationFigures>> kIterationFields =
    kIteration;
const std::span<const Field<RankOfPipeline, StageFigures>> kRankStatFields = kRankStat;
const std::span<const Field<link_stats::Link, LinkFigures>> kLinkFields = kLink;
const std::span<const Field<rebalance::Result, PipelineFigures>> kRebalanceFields = kRebalance;
const std::span<const Field<findings::Finding, FindingFigures>> kFindingFields = kFinding;
const std::span<const ModelField> kWhatIfModelFields = kWhatIfModel;
const std::span<const StageField> kWhatIfStageFields = kWhatIfStage;
const std::span<const LinkCostField> kWhatIfLinkFields = kWhatIfLink;

Figure RangeOf(Unit unit) {
  switch (unit) {
    case Unit::kFraction:
      return Figure::kFraction;
    case Unit::kSignedFraction:
      return Figure::kSignedFraction;
    case Unit::kMicroseconds:
      return Figure::kMicros;
    case Unit::kBytes:
      return Figure::kBytes;
    default:
      return Figure::kRate;  // a rate, a per-op time: finite and not negative
  }
}

std::string AsWritten(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const size_t length = text::Utf8SequenceLength(text, i);
    if (length == 0) {
      out += "\xEF\xBF\xBD";  // U+FFFD
      ++i;
    } else {
      out.append(text.substr(i, length));
      i += length;
    }
  }
  return out;
}

void WriteValue(const Value& value, JsonWriter& json) {
  switch (value.form) {
    case Value::Form::kAbsent:
    case Value::Form::kPresent:
      return;
    case Value::Form::kNull:
      return json.Null();
    case Value::Form::kInt:
      return json.Int(value.integer);
    case Value::Form::kMicros:
      return json.Decimal(value.integer, 3);
    case Value::Form::kDouble:
      return json.Double(value.number);
    case Value::Form::kString:
      return json.String(value.text);
    case Value::Form::kBool:
      return json.Bool(value.flag);
    case Value::Form::kInts:
      json.BeginArray();
      for (int32_t element : *value.ints) json.Int(element);
      json.EndArray();
      return;
  }
}

bool Store(const Value& value, Unit unit, const Slot& slot) {
  using Form = Value::Form;
  if (value.form == Form::kAbsent || value.form == Form::kPresent) return true;
  const bool null = value.form == Form::kNull;
  // The number the reader reads back: microseconds are the writer's three decimals, which
  // parse to the double nearest ns / 1000, the quotient IEEE division rounds to.
  const double number = value.form == Form::kMicros ? static_cast<double>(value.integer) / 1000.0
                        : value.form == Form::kInt  ? static_cast<double>(value.integer)
                                                    : value.number;
  auto in_range = [&] { return FigureInRange(number, RangeOf(unit)); };
  return std::visit(
      [&](auto out) -> bool {
        using Held = decltype(out);
        if constexpr (std::is_same_v<Held, std::monostate>) {
          return true;  // written, not compared
        } else {
          using T = std::remove_pointer_t<Held>;
          if constexpr (std::is_same_v<T, double>) {
            if (null) return true;  // a nullable figure the report leaves null stays 0
            *out = number;
            return in_range();
          } else if constexpr (std::is_same_v<T, std::optional<double>>) {
            if (null) {
              out->reset();
              return true;
            }
            *out = number;
            return in_range();
          } else if constexpr (std::is_same_v<T, int32_t>) {
            *out = static_cast<int32_t>(value.integer);
            return *out == value.integer;  // the reader refuses what int32 cannot hold
          } else if constexpr (std::is_same_v<T, std::optional<int32_t>>) {
            if (null) {
              out->reset();
              return true;
            }
            *out = static_cast<int32_t>(value.integer);
            return **out == value.integer;
          } else if constexpr (std::is_same_v<T, int64_t>) {
            *out = null ? -1 : value.integer;  // a byte count's null is -1 (unknown)
            return unit != Unit::kCount || *out >= 0;
          } else if constexpr (std::is_same_v<T, bool>) {
            *out = value.flag;
            return true;
          } else if constexpr (std::is_same_v<T, std::string>) {
            *out = null ? std::string() : AsWritten(value.text);
            return true;
          } else if constexpr (std::is_same_v<T, std::optional<std::string>>) {
            if (null) {
              out->reset();
            } else {
              *out = AsWritten(value.text);
            }
            return true;
          } else if constexpr (std::is_same_v<T, std::vector<int32_t>>) {
            *out = *value.ints;
            return true;
          } else {
            static_assert(std::is_same_v<T, sim::Schedule>);
            for (sim::Schedule schedule : sim::kSchedules) {
              if (sim::ScheduleName(schedule) == value.text) {
                *out = schedule;
                return true;
              }
            }
            return false;
          }
        }
      },
      slot);
}

void AttachFindings(std::vector<FindingFigures> findings, RunFigures* run) {
  for (FindingFigures& finding : findings) {
    if (finding.ranks.empty()) continue;
    for (PipelineFigures& pipeline : run->pipelines) {
      if (std::find(pipeline.ranks.begin(), pipeline.ranks.end(), finding.ranks.front()) !=
          pipeline.ranks.end()) {
        pipeline.findings.push_back(std::move(finding));
        break;
      }
    }
  }
}

void NoteNoCompleteIteration(PipelineFigures* pipeline) {
  if (pipeline->complete_iterations == 0 && pipeline->no_complete_iteration.empty()) {
    pipeline->no_complete_iteration = "the report counts 0 complete iterations";
  }
}

std::vector<std::string> ReferenceRows() {
  std::vector<std::string> rows;
  AppendRows(kPipelineFields, "pipelines[].", &rows);
  AppendRows(kFindingFields, "findings[].", &rows);
  return rows;
}

}  // namespace bubblescope::compare::schema
