// What a digest keeps of a rank (index/digest_reduction.h), interval by interval, on hand-made
// ranks whose every interval's fate follows from the rule.
#include "index/digest_reduction.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "support/timeline_fixtures.h"

namespace bubblescope::index {
namespace {

using testing::Op;
using testing::Stream;
using testing::Thread;

Interval Named(Rank* rank, Interval interval, std::string_view name) {
  interval.name = rank->names.Intern(name);
  return interval;
}

std::vector<std::string> Names(const Rank& rank, const Timeline& timeline) {
  std::vector<std::string> names;
  for (const Interval& interval : timeline.intervals) names.emplace_back(rank.name(interval.name));
  return names;
}

// A GPU rank: a compute kernel launched inside aten ops, a send kernel launched inside
// c10d::send, a synchronize outside any scope and an event record inside the send's scope.
Rank GpuRank() {
  Rank rank;
  rank.rank = 1;
  Rank* r = &rank;
  rank.timelines.push_back(Thread(
      7, {Named(r, Op(testing::kCpu, 0, 100), "aten::linear"),
          Named(r, Op(testing::kCpu, 5, 90), "aten::addmm"),
          Named(r, Op(testing::kRuntime, 10, 20, 11), "cudaLaunchKernel"),
          Named(r, Op(testing::kRuntime, 30, 40, 12), "cudaStreamSynchronize"),
          Named(r, Op(testing::kCpuComm, 200, 300), "c10d::send"),
          Named(r, Op(testing::kRuntime, 210, 215, 13), "cudaEventRecord"),
          Named(r, Op(testing::kRuntime, 220, 230, 14), "cudaLaunchKernel"),
          Named(r, Op(testing::kCpu, 400, 500), "autograd::engine::evaluate_function: MmBackward0"),
          Named(r, Op(testing::kCpu, 410, 420), "aten::mm"),
          Named(r, Op(testing::kRuntime, 600, 610), "cudaGetDevice")}));
  rank.comms.push_back(
      CommInfo{1024, 2, 2, kNoIndex, rank.names.Intern("send"), kNoName, CommKind::kSend});
  Interval send = Named(r, Op(testing::kComm, 240, 900, 14), "ncclDevKernel_SendRecv");
  send.comm = 0;
  rank.timelines.push_back(Stream(3, {Named(r, Op(testing::kCompute, 25, 80, 11), "gemm"), send}));
  rank.annotations.push_back(testing::CpuRange(r, "ProfilerStep#1", 0, 1000));
  return rank;
}

TEST(DigestReductionTest, GpuRankKeepsLaunchesScopesAndBackwardNodes) {
  const Rank rank = GpuRank();
  const Reduction reduction = ReduceForDigest(rank);
  ASSERT_TRUE(reduction.reduced);
  const Rank& kept = reduction.rank;
  // aten::linear stays as the rank's earliest interval (where its clock starts); aten::addmm
  // and aten::mm go; the synchronize (correlation 12, no device op, no scope) goes; the event
  // record inside c10d::send stays (it marks the scope as holding a launch); cudaGetDevice
  // (no correlation) goes.
  EXPECT_EQ(Names(kept, kept.timelines[0]),
            (std::vector<std::string>{"aten::linear", "cudaLaunchKernel", "c10d::send",
                                      "cudaEventRecord", "cudaLaunchKernel",
                                      "autograd::engine::evaluate_function: MmBackward0"}));
  EXPECT_EQ(Names(kept, kept.timelines[1]),
            (std::vector<std::string>{"gemm", "ncclDevKernel_SendRecv"}));
  ASSERT_EQ(kept.comms.size(), 1u);
  EXPECT_EQ(kept.name(kept.comms[0].collective), "send");
  EXPECT_EQ(kept.comm(kept.timelines[1].intervals[1])->peer, 2);
  EXPECT_EQ(kept.annotations.size(), 1u);
  // Names no kept interval refers to are gone; the rest keep their order.
  EXPECT_EQ(kept.names.Find("aten::addmm"), kNoName);
  EXPECT_EQ(kept.names.Find("cudaGetDevice"), kNoName);
  EXPECT_LT(kept.names.Find("aten::linear"), kept.names.Find("cudaLaunchKernel"));
  EXPECT_EQ(kept.rank, 1);
}

// A CPU rank: top-level ops of each thread and every communication op stay, nested compute goes.
TEST(DigestReductionTest, CpuRankKeepsTopLevelAndCommunication) {
  Rank rank;
  Rank* r = &rank;
  rank.timelines.push_back(Thread(1, {Named(r, Op(testing::kCpu, 0, 100), "forward"),
                                      Named(r, Op(testing::kCpu, 10, 50), "aten::linear"),
                                      Named(r, Op(testing::kCpu, 12, 40), "aten::addmm"),
                                      Named(r, Op(testing::kCpuComm, 60, 90), "c10d::send"),
                                      Named(r, Op(testing::kRuntime, 95, 96), "something"),
                                      Named(r, Op(testing::kCpu, 200, 300), "backward"),
                                      Named(r, Op(testing::kCpu, 210, 220), "aten::mul")}));
  const Reduction reduction = ReduceForDigest(rank);
  ASSERT_TRUE(reduction.reduced);
  // aten::linear is a forward operator recompute regions look at; aten::addmm and aten::mul
  // are neither top-level nor looked at; runtime calls mean nothing without a GPU.
  EXPECT_EQ(Names(reduction.rank, reduction.rank.timelines[0]),
            (std::vector<std::string>{"forward", "aten::linear", "c10d::send", "backward"}));
}

// Ops that overlap without nesting could change recompute regions once their neighbours are
// gone: such a thread keeps all its CPU ops.
TEST(DigestReductionTest, OverlappingOpsKeepTheirThreadWhole) {
  Rank rank;
  Rank* r = &rank;
  rank.timelines.push_back(
      Thread(1, {Named(r, Op(testing::kCpu, 0, 10), "top"),
                 Named(r, Op(testing::kCpu, 1, 10), "autograd::engine::evaluate_function: X"),
                 Named(r, Op(testing::kCpu, 5, 15), "aten::view"),
                 Named(r, Op(testing::kCpu, 12, 13), "aten::linear")}));
  rank.timelines.push_back(Stream(3, {Op(testing::kCompute, 0, 1)}));
  const Reduction reduction = ReduceForDigest(rank);
  ASSERT_TRUE(reduction.reduced);
  EXPECT_EQ(reduction.rank.timelines[0].intervals.size(), 4u);
}

TEST(DigestReductionTest, EmptyRankStaysEmpty) {
  const Reduction reduction = ReduceForDigest(Rank{});
  EXPECT_TRUE(reduction.reduced);
  EXPECT_TRUE(reduction.rank.timelines.empty());
  EXPECT_EQ(reduction.rank.names.size(), 1u);
}

}  // namespace
}  // namespace bubblescope::index
