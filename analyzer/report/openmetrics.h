// The metrics file of `bubblescope watch --prometheus FILE` (docs/watch.md, "The metrics file"):
// the newest iteration of each pipeline in the OpenMetrics text format, which Prometheus's own
// text format reads too, so node_exporter's textfile collector (a FILE named *.prom in its
// folder) and any OpenMetrics scraper take the same file. Every metric is a gauge (the figures
// of one iteration, not running totals), a family's samples together under its # HELP, # TYPE
// and # UNIT lines, pipelines and stages in ascending order, and the file ends "# EOF\n".
//
// The file is replaced on every iteration: the caller writes it with WriteOutputFile
// (common/output_file.h), which writes a temporary file beside it and renames it over the old
// one, so a scrape reads the old file or the whole new one.
#pragma once

#include <string>
#include <vector>

#include "watch/iteration_report.h"

namespace bubblescope {

// `latest` holds the newest iteration of each pipeline, in any order; were one pipeline there
// twice, the iteration with the higher step is written (a family may not hold a series twice).
// No sample has a timestamp (the two formats spell them differently and node_exporter refuses
// them): the iteration's analysis time is a gauge of its own.
std::string OpenMetricsText(const std::vector<watch::IterationReport>& latest);

}  // namespace bubblescope
