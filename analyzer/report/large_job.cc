#include "report/large_job.h"

#include <algorithm>

namespace bubblescope {

ReportLayout LayoutOf(const job::Result& result, const SummaryReportOptions& options) {
  const size_t n = result.pipelines.size();
  ReportLayout layout;
  layout.replica_set.assign(n, -1);
  for (size_t s = 0; s < result.replica_sets.size(); ++s) {
    for (int32_t pipeline : result.replica_sets[s].pipelines) {
      if (pipeline >= 0 && static_cast<size_t>(pipeline) < n) {
        layout.replica_set[static_cast<size_t>(pipeline)] = static_cast<int32_t>(s);
      }
    }
  }
  int64_t ranks = 0;
  int64_t ops = 0;  // what the HTML page draws most of: about 0.3 KB each
  for (const job::Pipeline& pipeline : result.pipelines) {
    ranks += static_cast<int64_t>(pipeline.bubble.ranks.size());
    ops += static_cast<int64_t>(pipeline.op_timeline.ops.size());
  }
  layout.large = (options.fold_above_ranks >= 0 && ranks > options.fold_above_ranks) ||
                 (options.fold_above_ops >= 0 && ops > options.fold_above_ops);
  layout.in_full.assign(n, !layout.large);
  layout.text_in_full.assign(n, true);
  if (!layout.large) return layout;
  const auto show = [n](int32_t pipeline, std::vector<bool>& shown) {
    if (pipeline >= 0 && static_cast<size_t>(pipeline) < n) {
      shown[static_cast<size_t>(pipeline)] = true;
    }
  };
  const std::vector<int32_t>& worst_first = result.job.pipelines_by_bubble;
  for (size_t k = 0; k < std::min(kWorstInFull, worst_first.size()); ++k) {
    show(worst_first[k], layout.in_full);
  }
  // The text report has no table to list the others in: a pipeline outside every set, and each
  // set's worst replica, are printed in full.
  for (size_t i = 0; i < n; ++i) layout.text_in_full[i] = layout.replica_set[i] < 0;
  for (const job::ReplicaSet& set : result.replica_sets) {
    show(set.worst_pipeline, layout.text_in_full);
  }
  for (int32_t picked : options.show_pipelines) {
    show(picked, layout.in_full);
    show(picked, layout.text_in_full);
  }
  return layout;
}

}  // namespace bubblescope
