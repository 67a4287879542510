// The HTML reports of `bubblescope analyze --html FILE` (and, smaller, of `whatif --html`)
// (docs/html-report.md): one self-contained page (inline CSS and SVG, one small inline script,
// nothing fetched) that shows the job's bubble as the pipeline literature draws it. The diagnosis
// and a table of every pipeline come first; each pipeline's pictures and tables follow, folded in
// <details> (the worst pipeline open), so a job of 64 pipelines stays readable and quick to open.
#pragma once

#include <string>
#include <vector>

#include "job/job.h"
#include "report/summary_report.h"
#include "report/whatif_model_json.h"
#include "report/whatif_report.h"

namespace bubblescope {

// The whole page. Every user-controlled string (paths, kernel and rank names, messages) is
// escaped.
std::string AnalyzeHtml(const job::Result& result, const SummaryReportOptions& options);

// The page of `bubblescope whatif --html FILE`: per pipeline, the predictions' table and the
// bubble and memory against m chart on its model. `models` parallel to `pipelines`.
std::string WhatIfHtml(const std::vector<PipelineWhatIf>& pipelines,
                       const std::vector<ReportedPipeline>& models,
                       const SummaryReportOptions& options);

}  // namespace bubblescope
