#include "support/job_helpers.h"

#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace bubblescope::testing {

job::Result AnalyzeJob(const Trace& trace, const job::Options& options) {
  absl::StatusOr<job::Result> result = job::Analyze(trace, options);
  EXPECT_TRUE(result.ok()) << result.status();
  return result.ok() ? *std::move(result) : job::Result{};
}

absl::StatusOr<schedule_inference::Result> ShapeOf(const Trace& trace,
                                                   const iterations::Options& options) {
  absl::StatusOr<job::Result> result = job::Analyze(trace, [&options] {
    job::Options job_options;
    job_options.iterations = options;
    return job_options;
  }());
  if (!result.ok()) return result.status();
  if (result->pipelines.size() != 1) {
    return absl::FailedPreconditionError(
        absl::StrCat("the job has ", result->pipelines.size(), " pipelines"));
  }
  job::Pipeline& pipeline = result->pipelines.front();
  if (!pipeline.shape.has_value()) return absl::FailedPreconditionError(pipeline.shape_problem);
  return *std::move(pipeline.shape);
}

absl::StatusOr<GroupIterations> IterationsOf(const Trace& trace, const iterations::Options& options,
                                             const std::vector<int32_t>& rank_ids) {
  GroupIterations group;
  group.index = index::Build(trace);
  std::vector<size_t> positions;
  for (size_t r = 0; r < trace.ranks.size(); ++r) positions.push_back(r);
  if (!rank_ids.empty()) {
    positions.clear();
    for (int32_t id : rank_ids) {
      const int32_t position = group.index.PositionOf(id);
      EXPECT_GE(position, 0) << "rank " << id << " is not in the trace";
      if (position >= 0) positions.push_back(static_cast<size_t>(position));
    }
  }
  absl::StatusOr<iterations::Steps> steps =
      iterations::FindSteps(trace, group.index, options, positions);
  if (!steps.ok()) return steps.status();
  group.assignment = iterations::Assign(trace, group.index, *steps, positions, ClockOffsets{});
  return group;
}

absl::StatusOr<bubble::Result> BubbleOf(const Trace& trace, const iterations::Options& options,
                                        const std::vector<int32_t>& rank_ids) {
  absl::StatusOr<GroupIterations> group = IterationsOf(trace, options, rank_ids);
  if (!group.ok()) return group.status();
  return bubble::Analyze(trace, group->index, group->assignment, ClockOffsets{});
}

}  // namespace bubblescope::testing
