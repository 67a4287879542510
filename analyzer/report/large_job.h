// Which pipelines a report shows in full (docs/html-report.md and docs/analyze.md, "Large
// jobs"). A job whose pipelines hold more than SummaryReportOptions::fold_above_ranks ranks
// (256), or whose timelines more than fold_above_ops ops (20,000, a page of several MB), is
// large: its HTML page shows in full only the
// kWorstInFull pipelines with the largest bubble (job::JobSummary::pipelines_by_bubble) and the
// ones the user picked, every pipeline as a row of the table, and each set of data-parallel
// replicas (job::Result::replica_sets) as one spread; its text report prints each replica set as
// one block followed by its worst replica in full, and in full every pipeline outside the sets
// and the ones the user picked. A smaller job keeps the layout it always had: every pipeline in
// full.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "job/job.h"
#include "report/summary_report.h"

namespace bubblescope {

inline constexpr size_t kWorstInFull = 4;

struct ReportLayout {
  bool large = false;
  // Per pipeline: drawn in full on the HTML page (all of them when not large).
  std::vector<bool> in_full;
  // Per pipeline: printed in full in the text report (all of them when not large).
  std::vector<bool> text_in_full;
  // Per pipeline: the index of its set in job::Result::replica_sets, -1 for none.
  std::vector<int32_t> replica_set;
};

ReportLayout LayoutOf(const job::Result& result, const SummaryReportOptions& options);

}  // namespace bubblescope
