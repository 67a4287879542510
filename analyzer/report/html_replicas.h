// A large job's data-parallel replica sets on the HTML page (docs/html-report.md, "Large
// jobs"): per set its headline (which pipelines, what joins them, the spread of their bubble,
// excess and median iteration), the worst replica, and one row per stage with each figure's
// min / median / max over the replicas and the pipeline holding the max where they differ.
#pragma once

#include <string>

#include "job/job.h"
#include "report/large_job.h"

namespace bubblescope::html {

// `<h2>Data-parallel replicas</h2>` and one `<h3 id=r{N}>` part per set; empty without sets.
std::string ReplicaSetsSection(const job::Result& result, const ReportLayout& layout);

}  // namespace bubblescope::html
