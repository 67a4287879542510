// The traces the collector recorded on an H100 (sample_traces/gpu_h100_collector, provenance in
// its README): each set read and summarised as recorded. The expected counts were taken from
// the JSON files themselves with a script independent of bubblescope (events by category, the
// ProfilerStep#N ranges), not from bubblescope's output.
#include <string>

#include "absl/status/statusor.h"
#include "gtest/gtest.h"
#include "loader/trace_loader.h"
#include "support/job_helpers.h"

namespace bubblescope {
namespace {

struct Expected {
  const char* set;
  int64_t kernels;
  int64_t memcpys;  // memcpy + memset
  int64_t steps;
  int64_t comm_ops;
};

class CollectorGpuSamplesTest : public ::testing::TestWithParam<Expected> {};

TEST_P(CollectorGpuSamplesTest, EachSetReadsAsRecorded) {
  const Expected& expected = GetParam();
  const std::string folder =
      std::string(BUBBLESCOPE_SOURCE_DIR) + "/sample_traces/gpu_h100_collector/" + expected.set;
  absl::StatusOr<Trace> trace = LoadTrace({folder}, LoadOptions());
  ASSERT_TRUE(trace.ok()) << trace.status();
  const job::Result job = testing::AnalyzeJob(*trace);
  ASSERT_EQ(job.ranks.ranks.size(), 1u);
  const rank_summary::RankFigures& rank = job.ranks.ranks[0];
  EXPECT_FALSE(rank.cpu_timeline);
  EXPECT_EQ(rank.kernels, expected.kernels);
  EXPECT_EQ(rank.memcpys, expected.memcpys);
  EXPECT_EQ(rank.steps, expected.steps);
  EXPECT_EQ(rank.comm_ops, expected.comm_ops);
  EXPECT_FALSE(rank.import_stats.HasAtLeast(Severity::kWarning));
}

INSTANTIATE_TEST_SUITE_P(
    H100, CollectorGpuSamplesTest,
    ::testing::Values(
        // 5 warm-up and 40 marked steps of a 4-layer transformer; 242 kernels per step.
        Expected{"training_loop", 10999, 1355, 40, 0},
        // torch.profiler took CUPTI over at its start: only the warm-up's kernels are here.
        Expected{"profiler_inside", 1319, 195, 0, 0},
        // A one-rank communicator's 3 grouped self send/recv: 3 SendRecv kernels.
        Expected{"nccl_self", 24, 339, 3, 3},
        // The demo job's one stage, 3 iterations.
        Expected{"demo_one_stage", 72, 333, 3, 0}),
    [](const ::testing::TestParamInfo<Expected>& param) { return std::string(param.param.set); });

}  // namespace
}  // namespace bubblescope
