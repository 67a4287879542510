#include "crossrank/job_pipelines.h"

#include <algorithm>
#include <map>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "analysis/device_activity.h"
#include "analysis/iterations.h"
#include "pipeline/rebalance.h"

namespace bubblescope::job_pipelines {
namespace {

std::string OneLine(absl::string_view text) {
  std::string line(text.data(), text.size());
  std::replace(line.begin(), line.end(), '\n', ' ');
  return line;
}

absl::StatusOr<PipelineAnalysis> AnalyzeOne(const Trace& trace, const p2p_graph::Result& graph,
                                            const p2p_graph::Pipeline& pipeline,
                                            const Options& options) {
  PipelineAnalysis out;
  CrossRankFigures& crossrank = out.crossrank;
  crossrank.pipeline = pipeline;
  p2p_matching::Result matching =
      p2p_matching::Analyze(graph, p2p_matching::Options{.ranks = pipeline.stage_order});
  crossrank.unmatched = matching.unmatched;
  crossrank.ops_without_peer = matching.ops_without_peer;
  crossrank.offsets =
      clock_alignment::Analyze(matching.transfers,
                               clock_alignment::Options{.ranks = pipeline.stage_order})
          .offsets;
  const Trace aligned = clock_alignment::ShiftClocks(trace, crossrank.offsets);

  // One iteration assignment for the bubble and the shape: m must count the microbatches of the
  // iterations the bubble is measured over.
  absl::StatusOr<iterations::Result> assignment = iterations::Analyze(aligned, options.iterations);
  if (!assignment.ok()) return assignment.status();
  bubble::Options bubble_options;
  bubble_options.ranks = pipeline.stage_order;
  absl::StatusOr<bubble::Result> bubble =
      bubble::FromIterations(aligned, *assignment, bubble_options);
  if (!bubble.ok()) return bubble.status();
  out.bubble = *std::move(bubble);

  findings::Options findings_options = options.findings;
  schedule_inference::Options shape_options;
  shape_options.ranks = pipeline.stage_order;
  absl::StatusOr<schedule_inference::Result> shape =
      schedule_inference::FromIterations(aligned, *assignment, shape_options);
  if (shape.ok()) {
    out.shape = *std::move(shape);
  } else if (absl::IsFailedPrecondition(shape.status())) {
    findings_options.shape_unknown_reason = OneLine(shape.status().message());
  } else {
    return shape.status();
  }
  if (out.shape && out.shape->slowest_stage >= 0 &&
      out.shape->slowest_excess_percent >= findings_options.imbalance_min_percent) {
    // Only a family the simulator cannot run fails here; the finding then goes without it.
    absl::StatusOr<findings::ImbalanceEffect> effect =
        rebalance::EffectOfSlowestStage(*out.shape);
    if (effect.ok()) out.slowest_stage_effect = *effect;
  }
  out.findings = findings::Analyze(out.bubble, out.shape ? &*out.shape : nullptr,
                                   findings_options,
                                   out.slowest_stage_effect ? &*out.slowest_stage_effect : nullptr);

  crossrank.links = link_stats::Analyze(matching.transfers, crossrank.offsets);
  crossrank.stalls = stall_attribution::Analyze(
      aligned, out.bubble, matching.transfers,
      stall_attribution::Options{.offsets = crossrank.offsets});
  return out;
}

void SummarizeJob(Result& result, const p2p_graph::Result& graph, const Trace& trace) {
  JobSummary& job = result.job;
  job.pipelines = static_cast<int32_t>(result.pipelines.size());
  job.ranks_without_p2p = graph.ranks_without_p2p;
  job.notes = graph.notes;
  for (size_t i = 0; i < result.pipelines.size(); ++i) {
    const double bubble = result.pipelines[i].bubble.bubble_fraction;
    if (job.worst_pipeline < 0 || bubble > job.worst_bubble_fraction) {
      job.worst_pipeline = static_cast<int32_t>(i);
      job.worst_bubble_fraction = bubble;
    }
    if (i == 0 || bubble < job.best_bubble_fraction) job.best_bubble_fraction = bubble;
  }
  job.bubble_spread = job.worst_bubble_fraction - job.best_bubble_fraction;
  if (result.pipelines.empty()) job.collectives = SummarizeCollectives(trace);
}

}  // namespace

std::vector<CollectiveSummary> SummarizeCollectives(const Trace& trace) {
  std::map<std::string, CollectiveSummary> kinds;
  for (const Rank& rank : trace.ranks) {
    for (const device_activity::DeviceInterval& interval :
         device_activity::ForRank(rank).intervals) {
      if (interval.activity != device_activity::ActivityClass::kComm) continue;
      const Interval& op = rank.timelines[interval.timeline].intervals[interval.interval];
      const CommInfo* info = rank.comm(op);
      if (info != nullptr && (info->kind == CommKind::kSend || info->kind == CommKind::kRecv)) {
        continue;
      }
      std::string kind = "unknown";
      if (info != nullptr && info->kind != CommKind::kUnknown) {
        kind = std::string(CommKindName(info->kind));
      } else if (info != nullptr && info->collective != kNoName) {
        kind = std::string(rank.name(info->collective));
      }
      CollectiveSummary& summary = kinds[kind];
      summary.kind = kind;
      ++summary.count;
      if (info != nullptr && info->bytes > 0) {
        summary.bytes += info->bytes;
        ++summary.sized;
      }
      summary.time_ns += op.end - op.start;
    }
  }
  std::vector<CollectiveSummary> out;
  for (auto& [kind, summary] : kinds) out.push_back(std::move(summary));
  std::stable_sort(out.begin(), out.end(), [](const CollectiveSummary& a,
                                              const CollectiveSummary& b) {
    return a.time_ns > b.time_ns;
  });
  return out;
}

absl::StatusOr<Result> Analyze(const Trace& trace, const Options& options) {
  const p2p_graph::Result graph = p2p_graph::Analyze(trace, p2p_graph::Options{});
  Result result;
  for (const p2p_graph::Pipeline& pipeline : graph.pipelines) {
    absl::StatusOr<PipelineAnalysis> analysis = AnalyzeOne(trace, graph, pipeline, options);
    if (!analysis.ok()) return analysis.status();
    result.pipelines.push_back(*std::move(analysis));
  }
  std::vector<std::vector<link_stats::Link>*> links;
  for (PipelineAnalysis& pipeline : result.pipelines) links.push_back(&pipeline.crossrank.links);
  link_stats::MarkSlowLinks(links, options.slow);

  for (PipelineAnalysis& pipeline : result.pipelines) {
    link_findings::Input input{.stage_order = &pipeline.crossrank.pipeline.stage_order,
                               .bubble = &pipeline.bubble,
                               .links = &pipeline.crossrank.links,
                               .stalls = &pipeline.crossrank.stalls,
                               .unmatched = &pipeline.crossrank.unmatched};
    std::vector<findings::Finding>& all = pipeline.findings.findings;
    for (findings::Finding& finding : link_findings::Analyze(input, options.link_findings)) {
      all.push_back(std::move(finding));
    }
    std::stable_sort(all.begin(), all.end(), [](const findings::Finding& a,
                                                const findings::Finding& b) {
      return a.cost_ns > b.cost_ns;
    });
  }
  if (result.pipelines.empty() && options.iterations.iteration_marker.has_value()) {
    // No pipeline measured the iterations, yet a bad --iteration-marker is still the user's error.
    absl::StatusOr<iterations::Result> checked = iterations::Analyze(Trace{}, options.iterations);
    if (!checked.ok()) return checked.status();
  }
  SummarizeJob(result, graph, trace);
  return result;
}

}  // namespace bubblescope::job_pipelines
