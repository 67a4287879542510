// The job driver's stages (job.h), shared by Analyze and by a job analysed part by part
// (job_parts.h), which runs the same stages on each part and the job-wide ones once over the
// parts' results. Only job/ includes this.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "analysis/iterations.h"
#include "bubblescope/trace.h"
#include "index/group_roles.h"
#include "index/rank_index.h"
#include "job/job.h"
#include "job/job_parts.h"
#include "pipeline/issued_items.h"
#include "pipeline/p2p_graph.h"
#include "pipeline/pipeline_op.h"
#include "pipeline/transfer_actions.h"

namespace bubblescope::job {

// Options::progress for one stage of `total` items, told from any thread, one call at a time.
class ProgressTicker {
 public:
  ProgressTicker(const Options& options, std::string_view stage, size_t total);
  // One more item done.
  void Tick();

 private:
  const std::function<void(const Progress&)>* progress_;
  std::string_view stage_;
  size_t total_;
  std::mutex mutex_;
  size_t done_ = 0;
};

// What every pipeline of the job reads, derived once.
struct JobInputs {
  const Trace* trace = nullptr;
  index::TraceIndex index;
  iterations::Steps steps;
  std::vector<pipeline::IssuedTimeline> timelines;                       // per trace rank
  std::vector<std::vector<pipeline::PipelineOp>> annotated;              // per trace rank
  std::vector<std::vector<pipeline::LabelledTransfer>> named_transfers;  // per trace rank
  p2p_graph::Result graph;
};

// Steps 1-4 of the driver over `trace`; with `decided`, the job's decisions instead of the ones
// `trace`'s ranks alone would make.
absl::StatusOr<JobInputs> DeriveInputs(const Trace& trace, const Options& options,
                                       const JobDecisions* decided);

// Each pipeline's transfers, in the graph's order.
std::vector<p2p_matching::Result> MatchTransfers(const JobInputs& inputs, const Options& options);

// What `inputs`' pipelines give the job's clock model (FitJobClocks).
ClockEvidence ClockEvidenceOf(const JobInputs& inputs,
                              const std::vector<p2p_matching::Result>& matchings);

// Step 5: every pipeline of the graph, in its order, on the job's clock model (`clocks`; null:
// fitted from `inputs` alone); the first error in that order.
absl::StatusOr<std::vector<Pipeline>> AnalyzePipelines(
    const JobInputs& inputs, const Options& options,
    const clock_alignment::JobClocks* clocks = nullptr);

// Step 6's part per pipeline, once every pipeline of the job is there: slow links against every
// link of the job, plausibility, link findings, and the root causes.
void FinishPipelines(std::vector<Pipeline>& pipelines, const Options& options);

// What the job summary reads beside the pipelines.
struct SummaryInputs {
  // Every rank of the job; only their headers are read (ids, world sizes, process groups,
  // devices, hosts, processes, profiler steps); their spans come from Result::ranks.
  const Trace* trace = nullptr;
  std::vector<const std::vector<index::GroupRoleInfo>*> roles;  // per trace rank
  std::vector<int32_t> ranks_without_p2p;                       // in trace order
  std::vector<std::string> notes;                               // p2p_graph::Result::notes
};

// The job summary and the replica sets (not the collectives of a job without pipelines).
void SummarizeJob(const SummaryInputs& inputs, Result& result);

}  // namespace bubblescope::job
