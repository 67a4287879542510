// SegmentOps on hand-built issued timelines: which compute runs become ops, and how back-to-back
// weight-gradient runs are cut apart again.
#include "pipeline/segment_ops.h"

#include <cstdint>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace bubblescope::pipeline {
namespace {

using ::testing::ElementsAre;

// Builds a timeline item by item: compute items with a phase hint and a name id, sends and
// receives. Items are 10 ns long, issued and run back to back.
class TimelineBuilder {
 public:
  TimelineBuilder() { timeline_.rank = 3; }
  TimelineBuilder& Compute(PhaseHint hint, NameId name, int32_t step = 0) {
    Add(ItemKind::kCompute, hint, name, step);
    return *this;
  }
  TimelineBuilder& Send(int32_t step = 0) {
    Add(ItemKind::kSend, PhaseHint::kNone, kNoName, step);
    return *this;
  }
  TimelineBuilder& Recv(int32_t step = 0) {
    Add(ItemKind::kRecv, PhaseHint::kNone, kNoName, step);
    return *this;
  }
  IssuedTimeline Build() const { return timeline_; }

 private:
  void Add(ItemKind kind, PhaseHint hint, NameId name, int32_t step) {
    IssuedItem item;
    item.kind = kind;
    item.hint = hint;
    item.name = name;
    item.step = step;
    item.issue = next_;
    item.start = next_;
    item.end = next_ + 10;
    next_ += 10;
    timeline_.items.push_back(item);
  }
  IssuedTimeline timeline_;
  TimeNs next_ = 0;
};

constexpr PhaseHint kF = PhaseHint::kNone;
constexpr PhaseHint kB = PhaseHint::kBackward;
constexpr PhaseHint kW = PhaseHint::kWeightGrad;

std::string Shape(const std::vector<PipelineOp>& ops) {
  std::string shape;
  for (const PipelineOp& op : ops) {
    shape += op.type == OpType::kForward ? 'F' : op.type == OpType::kBackward ? 'B' : 'W';
    shape += std::to_string(op.compute_ns / 10);
  }
  return shape;
}

// A last stage in zb-h1 style with two kernels per op: three microbatches' F and B, then all
// three W's held back to the end, back to back.
TEST(SegmentOpsTest, BackToBackWeightGradsAreCutByTheBackwardCount) {
  TimelineBuilder b;
  b.Recv().Compute(kF, 1).Compute(kF, 1).Compute(kB, 2).Compute(kB, 2).Send();
  b.Recv().Compute(kF, 1).Compute(kF, 1).Compute(kB, 2).Compute(kB, 2).Send();
  b.Recv().Compute(kF, 1).Compute(kF, 1).Compute(kB, 2).Compute(kB, 2).Send();
  b.Compute(kW, 5).Compute(kW, 6).Compute(kW, 5).Compute(kW, 6).Compute(kW, 5).Compute(kW, 6);
  const std::vector<PipelineOp> ops = SegmentOps(b.Build(), /*first_stage=*/false);
  // 3 backwards, 6 W items in one run: three W ops of 2 items (20 ns) each.
  EXPECT_EQ(Shape(ops), "F2B2F2B2F2B2W2W2W2");
  for (const PipelineOp& op : ops) EXPECT_EQ(op.rank, 3);
  EXPECT_EQ(ops[7].start, ops[6].start + 20);
}

TEST(SegmentOpsTest, WeightGradRunsAreLeftWhenTheNamesDoNotRepeat) {
  TimelineBuilder b;
  b.Recv().Compute(kF, 1).Compute(kB, 2).Send();
  b.Recv().Compute(kF, 1).Compute(kB, 2).Send();
  // Two backwards and two W items, but the names say it is one op of two different kernels.
  b.Compute(kW, 5).Compute(kW, 6);
  EXPECT_EQ(Shape(SegmentOps(b.Build(), false)), "F1B1F1B1W2");
}

TEST(SegmentOpsTest, WeightGradRunsAreLeftWhenTheItemsDoNotDivide) {
  TimelineBuilder b;
  b.Recv().Compute(kF, 1).Compute(kB, 2).Send();
  b.Recv().Compute(kF, 1).Compute(kB, 2).Send();
  b.Compute(kW, 5).Compute(kW, 5).Compute(kW, 5);
  EXPECT_EQ(Shape(SegmentOps(b.Build(), false)), "F1B1F1B1W3");
}

TEST(SegmentOpsTest, SeparateWeightGradsAreNotTouched) {
  TimelineBuilder b;
  b.Recv().Compute(kF, 1).Compute(kB, 2).Send().Compute(kW, 5).Compute(kW, 5);
  b.Recv().Compute(kF, 1).Compute(kB, 2).Send().Compute(kW, 5);
  // As many W runs as backwards: the first W op simply has two kernels.
  EXPECT_EQ(Shape(SegmentOps(b.Build(), false)), "F1B1W2F1B1W1");
}

TEST(SegmentOpsTest, EachProfilerStepIsCutOnItsOwn) {
  TimelineBuilder b;
  b.Recv(0).Compute(kF, 1, 0).Compute(kB, 2, 0).Send(0);
  b.Recv(0).Compute(kF, 1, 0).Compute(kB, 2, 0).Send(0);
  b.Compute(kW, 5, 0).Compute(kW, 5, 0);
  // Step 1 has one backward and the same two W items: there they are one op.
  b.Recv(1).Compute(kF, 1, 1).Compute(kB, 2, 1).Send(1);
  b.Compute(kW, 5, 1).Compute(kW, 5, 1);
  const std::vector<PipelineOp> ops = SegmentOps(b.Build(), false);
  EXPECT_EQ(Shape(ops), "F1B1F1B1W1W1F1B1W2");
  std::vector<int32_t> steps;
  for (const PipelineOp& op : ops) steps.push_back(op.step);
  EXPECT_THAT(steps, ElementsAre(0, 0, 0, 0, 0, 0, 1, 1, 1));
}

TEST(SegmentOpsTest, UnhintedRunsBecomeForwardsOnlyAtTransfers) {
  TimelineBuilder b;
  // First stage: bookkeeping, a forward feeding a send, a backward consuming a recv, then an
  // unhinted optimizer-like run with no transfer after it.
  b.Compute(kF, 1).Send().Recv().Compute(kB, 2).Compute(kF, 7);
  EXPECT_EQ(Shape(SegmentOps(b.Build(), /*first_stage=*/true)), "F1B1");
  // The same items on a later stage: the forward feeds a send but consumes no recv.
  EXPECT_EQ(Shape(SegmentOps(b.Build(), /*first_stage=*/false)), "B1");
}

}  // namespace
}  // namespace bubblescope::pipeline
