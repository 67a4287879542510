// Renders a job::Result: the bubble analysis of each pipeline (bubble, inferred shape, findings,
// links) as a text block and as the "pipelines" / "findings" members of the analyze JSON
// document (docs/json-report.md), after the rank summary and before the job summary. Reports
// only read results; they compute nothing beyond unit conversions, percentages and the
// theoretical bubble formula.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "compare/run_figures.h"
#include "job/job.h"
#include "report/large_job.h"
#include "report/summary_report.h"

namespace bubblescope {

// One block per pipeline: shape and where it came from, measured vs theoretical bubble,
// latency, a per-rank table, a per-stage F/B/W table and the findings.
std::string PipelineText(const std::vector<job::Pipeline>& pipelines);

// The pipelines of `result` as the layout says (report/large_job.h): every pipeline in full, or
// for a large job each replica set folded into one block and only some pipelines in full.
std::string PipelineText(const job::Result& result, const ReportLayout& layout);

// The whole text report: rank summary, pipelines, job summary.
std::string AnalyzeText(const job::Result& result, const SummaryReportOptions& options);

// The analyze document: the rank summary's members, then "pipelines", "findings" (every
// pipeline's findings, by cost descending) and "job". Fails only on writer misuse (a bug).
absl::StatusOr<std::string> AnalyzeJson(const job::Result& result,
                                        const SummaryReportOptions& options);

// The figures diff and gate compare, read from `result` through the rows the JSON writer writes
// them from (compare/report_schema.h): equal, member for member, to what the reader reads from
// AnalyzeJson's document, without writing and parsing it. `source` names them in messages;
// `tool_version` is the document's tool.version. An error (a bug) when a figure is outside the
// range the reader accepts or the what-if model is not one a prediction can run on.
absl::StatusOr<compare::RunFigures> AnalyzeFigures(const job::Result& result,
                                                   std::string_view source,
                                                   std::string_view tool_version);

}  // namespace bubblescope
