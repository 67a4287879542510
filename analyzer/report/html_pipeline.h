// One pipeline's part of the HTML report (docs/html-report.md): its headline and causes in
// plain words (the text report's own sentences), the schedule timeline, per-stage bars, the
// latency of each iteration, memory peaks per stage, the link table with slow links marked and
// the what-if chart, inside a <details> element so a job of many pipelines opens folded.
#pragma once

#include <cstddef>
#include <string>

#include "job/job.h"
#include "report_view/report_view.h"

namespace bubblescope::html {

// "p=4 m=8 v=1 1f1b", or "shape unknown".
std::string ShapeText(const job::Pipeline& pipeline);

// `<details id=p{index}>...</details>`, open when `open`; `view` is the pipeline's report view.
std::string PipelineDetails(const job::Pipeline& pipeline, const report_view::PipelineView& view,
                            size_t index, bool open);

}  // namespace bubblescope::html
