#include "pipeline/stage_stats.h"

#include <algorithm>
#include <functional>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace bubblescope::pipeline {
namespace {

// `values`: the compute of the ops measured alone; `shared`: how many more ran overlapped with
// another op, counted but not timed.
schedule_inference::OpStats Stats(std::vector<TimeNs> values, int64_t shared) {
  schedule_inference::OpStats stats;
  stats.count = static_cast<int64_t>(values.size()) + shared;
  if (values.empty()) return stats;
  std::sort(values.begin(), values.end());
  TimeNs total = 0;
  for (TimeNs value : values) total = SaturatingAdd(total, value);
  stats.mean_ns = static_cast<double>(total) / static_cast<double>(values.size());
  // Nearest rank: the ceil(0.9 n)-th smallest, in integers so p90 of 10 values is the 9th.
  size_t rank = (values.size() * 9 + 9) / 10;
  stats.p90_ns = values[std::max<size_t>(rank, 1) - 1];
  return stats;
}

}  // namespace

std::vector<schedule_inference::StageFigures> StageStats(const std::vector<PipelineOp>& ops,
                                                         const std::vector<int32_t>& stage_order) {
  std::vector<schedule_inference::StageFigures> stages;
  for (size_t position = 0; position < stage_order.size(); ++position) {
    std::vector<TimeNs> by_type[3];
    int64_t shared[3] = {0, 0, 0};
    for (const PipelineOp& op : ops) {
      if (op.rank != stage_order[position]) continue;
      if (op.overlapped) {
        ++shared[static_cast<size_t>(op.type)];
      } else {
        by_type[static_cast<size_t>(op.type)].push_back(op.compute_ns);
      }
    }
    schedule_inference::StageFigures figures;
    figures.stage = static_cast<int32_t>(position);
    figures.rank = stage_order[position];
    for (OpType type : {OpType::kForward, OpType::kBackward, OpType::kWeightGrad}) {
      const size_t t = static_cast<size_t>(type);
      schedule_inference::OpStats stats = Stats(std::move(by_type[t]), shared[t]);
      if (type == OpType::kForward) figures.forward = stats;
      if (type == OpType::kBackward) figures.backward = stats;
      if (type == OpType::kWeightGrad) figures.weight_grad = stats;
    }
    figures.mean_total_ns =
        figures.forward.mean_ns + figures.backward.mean_ns + figures.weight_grad.mean_ns;
    stages.push_back(figures);
  }
  return stages;
}

std::string OpCountMisfit(const std::vector<schedule_inference::StageFigures>& stages) {
  if (stages.empty()) return "";
  std::vector<int64_t> forwards, backwards, weight_grads;
  for (const schedule_inference::StageFigures& stage : stages) {
    forwards.push_back(stage.forward.count);
    backwards.push_back(stage.backward.count);
    weight_grads.push_back(stage.weight_grad.count);
  }
  auto all_equal = [](const std::vector<int64_t>& counts) {
    return std::adjacent_find(counts.begin(), counts.end(), std::not_equal_to<>()) == counts.end();
  };
  const int64_t forward = forwards.front();
  if (!all_equal(forwards)) {
    return absl::StrCat("forward counts ", absl::StrJoin(forwards, "/"), " differ between stages");
  }
  if (!all_equal(backwards) || (backwards.front() != 0 && backwards.front() != forward)) {
    return absl::StrCat("backward counts ", absl::StrJoin(backwards, "/"), " for ", forward,
                        " forwards per stage");
  }
  // A W op follows an input-gradient-only backward; schedules that mix full and split backwards
  // (DualPipeV) run fewer W ops than backwards, and not as many on every stage.
  if (std::any_of(weight_grads.begin(), weight_grads.end(),
                  [&](int64_t count) { return count > backwards.front(); })) {
    return absl::StrCat("weight-gradient counts ", absl::StrJoin(weight_grads, "/"), " for ",
                        backwards.front(), " backwards per stage");
  }
  return "";
}

void FindSlowestStage(schedule_inference::Result* result) {
  if (result->stages.empty()) return;
  double sum = 0.0;
  const schedule_inference::StageFigures* slowest = &result->stages.front();
  for (const schedule_inference::StageFigures& stage : result->stages) {
    sum += stage.mean_total_ns;
    if (stage.mean_total_ns > slowest->mean_total_ns) slowest = &stage;
  }
  const double mean = sum / static_cast<double>(result->stages.size());
  result->slowest_stage = slowest->stage;
  result->slowest_rank = slowest->rank;
  result->slowest_excess_ns = slowest->mean_total_ns - mean;
  result->slowest_excess_percent = mean > 0.0 ? 100.0 * result->slowest_excess_ns / mean : 0.0;
}

}  // namespace bubblescope::pipeline
