// The HTML report of `bubblescope analyze --html FILE` (docs/html-report.md): one
// self-contained page (inline CSS and SVG, one small inline script, nothing fetched) that shows
// the job's bubble as the pipeline literature draws it. The diagnosis and a table of every
// pipeline come first; each pipeline's pictures and tables follow, folded in <details> (the
// worst pipeline open), so a job of 64 pipelines stays readable and quick to open.
#pragma once

#include <string>

#include "job/job.h"
#include "report/summary_report.h"

namespace bubblescope {

// The whole page. Every user-controlled string (paths, kernel and rank names, messages) is
// escaped.
std::string AnalyzeHtml(const job::Result& result, const SummaryReportOptions& options);

}  // namespace bubblescope
