// Recomputation ranges on hand-made threads, in the two forms activation checkpointing takes
// (index/recompute_regions.h), and the rank index's recompute time from them.
#include "index/recompute_regions.h"

#include <string_view>
#include <vector>

#include "gtest/gtest.h"
#include "index/rank_index.h"
#include "support/timeline_fixtures.h"

namespace bubblescope::index {
namespace {

using namespace bubblescope::testing;  // NOLINT(build/namespaces): test builders only

Interval Named(Rank& rank, std::string_view name, TimeNs start, TimeNs end,
               IntervalKind kind = IntervalKind::kCpuOp, int64_t correlation = 0) {
  Interval interval = Op(kind, start, end, correlation);
  if (kind == IntervalKind::kCpuOp) interval.name = rank.names.Intern(name);
  return interval;
}

bool Same(const std::vector<TimeRange>& got, const std::vector<TimeRange>& expected) {
  if (got.size() != expected.size()) return false;
  for (size_t i = 0; i < got.size(); ++i) {
    if (got[i].start != expected[i].start || got[i].end != expected[i].end) return false;
  }
  return true;
}

TEST(RecomputeRegionsTest, ReentrantCheckpointRecomputesUntilItsInnerBackward) {
  // Megatron-LM / DeepSpeed form: the checkpoint node [100, 400) reruns the forward (aten::linear
  // [110, 180)), then its inner backward starts at 200: recomputation is [100, 200). A second
  // node [500, 600) with no inner backward recorded is recomputation throughout.
  Rank rank;
  rank.timelines.push_back(Thread(
      1, {Named(rank, "autograd::engine::evaluate_function: CheckpointFunctionBackward", 90, 410),
          Named(rank, "CheckpointFunctionBackward", 100, 400),
          Named(rank, "aten::linear", 110, 180), Named(rank, "aten::addmm", 120, 170),
          Named(rank, "autograd::engine::evaluate_function: AddmmBackward0", 200, 300),
          Named(rank, "AddmmBackward0", 205, 295), Named(rank, "aten::mm", 210, 250),
          Named(rank, "CheckpointFunctionBackward", 500, 600),
          Named(rank, "aten::linear", 510, 590)}));
  EXPECT_TRUE(Same(RecomputeRegions(rank, rank.timelines[0]), {{100, 200}, {500, 600}}));
}

TEST(RecomputeRegionsTest, NonReentrantForwardOpsInsideABackwardNode) {
  // torch's non-reentrant form: the forward's aten::linear and aten::relu run inside the first
  // backward node that unpacks a saved tensor; the addmm inside the linear is not counted twice,
  // and the node's own aten::mm is backward work.
  Rank rank;
  rank.timelines.push_back(
      Thread(1, {Named(rank, "aten::linear", 10, 50),  // the forward itself, outside any backward
                 Named(rank, "autograd::engine::evaluate_function: AddmmBackward0", 100, 400),
                 Named(rank, "AddmmBackward0", 101, 399), Named(rank, "aten::linear", 110, 150),
                 Named(rank, "aten::addmm", 112, 148), Named(rank, "aten::relu", 160, 170),
                 Named(rank, "aten::mm", 300, 350)}));
  EXPECT_TRUE(Same(RecomputeRegions(rank, rank.timelines[0]), {{110, 150}, {160, 170}}));
}

TEST(RecomputeRegionsTest, PlainTrainingHasNone) {
  Rank rank;
  rank.timelines.push_back(
      Thread(1, {Named(rank, "aten::linear", 10, 50),
                 Named(rank, "autograd::engine::evaluate_function: AddmmBackward0", 100, 200),
                 Named(rank, "AddmmBackward0", 101, 199), Named(rank, "aten::mm", 110, 150),
                 Named(rank, "autograd::engine::evaluate_function: ReluBackward0", 200, 250),
                 Named(rank, "aten::threshold_backward", 205, 245)}));
  EXPECT_TRUE(RecomputeRegions(rank, rank.timelines[0]).empty());
}

TEST(RecomputeRegionsTest, GpuKernelsLaunchedWhileRecomputingAreFlaggedAndTimed) {
  // Kernel 1 (launched at 20, forward), kernel 2 (launched at 120, inside the recomputation)
  // and kernel 3 (launched at 250, the inner backward): only kernel 2's 40 ns are recompute.
  Rank rank;
  rank.timelines.push_back(Thread(
      1, {Named(rank, "", 20, 22, IntervalKind::kRuntime, 1),
          Named(rank, "autograd::engine::evaluate_function: CheckpointFunctionBackward", 100, 300),
          Named(rank, "CheckpointFunctionBackward", 101, 299),
          Named(rank, "", 120, 122, IntervalKind::kRuntime, 2),
          Named(rank, "autograd::engine::evaluate_function: AddmmBackward0", 200, 290),
          Named(rank, "", 250, 252, IntervalKind::kRuntime, 3)}));
  rank.timelines.push_back(Stream(
      7, {Op(kCompute, 1000, 1030, 1), Op(kCompute, 1100, 1140, 2), Op(kCompute, 1200, 1260, 3)}));
  const RankIndex index = BuildRank(rank);
  ASSERT_EQ(index.ops.size(), 3u);
  EXPECT_FALSE(index.ops[0].recompute);
  EXPECT_TRUE(index.ops[1].recompute);
  EXPECT_EQ(index.ops[1].hint, PhaseHint::kBackward);  // recomputation is backward time
  EXPECT_FALSE(index.ops[2].recompute);
  EXPECT_EQ(index.recompute_ns, 40);
}

TEST(RecomputeRegionsTest, CpuRankCountsTheRangesOnItsModelThread) {
  Rank rank;
  rank.timelines.push_back(Thread(
      1,
      {Named(rank, "autograd::engine::evaluate_function: CheckpointFunctionBackward", 100, 400),
       Named(rank, "CheckpointFunctionBackward", 101, 399), Named(rank, "aten::linear", 110, 180),
       Named(rank, "autograd::engine::evaluate_function: AddmmBackward0", 230, 390)}));
  EXPECT_EQ(BuildRank(rank).recompute_ns, 230 - 101);
}

}  // namespace
}  // namespace bubblescope::index
