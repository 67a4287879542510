// Renders the bubble analysis of each pipeline (bubble::Result, the inferred shape, findings)
// as a text block and as the "pipelines" / "findings" members of the analyze JSON document
// (docs/json-report.md). Reports only read results; they compute nothing beyond unit
// conversions, percentages and the theoretical bubble formula.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "analysis/bubble.h"
#include "analysis/findings.h"
#include "analysis/rank_summary.h"
#include "crossrank/job_pipelines.h"
#include "pipeline/schedule_inference.h"
#include "report/rebalance_report.h"
#include "report/summary_report.h"

namespace bubblescope {

struct PipelineFigures {
  bubble::Result bubble;
  std::optional<schedule_inference::Result> shape;  // nullopt when inference failed
  findings::Result findings;
  // Clock offsets, links and stall attribution (report/link_report.h); nullopt when the
  // pipeline was not found from p2p traffic.
  std::optional<job_pipelines::CrossRankFigures> crossrank;
  std::optional<RebalanceFigures> rebalance;  // only with layer counts (user or annotations)
  // The bubble the slowest stage causes, when it was simulated (job_pipelines.h).
  std::optional<findings::ImbalanceEffect> slowest_stage_effect;
};

// One block per pipeline: shape and where it came from, measured vs theoretical bubble,
// latency, a per-rank table, a per-stage F/B/W table and the findings.
std::string PipelineText(const std::vector<PipelineFigures>& pipelines);

// The analyze document of SummaryJson with "pipelines" and "findings" (every pipeline's
// findings, by cost descending) added after its members, then "job" when `job` is given. Fails
// only on writer misuse (a bug).
absl::StatusOr<std::string> AnalyzeJson(const rank_summary::Result& summary,
                                        const std::vector<PipelineFigures>& pipelines,
                                        const SummaryReportOptions& options,
                                        const job_pipelines::JobSummary* job = nullptr);

}  // namespace bubblescope
