#include "job/job.h"

#include <algorithm>
#include <set>
#include <string>
#include <tuple>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/parallel_for.h"
#include "common/status_macros.h"
#include "crossrank/clock_tolerance.h"
#include "index/rank_index.h"
#include "job/job_stages.h"
#include "pipeline/annotation_ops.h"
#include "pipeline/issued_items.h"
#include "pipeline/layer_counts.h"
#include "pipeline/sim_schedule.h"
#include "pipeline/step_map.h"
#include "pipeline/transfer_actions.h"
#include "text/one_line.h"
#include "whatif/stage_effect.h"
#include "whatif/whatif.h"

namespace bubblescope::job {

ProgressTicker::ProgressTicker(const Options& options, std::string_view stage, size_t total)
    : progress_(options.progress ? &options.progress : nullptr), stage_(stage), total_(total) {}

void ProgressTicker::Tick() {
  if (progress_ == nullptr) return;
  const std::lock_guard<std::mutex> lock(mutex_);
  ++done_;
  (*progress_)(Progress{.stage = stage_, .done = done_, .total = total_});
}

namespace {

// The communication ops on the data-parallel groups the job's structure gives, tagged as such:
// the gradient sync is then measured as such (dp_sync).
void TagInferredDataParallel(const Trace& trace, const std::set<DataGroupKey>& inferred,
                             JobInputs& inputs) {
  if (inferred.empty()) return;
  for (size_t r = 0; r < trace.ranks.size(); ++r) {
    const std::vector<ProcessGroup>& declared = trace.ranks[r].process_groups;
    std::vector<bool> is_data(declared.size());
    for (size_t g = 0; g < declared.size(); ++g) {
      is_data[g] = inferred.contains(
          DataGroupKey{declared[g].ranks, declared[g].name, declared[g].description});
    }
    for (index::DeviceOp& op : inputs.index.ranks[r].ops) {
      if (op.op_class == index::OpClass::kComm && op.process_group < is_data.size() &&
          is_data[op.process_group] && op.group == index::GroupRole::kUnknown) {
        op.group = index::GroupRole::kData;
      }
    }
  }
}

}  // namespace

std::set<DataGroupKey> InferredDataGroups(
    const Trace& trace, const std::vector<const std::vector<index::GroupRoleInfo>*>& roles,
    const std::vector<std::vector<int32_t>>& stage_orders) {
  std::vector<index::JobGroup> groups = index::JobGroups(trace, roles);
  std::set<DataGroupKey> inferred;
  if (index::InferDataParallelGroups(stage_orders, groups).inferred == 0) return inferred;
  for (const index::JobGroup& group : groups) {
    if (group.role.source == index::RoleSource::kStructure) {
      inferred.insert(DataGroupKey{group.ranks, group.name, group.description});
    }
  }
  return inferred;
}

absl::StatusOr<JobInputs> DeriveInputs(const Trace& trace, const Options& options,
                                       const JobDecisions* decided) {
  JobInputs inputs;
  inputs.trace = &trace;
  const size_t workers = WorkerCount(options.jobs, trace.ranks.size());
  ProgressTicker indexed(options, "indexing ranks", trace.ranks.size());
  inputs.index = index::Build(trace, workers, [&indexed] { indexed.Tick(); });
  std::vector<size_t> with_p2p;
  for (size_t r = 0; r < trace.ranks.size(); ++r) {
    if (inputs.index.ranks[r].HasP2p()) with_p2p.push_back(r);
  }
  iterations::Options step_options = options.iterations;
  if (decided != nullptr) step_options.decided_source = decided->step_source;
  BUBBLESCOPE_ASSIGN_OR_RETURN(iterations::Steps steps,
                               iterations::FindSteps(trace, inputs.index, step_options, with_p2p));
  inputs.steps = std::move(steps);
  const std::vector<pipeline::StepMap> references =
      decided != nullptr
          ? pipeline::ReferenceSteps(inputs.steps, with_p2p, decided->shared_reference)
          : pipeline::ReferenceSteps(trace, inputs.steps, with_p2p);
  inputs.timelines.resize(trace.ranks.size());
  inputs.annotated.resize(trace.ranks.size());
  inputs.named_transfers.resize(trace.ranks.size());
  ParallelFor(with_p2p.size(), workers, [&](size_t, size_t i) {
    const size_t r = with_p2p[i];
    inputs.timelines[r] = pipeline::BuildIssuedTimeline(inputs.index.ranks[r], references[r]);
    inputs.timelines[r].names = &trace.ranks[r].names;
    inputs.annotated[r] =
        pipeline::AnnotatedOps(trace.ranks[r], inputs.index.ranks[r], references[r]);
    inputs.named_transfers[r] = pipeline::LabelTransfers(trace.ranks[r], inputs.index.ranks[r]);
  });
  for (size_t r = 0; r < trace.ranks.size(); ++r) inputs.timelines[r].rank = trace.ranks[r].rank;
  std::vector<const std::vector<ProcessGroup>*> process_groups;
  std::vector<bool> cut_short;
  for (const Rank& rank : trace.ranks) {
    process_groups.push_back(&rank.process_groups);
    cut_short.push_back(iterations::CutShort(rank));
  }
  inputs.graph = p2p_graph::Analyze(
      {.index = &inputs.index,
       .timelines = &inputs.timelines,
       .annotated = &inputs.annotated,
       .process_groups = &process_groups,
       .named_transfers = &inputs.named_transfers,
       .cut_short = &cut_short,
       .peers_recorded =
           decided != nullptr ? std::optional<bool>(decided->peers_recorded) : std::nullopt});
  // A part of the job holds one pipeline: it cannot see the others that a data-parallel group
  // joins, so the job decides them (from every part's stage orders) and the part applies them.
  if (decided != nullptr) {
    TagInferredDataParallel(trace, decided->data_parallel_groups, inputs);
  } else {
    std::vector<const std::vector<index::GroupRoleInfo>*> roles;
    for (const index::RankIndex& rank : inputs.index.ranks) roles.push_back(&rank.groups);
    std::vector<std::vector<int32_t>> stage_orders;
    for (const p2p_graph::Pipeline& pipeline : inputs.graph.pipelines) {
      stage_orders.push_back(pipeline.stage_order());
    }
    TagInferredDataParallel(trace, InferredDataGroups(trace, roles, stage_orders), inputs);
  }
  return inputs;
}

namespace {

// The rebalance suggestion: from the user's layer counts, else from the pipeline's own
// `bubblescope:layers=N` annotations; nullopt when neither gives counts. InvalidArgumentError
// when the user's counts do not fit the pipeline.
absl::StatusOr<std::optional<RebalanceFigures>> Rebalance(
    const Trace& trace, const std::optional<schedule_inference::Result>& shape,
    const Options& options) {
  if (options.layers_per_stage.empty()) {
    if (!shape.has_value()) return std::nullopt;
    layer_counts::Result declared =
        layer_counts::Analyze(trace, {.stage_order = shape->stage_order});
    if (!declared.declared()) return std::nullopt;
    RebalanceFigures figures{.layers_per_stage = declared.layers_per_stage,
                             .source = LayerCountSource::kAnnotations,
                             .result = absl::UnknownError("not analysed"),
                             .predicted = std::nullopt};
    figures.result =
        declared.problem.empty()
            ? rebalance::Analyze(*shape, {.layers_per_stage = declared.layers_per_stage})
            : absl::FailedPreconditionError(declared.problem);
    return figures;
  }
  RebalanceFigures figures{.layers_per_stage = options.layers_per_stage,
                           .source = LayerCountSource::kUser,
                           .result = absl::UnknownError("not analysed"),
                           .predicted = std::nullopt};
  if (!shape.has_value()) {
    figures.result = absl::FailedPreconditionError("the pipeline's shape is unknown");
    return figures;
  }
  figures.result = rebalance::Analyze(*shape, {.layers_per_stage = options.layers_per_stage});
  if (absl::IsInvalidArgument(figures.result.status())) {
    return absl::InvalidArgumentError(absl::StrCat("layer counts ",
                                                   absl::StrJoin(options.layers_per_stage, ","),
                                                   ": ", figures.result.status().message()));
  }
  return figures;
}

// The what-if model of the measured job (with the layer counts when known), built once: every
// prediction below, the root causes' savings and `bubblescope whatif` read it. Then the
// suggested layer move through it, and the shallower configurations of the same samples behind
// the pipeline_depth finding's remedy and the schedule_depth cause's saving.
void ModelAndPredict(const JobInputs& inputs, const p2p_graph::Pipeline& found, bool tradeoff,
                     Pipeline& out) {
  if (!out.no_complete_iteration.empty()) {
    // The model's measured iteration and bubble would be the zeros of no iteration at all.
    out.model_problem = absl::StrCat("no complete iteration: ", out.no_complete_iteration);
  } else if (out.shape) {
    whatif::Input model_input{.trace = inputs.trace,
                              .shape = &*out.shape,
                              .bubble = &out.bubble,
                              .links = &out.crossrank.links,
                              .layers_per_stage = {},
                              .recompute_ns = {}};
    if (out.rebalance.has_value() && out.rebalance->result.ok()) {
      model_input.layers_per_stage = out.rebalance->layers_per_stage;
    }
    for (size_t position : found.positions) {
      model_input.recompute_ns.push_back(inputs.index.ranks[position].recompute_ns);
      for (const p2p_graph::P2pOp& op : inputs.graph.ranks[position].ops) {
        model_input.batched_p2p |= op.batch >= 0;
      }
    }
    absl::StatusOr<whatif::Model> model = whatif::ModelOf(model_input);
    if (model.ok()) {
      out.model = *std::move(model);
    } else {
      out.model_problem = text::OneLine(std::string(model.status().message()));
    }
  } else {
    out.model_problem = out.shape_problem;
  }
  if (out.model && out.rebalance && out.rebalance->result.ok() &&
      out.rebalance->result->suggested) {
    // The suggested move through the model with links and memory: the iteration against the
    // modelled and measured ones, and what the stages receiving layers would then hold.
    whatif::Candidate moved = whatif::AsMeasured(*out.model);
    moved.layers_per_stage = out.rebalance->result->layers_after;
    absl::StatusOr<whatif::Result> predicted = whatif::Analyze(*out.model, {moved});
    if (predicted.ok()) out.rebalance->predicted = *std::move(predicted);
  }
  if (out.model) {
    const whatif::Model& model = *out.model;
    whatif::Candidate twice = whatif::AsMeasured(model);
    twice.microbatches = 2 * model.m;
    twice.same_global_batch = true;
    std::vector<whatif::Candidate> candidates = {twice};
    if (model.schedule == sim::Schedule::k1F1B && model.p > 1 && model.m % model.p == 0) {
      candidates.push_back(
          whatif::Candidate{sim::Schedule::kInterleaved1F1B, model.m, 2, false, {}});
    }
    if (model.v == 1 &&
        (model.schedule == sim::Schedule::k1F1B || model.schedule == sim::Schedule::kGpipe)) {
      candidates.push_back(whatif::Candidate{sim::Schedule::kZeroBubbleH1, model.m, 1, false, {}});
    }
    absl::StatusOr<whatif::Result> predicted = whatif::Analyze(model, candidates);
    if (predicted.ok()) out.depth_remedies = *std::move(predicted);
    if (tradeoff) out.tradeoff = whatif::Analyze(model, whatif::TradeoffCandidates(model));
  }
}

// Why `bubble` has no complete iteration (an iteration every pipeline rank has); empty when it
// has one.
std::string NoCompleteIteration(const bubble::Result& bubble) {
  if (bubble.complete_iterations > 0) return "";
  const std::string source(iterations::StepSourceName(bubble.step_source));
  if (bubble.iterations.empty()) {
    return bubble.step_source == iterations::StepSource::kMarker
               ? "the iteration marker matches no annotation on the pipeline's ranks"
               : absl::StrCat("no iteration found on the pipeline's ranks (from ", source, ")");
  }
  std::vector<int32_t> never_present;
  for (size_t r = 0; r < bubble.ranks.size(); ++r) {
    const bool present = std::any_of(bubble.iterations.begin(), bubble.iterations.end(),
                                     [r](const bubble::IterationFigures& it) {
                                       return r < it.ranks.size() && it.ranks[r].present;
                                     });
    if (!present) never_present.push_back(bubble.ranks[r]);
  }
  const std::string found = absl::StrCat(bubble.iterations.size(), " iterations (from ", source,
                                         ") found, none on every pipeline rank");
  if (!never_present.empty()) {
    return absl::StrCat(found, ": rank ", absl::StrJoin(never_present, ", rank "),
                        " has none of them (no step range, or its steps numbered otherwise)");
  }
  return absl::StrCat(found, " (the ranks' steps are numbered otherwise, or cut by a trace's end)");
}

// Peers inferred from the schedule, or transfers paired through a stage order guessed from
// their rhythm, make bounds no evidence.
bool PeersGuessed(const p2p_graph::Pipeline& found) {
  return !found.peers_recorded || found.order_guessed;
}

absl::StatusOr<Pipeline> AnalyzePipeline(const JobInputs& inputs, const p2p_graph::Pipeline& found,
                                         const p2p_matching::Result& matching,
                                         const clock_alignment::JobClocks& job_clocks,
                                         const Options& options) {
  const Trace& trace = *inputs.trace;
  Pipeline out;
  CrossRankFigures& crossrank = out.crossrank;
  crossrank.pipeline = found;
  const std::vector<int32_t>& stage_order = found.stage_order();

  crossrank.unmatched = matching.unmatched;
  crossrank.ops_without_peer = matching.ops_without_peer;
  crossrank.missing_peers = job_completeness::PeersOutsideTrace(trace, inputs.index, stage_order);
  // Clocks: the job's model against this pipeline's first stage; an offset is applied only on
  // tight evidence (clock_alignment.h).
  clock_alignment::Options clock_options{
      .ranks = stage_order, .hosts = {}, .tolerance_ns = 0, .peers_guessed = PeersGuessed(found)};
  std::vector<const pipeline::IssuedTimeline*> pipeline_timelines;
  for (int32_t rank : stage_order) {
    const int32_t position = inputs.index.PositionOf(rank);
    const size_t at = static_cast<size_t>(position);
    clock_options.hosts.push_back(position < 0 ? std::string() : trace.ranks[at].host);
    clock_options.own_zero.push_back(position >= 0 &&
                                     clock_alignment::StartsAtItsOwnZero(trace.ranks[at]));
    if (position >= 0) pipeline_timelines.push_back(&inputs.timelines[at]);
  }
  clock_options.tolerance_ns = clock_alignment::ClockTolerance(pipeline_timelines);
  if (!matching.transfers.empty()) {
    // The pipeline's own span, as recorded: where its offsets are given.
    TimeNs first = matching.transfers.front().send.start;
    TimeNs last = first;
    for (const p2p_matching::Transfer& transfer : matching.transfers) {
      first = std::min({first, transfer.send.start, transfer.recv.start});
      last = std::max({last, transfer.send.end, transfer.recv.end});
    }
    clock_options.half_span_ns = std::max<TimeNs>(1, (last - first) / 2);
    clock_options.anchor_ns = first + (last - first) / 2;
  }
  crossrank.offsets = clock_alignment::Analyze(job_clocks, clock_options).offsets;
  crossrank.clock_tolerance_ns = clock_options.tolerance_ns;
  const ClockOffsets clocks = clock_alignment::AsClockOffsets(crossrank.offsets);

  // One iteration assignment for the bubble; the shape reads each rank's reference step.
  const iterations::Result assignment =
      iterations::Assign(trace, inputs.index, inputs.steps, found.positions, clocks);
  out.bubble = bubble::Analyze(trace, inputs.index, assignment, clocks);
  out.no_complete_iteration = NoCompleteIteration(out.bubble);

  schedule_inference::Input shape_input;
  std::vector<pipeline::IssuedTimeline> timelines;
  std::vector<std::vector<pipeline::PipelineOp>> annotated;
  for (size_t position : found.positions) {
    timelines.push_back(inputs.timelines[position]);
    annotated.push_back(inputs.annotated[position]);
  }
  std::vector<size_t> in_trace_order = found.positions;
  std::sort(in_trace_order.begin(), in_trace_order.end());
  for (size_t position : in_trace_order) {
    if (iterations::CutShort(trace.ranks[position])) {
      shape_input.cut_short_ranks.push_back(trace.ranks[position].rank);
    }
  }
  out.cut_short_ranks = shape_input.cut_short_ranks;
  shape_input.order = &found.order;
  shape_input.timelines = &timelines;
  shape_input.annotated = &annotated;
  findings::Options findings_options = options.findings;
  absl::StatusOr<schedule_inference::Result> shape = schedule_inference::Analyze(shape_input);
  if (shape.ok()) {
    out.shape = *std::move(shape);
  } else if (absl::IsFailedPrecondition(shape.status())) {
    out.shape_problem = text::OneLine(std::string(shape.status().message()));
    findings_options.shape_unknown_reason = out.shape_problem;
  } else {
    return shape.status();
  }
  out.evidence = inference_evidence::Analyze(found, out.shape);
  BUBBLESCOPE_ASSIGN_OR_RETURN(std::optional<RebalanceFigures> rebalance,
                               Rebalance(trace, out.shape, options));
  out.rebalance = std::move(rebalance);
  if (out.shape) {
    out.ideal = pipeline::IdealBubbleOf(*out.shape);
    out.excess_bubble_fraction = out.bubble.bubble_fraction - out.ideal->fraction;
    out.op_timeline = op_timeline::Build(*out.shape, out.bubble, clocks);
  }
  std::vector<link_stats::ClockError> clock_errors;
  for (const clock_alignment::RankOffset& offset : crossrank.offsets) {
    clock_errors.push_back({offset.rank, offset.clock_node, offset.ErrorBound()});
  }
  crossrank.links = link_stats::Analyze(matching.transfers, clocks, clock_errors);
  crossrank.stalls =
      stall_attribution::Analyze(inputs.index, out.bubble, matching.transfers, clocks);

  ModelAndPredict(inputs, found, options.tradeoff, out);
  if (out.model && out.shape->slowest_stage >= 0 &&
      out.shape->slowest_excess_percent >= findings_options.imbalance_min_percent) {
    absl::StatusOr<rebalance::ImbalanceEffect> effect =
        whatif::EffectOfStageAtMean(*out.model, out.shape->slowest_stage);
    if (effect.ok()) out.slowest_stage_effect = *effect;
  }
  out.findings = findings::Analyze(
      out.bubble, out.shape ? &*out.shape : nullptr, out.ideal ? &*out.ideal : nullptr,
      out.excess_bubble_fraction, findings_options,
      out.slowest_stage_effect ? &*out.slowest_stage_effect : nullptr,
      out.depth_remedies ? &*out.depth_remedies : nullptr, out.model ? &*out.model : nullptr);
  return out;
}

}  // namespace

std::string_view LayerCountSourceName(LayerCountSource source) {
  switch (source) {
    case LayerCountSource::kUser:
      return "user";
    case LayerCountSource::kAnnotations:
      return "annotations";
  }
  return "unknown";
}

bool Result::Incomplete() const {
  if (!job.completeness.missing_ranks.empty()) return true;
  if (!job.completeness.ranks_outside_world.empty()) return true;
  return std::any_of(pipelines.begin(), pipelines.end(), [](const Pipeline& pipeline) {
    return !pipeline.crossrank.missing_peers.empty();
  });
}

void SummarizeJob(const SummaryInputs& inputs, Result& result) {
  JobSummary& job = result.job;
  job.pipelines = static_cast<int32_t>(result.pipelines.size());
  job.ranks_without_p2p = inputs.ranks_without_p2p;
  job.notes = inputs.notes;
  job.completeness = job_completeness::AnalyzeJob(*inputs.trace);
  job.one_run = one_run::Compare(*inputs.trace, result.ranks);
  bool ranked_any = false;
  job.process_groups = index::JobGroups(*inputs.trace, inputs.roles);
  std::vector<std::vector<int32_t>> stage_orders;
  for (const Pipeline& pipeline : result.pipelines) {
    stage_orders.push_back(pipeline.crossrank.pipeline.stage_order());
  }
  const index::StructureInference inferred =
      index::InferDataParallelGroups(stage_orders, job.process_groups);
  if (inferred.inferred > 0) {
    // Kept ordered by role, as JobGroups orders them.
    std::stable_sort(job.process_groups.begin(), job.process_groups.end(),
                     [](const index::JobGroup& a, const index::JobGroup& b) {
                       return std::tie(a.role.role, a.ranks) < std::tie(b.role.role, b.ranks);
                     });
  }
  if (!inferred.refused.empty()) {
    job.notes.push_back(absl::StrCat("no data-parallel groups inferred from the groups' ranks: ",
                                     inferred.refused));
  }
  for (size_t i = 0; i < result.pipelines.size(); ++i) {
    // A pipeline without a complete iteration has no bubble to rank.
    if (!result.pipelines[i].no_complete_iteration.empty()) continue;
    const double bubble = result.pipelines[i].bubble.bubble_fraction;
    if (job.worst_pipeline < 0 || bubble > job.worst_bubble_fraction) {
      job.worst_pipeline = static_cast<int32_t>(i);
      job.worst_bubble_fraction = bubble;
    }
    if (!ranked_any || bubble < job.best_bubble_fraction) job.best_bubble_fraction = bubble;
    ranked_any = true;
  }
  job.bubble_spread = job.worst_bubble_fraction - job.best_bubble_fraction;
  job.pipelines_by_bubble = PipelinesByBubble(result.pipelines);
  result.replica_sets = FoldReplicas(result.pipelines, job.process_groups);
  FoldRankSummaries(result.ranks, result.replica_sets);
}

std::vector<p2p_matching::Result> MatchTransfers(const JobInputs& inputs, const Options& options) {
  const std::vector<p2p_graph::Pipeline>& found = inputs.graph.pipelines;
  std::vector<p2p_matching::Result> matchings(found.size());
  ParallelFor(found.size(), WorkerCount(options.jobs, found.size()), [&](size_t, size_t i) {
    matchings[i] =
        p2p_matching::Analyze(inputs.graph, p2p_matching::Options{.ranks = found[i].stage_order()});
  });
  return matchings;
}

ClockEvidence ClockEvidenceOf(const JobInputs& inputs,
                              const std::vector<p2p_matching::Result>& matchings) {
  const Trace& trace = *inputs.trace;
  ClockEvidence evidence;
  std::vector<int32_t> every_rank;
  const std::vector<p2p_graph::Pipeline>& found = inputs.graph.pipelines;
  for (size_t i = 0; i < found.size() && i < matchings.size(); ++i) {
    ClockEvidence::PipelineTransfers& pipeline = evidence.pipelines.emplace_back();
    pipeline.ranks = found[i].stage_order();
    for (int32_t rank : pipeline.ranks) {
      const int32_t position = inputs.index.PositionOf(rank);
      pipeline.hosts.push_back(position < 0 ? std::string()
                                            : trace.ranks[static_cast<size_t>(position)].host);
      every_rank.push_back(rank);
    }
    pipeline.transfers = matchings[i].transfers;
    pipeline.peers_guessed = PeersGuessed(found[i]);
  }
  evidence.collectives = collective_matching::Collect(trace, inputs.index, {.ranks = every_rank});
  return evidence;
}

clock_alignment::JobClocks FitJobClocks(std::vector<ClockEvidence> parts) {
  // The job's order, whichever parts the pipelines were read in: by their lowest rank, as the
  // p2p graph lists them.
  std::vector<const ClockEvidence::PipelineTransfers*> pipelines;
  collective_matching::Kernels collectives;
  for (ClockEvidence& part : parts) {
    for (const ClockEvidence::PipelineTransfers& pipeline : part.pipelines) {
      if (!pipeline.ranks.empty()) pipelines.push_back(&pipeline);
    }
    collective_matching::Join(collectives, std::move(part.collectives));
  }
  std::stable_sort(
      pipelines.begin(), pipelines.end(),
      [](const ClockEvidence::PipelineTransfers* a, const ClockEvidence::PipelineTransfers* b) {
        return *std::min_element(a->ranks.begin(), a->ranks.end()) <
               *std::min_element(b->ranks.begin(), b->ranks.end());
      });
  clock_alignment::JobInput input;
  for (const ClockEvidence::PipelineTransfers* pipeline : pipelines) {
    input.ranks.insert(input.ranks.end(), pipeline->ranks.begin(), pipeline->ranks.end());
    input.hosts.insert(input.hosts.end(), pipeline->hosts.begin(), pipeline->hosts.end());
    input.transfers.push_back(
        clock_alignment::TransferSet{&pipeline->transfers, pipeline->peers_guessed});
  }
  input.collectives = collective_matching::Match(collectives);
  return clock_alignment::FitJob(input);
}

absl::StatusOr<std::vector<Pipeline>> AnalyzePipelines(const JobInputs& inputs,
                                                       const Options& options,
                                                       const clock_alignment::JobClocks* clocks) {
  // Pipelines are analysed on their own (each reads the shared inputs only) and taken in the
  // graph's order, so the first error in that order is the one returned whatever the threads.
  const std::vector<p2p_graph::Pipeline>& found = inputs.graph.pipelines;
  std::vector<absl::StatusOr<Pipeline>> analysed(found.size(), absl::UnknownError("not analysed"));
  ProgressTicker done(options, "analysing pipelines", found.size());
  const std::vector<p2p_matching::Result> matchings = MatchTransfers(inputs, options);
  std::optional<clock_alignment::JobClocks> own_clocks;
  if (clocks == nullptr || options.own_clocks != nullptr) {
    std::vector<ClockEvidence> whole;
    whole.push_back(ClockEvidenceOf(inputs, matchings));
    own_clocks = FitJobClocks(std::move(whole));
    if (options.own_clocks != nullptr) *options.own_clocks = *own_clocks;
    if (clocks == nullptr) clocks = &*own_clocks;
  }
  ParallelFor(found.size(), WorkerCount(options.jobs, found.size()), [&](size_t, size_t i) {
    analysed[i] = AnalyzePipeline(inputs, found[i], matchings[i], *clocks, options);
    done.Tick();
  });
  std::vector<Pipeline> pipelines;
  for (absl::StatusOr<Pipeline>& pipeline : analysed) {
    BUBBLESCOPE_RETURN_IF_ERROR(pipeline.status());
    pipelines.push_back(*std::move(pipeline));
  }
  return pipelines;
}

void FinishPipelines(std::vector<Pipeline>& pipelines, const Options& options) {
  std::vector<std::vector<link_stats::Link>*> links;
  for (Pipeline& pipeline : pipelines) links.push_back(&pipeline.crossrank.links);
  link_stats::MarkSlowLinks(links, options.slow);

  for (Pipeline& pipeline : pipelines) {
    pipeline.crossrank.plausibility =
        plausibility::Analyze(pipeline.crossrank.links, pipeline.crossrank.offsets,
                              pipeline.shape.has_value() ? &*pipeline.shape : nullptr);
    link_findings::Input input{
        .stage_order = &pipeline.crossrank.pipeline.stage_order(),
        .bubble = &pipeline.bubble,
        .links = &pipeline.crossrank.links,
        .stalls = &pipeline.crossrank.stalls,
        .unmatched = &pipeline.crossrank.unmatched,
        .uncertain_clock_ranks = &pipeline.crossrank.plausibility.uncertain_clock_ranks};
    std::vector<findings::Finding>& all = pipeline.findings.findings;
    for (findings::Finding& finding : link_findings::Analyze(input, options.link_findings)) {
      all.push_back(std::move(finding));
    }
    std::stable_sort(all.begin(), all.end(),
                     [](const findings::Finding& a, const findings::Finding& b) {
                       return a.cost_ns > b.cost_ns;
                     });
    const RebalanceFigures* rebalance =
        pipeline.rebalance.has_value() && pipeline.rebalance->result.ok() ? &*pipeline.rebalance
                                                                          : nullptr;
    pipeline.causes = root_causes::Analyze(
        {.findings = &all,
         .bubble = &pipeline.bubble,
         .shape = pipeline.shape ? &*pipeline.shape : nullptr,
         .stage_order = &pipeline.crossrank.pipeline.stage_order(),
         .links = &pipeline.crossrank.links,
         .model = pipeline.model ? &*pipeline.model : nullptr,
         .depth_remedies = pipeline.depth_remedies ? &*pipeline.depth_remedies : nullptr,
         .slowest_stage_effect =
             pipeline.slowest_stage_effect ? &*pipeline.slowest_stage_effect : nullptr,
         .rebalance = rebalance != nullptr ? &*rebalance->result : nullptr,
         .rebalance_predicted = rebalance != nullptr && rebalance->predicted.has_value()
                                    ? &*rebalance->predicted
                                    : nullptr});
  }
}

absl::StatusOr<Result> Analyze(const Trace& trace, const Options& options) {
  BUBBLESCOPE_ASSIGN_OR_RETURN(JobInputs inputs, DeriveInputs(trace, options, nullptr));
  Result result;
  result.ranks = rank_summary::Analyze(trace, inputs.index);
  result.profiler_cycles = trace.profiler_cycles;
  BUBBLESCOPE_ASSIGN_OR_RETURN(std::vector<Pipeline> pipelines,
                               AnalyzePipelines(inputs, options, options.clocks));
  result.pipelines = std::move(pipelines);
  FinishPipelines(result.pipelines, options);
  SummaryInputs summary{.trace = &trace,
                        .roles = {},
                        .ranks_without_p2p = inputs.graph.ranks_without_p2p,
                        .notes = inputs.graph.notes};
  for (const index::RankIndex& rank : inputs.index.ranks) summary.roles.push_back(&rank.groups);
  SummarizeJob(summary, result);
  if (result.pipelines.empty()) {
    result.job.collectives = collectives::Analyze(trace, inputs.index);
  }
  return result;
}

}  // namespace bubblescope::job
