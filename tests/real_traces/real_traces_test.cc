// The real third-party traces in ../shared/traces, read through the same path `analyze` uses.
// Expected figures come from independent_figures.py (exact nanoseconds, Python's own reading of
// the JSON), run once and checked by hand; none were copied from bubblescope's output.
#include <filesystem>
#include <string>
#include <vector>

#include "analysis/rank_summary.h"
#include "gtest/gtest.h"
#include "loader/trace_loader.h"
#include "support/shared_traces.h"

namespace bubblescope {
namespace {

const std::string kShared = std::string(BUBBLESCOPE_SHARED_DIR) + "/traces/";

struct Expected {
  int32_t rank;
  TimeNs span_start, span, compute, comm, memcpy, idle;
  int64_t kernels, comm_ops, memcpy_ops, steps;
};

void ExpectFigures(const rank_summary::RankFigures& got, const Expected& want) {
  SCOPED_TRACE("rank " + std::to_string(want.rank));
  EXPECT_EQ(got.rank, want.rank);
  EXPECT_FALSE(got.cpu_timeline);
  EXPECT_EQ(got.span_start, want.span_start);
  EXPECT_EQ(got.span, want.span);
  EXPECT_EQ(got.compute, want.compute);
  EXPECT_EQ(got.comm, want.comm);
  EXPECT_EQ(got.memcpy, want.memcpy);
  EXPECT_EQ(got.idle, want.idle);
  EXPECT_EQ(got.kernels, want.kernels);
  EXPECT_EQ(got.comm_ops, want.comm_ops);
  EXPECT_EQ(got.memcpys, want.memcpy_ops);
  EXPECT_EQ(got.steps, want.steps);
  EXPECT_EQ(got.peak_allocated_bytes, -1);  // neither trace recorded memory
  EXPECT_EQ(got.peak_reserved_bytes, -1);
  EXPECT_FALSE(got.import_stats.HasAtLeast(Severity::kWarning));
}

rank_summary::Result Summarise(const std::vector<std::string>& paths, int jobs) {
  LoadOptions options;
  options.jobs = jobs;
  absl::StatusOr<Trace> trace = LoadTrace(paths, options);
  EXPECT_TRUE(trace.ok()) << trace.status();
  if (!trace.ok()) return {};
  return rank_summary::Analyze(*trace, index::Build(*trace));
}

TEST(RealTracesTest, HtaTwoRanksSampledFromA128RankJob) {
  const std::string dir = kShared + "hta_trace_filter_2rank";
  BUBBLESCOPE_NEED_SHARED(dir);
  rank_summary::Result result = Summarise({dir}, 2);
  ASSERT_EQ(result.ranks.size(), 2u);
  ExpectFigures(result.ranks[0], {0, 1682725898082228000, 1222847000, 210320000, 396199000, 1325000,
                                  675191000, 1154, 10, 50, 2});
  ExpectFigures(result.ranks[1], {1, 1682725898082381000, 1231186000, 271973000, 379053000,
                                  16504000, 651136000, 1104, 10, 50, 2});
}

TEST(RealTracesTest, ParamDlrmEightRanksFromDistributedInfo) {
  const std::string dir = kShared + "param_dlrm_8rank";
  BUBBLESCOPE_NEED_SHARED(dir);
  const std::vector<Expected> want = {
      {0, 1694128201428006000, 13009000, 1034000, 5798000, 19000, 6419000, 245, 8, 16, 1},
      {1, 1694128201422243000, 18749000, 1246000, 11336000, 19000, 6428000, 310, 8, 16, 1},
      {2, 1694128201429646000, 11350000, 1068000, 3492000, 19000, 7046000, 246, 8, 16, 1},
      {3, 1694128201422243000, 18853000, 1240000, 9774000, 28000, 8145000, 315, 8, 22, 1},
      {4, 1694128201425339000, 16589000, 1126000, 6587000, 26000, 8887000, 251, 8, 22, 1},
      {5, 1694128201425499000, 16392000, 1041000, 6251000, 19000, 9121000, 245, 8, 16, 1},
      {6, 1694128201429650000, 11410000, 1051000, 3558000, 19000, 7051000, 246, 8, 16, 1},
      {7, 1694128201430147000, 10967000, 1059000, 1746000, 20000, 8308000, 246, 8, 16, 1},
  };
  for (int jobs : {1, 2}) {
    SCOPED_TRACE("jobs " + std::to_string(jobs));
    rank_summary::Result result = Summarise({dir}, jobs);
    ASSERT_EQ(result.ranks.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i) ExpectFigures(result.ranks[i], want[i]);
  }
}

TEST(RealTracesTest, CommunicationKernelsCarryTheirKind) {
  const std::string dir = kShared + "param_dlrm_8rank";
  BUBBLESCOPE_NEED_SHARED(dir);
  absl::StatusOr<Trace> trace = LoadTrace({dir}, LoadOptions{});
  ASSERT_TRUE(trace.ok()) << trace.status();
  const Rank& rank = trace->ranks[0];
  EXPECT_EQ(rank.world_size, 8);
  EXPECT_EQ(rank.backend, "nccl");
  EXPECT_EQ(rank.devices.size(), 8u);  // deviceProperties lists the node's eight V100s
  EXPECT_EQ(rank.devices[0].name, "Tesla V100-SXM2-32GB");
  EXPECT_EQ(rank.devices[0].multiprocessors, 80);
  int sendrecv = 0;
  int allreduce = 0;
  for (const Timeline& timeline : rank.timelines) {
    for (const Interval& interval : timeline.intervals) {
      if (interval.kind != IntervalKind::kCommKernel) continue;
      const CommInfo* comm = rank.comm(interval);
      ASSERT_NE(comm, nullptr);
      if (comm->kind == CommKind::kSendRecv) ++sendrecv;
      if (comm->kind == CommKind::kAllReduce) ++allreduce;
    }
  }
  // Rank 0's 8 NCCL kernels, counted by name in Python: 5 ncclKernel_SendRecv_* (the
  // all-to-all) and 3 ncclKernel_AllReduce_*. These old traces carry no NCCL args, so the kind
  // comes from the kernel name.
  EXPECT_EQ(sendrecv, 5);
  EXPECT_EQ(allreduce, 3);
}

}  // namespace
}  // namespace bubblescope
