// The first pipeline of one bundled real torch CPU run (sample_traces/torch_cpu/RUN) as the job
// driver analyses it, for the findings tests that read real runs.
#pragma once

#include <string>

#include "gtest/gtest.h"
#include "job/job.h"
#include "loader/trace_loader.h"

namespace bubblescope::testing {

inline job::Pipeline TorchCpuRunPipeline(const std::string& run) {
  LoadOptions load;
  load.jobs = 2;
  absl::StatusOr<Trace> trace =
      LoadTrace({std::string(BUBBLESCOPE_SOURCE_DIR) + "/sample_traces/torch_cpu/" + run}, load);
  EXPECT_TRUE(trace.ok()) << trace.status();
  if (!trace.ok()) return {};
  absl::StatusOr<job::Result> result = job::Analyze(*trace, job::Options{});
  EXPECT_TRUE(result.ok()) << result.status();
  if (!result.ok() || result->pipelines.empty()) {
    ADD_FAILURE() << run << ": no pipeline";
    return {};
  }
  return result->pipelines.front();
}

}  // namespace bubblescope::testing
