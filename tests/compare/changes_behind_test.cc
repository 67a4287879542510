// What the gate names under a failed check (compare/changes_behind.h), on a hand-built diff.
#include "compare/changes_behind.h"

#include <vector>

#include "gtest/gtest.h"

namespace bubblescope::compare {
namespace {

Change Times(double a, double b, std::optional<double> spread = std::nullopt) {
  return Change{.a = a, .b = b, .spread = spread};
}

// Three stages; m went from 8 to 4. Stage 2's backward rose 1000 µs and its forward 500 µs,
// stage 0's forward 50 µs but within a 60 µs spread, stage 1's backward fell; link 1->2 rose
// 2349 µs and link 0->1 30 µs.
PipelineDiff Measured() {
  PipelineDiff pipeline;
  pipeline.shape_changes = {{.figure = "m", .a = "8", .b = "4"}};
  for (int32_t s = 0; s < 3; ++s) {
    StageDiff stage;
    stage.stage = s;
    stage.forward_us = Times(1000, 1000);
    stage.backward_us = Times(2000, 2000);
    pipeline.stages.push_back(stage);
  }
  pipeline.stages[0].forward_us = Times(1000, 1050, 60);
  pipeline.stages[1].backward_us = Times(2000, 1800);
  pipeline.stages[2].forward_us = Times(1000, 1500);
  pipeline.stages[2].backward_us = Times(2000, 3000);
  LinkDiff first;
  first.src_stage = 0;
  first.dst_stage = 1;
  first.transfer_us_median = Times(341, 371);
  LinkDiff second;
  second.src_stage = 1;
  second.dst_stage = 2;
  second.transfer_us_median = Times(340, 2689);
  pipeline.links = {first, second};
  return pipeline;
}

TEST(ChangesBehindTest, APipelineCheckNamesTheShapeThenTheLargestRises) {
  const std::vector<ChangeBehind> changes = ChangesBehind(Measured(), false, std::nullopt);
  ASSERT_EQ(changes.size(), 4u);  // the shape change and kChangesBehindShown = 3 rises
  EXPECT_EQ(changes[0].kind, ChangeBehind::Kind::kShape);
  EXPECT_EQ(changes[0].figure, "m");
  EXPECT_EQ(changes[0].a, "8");
  EXPECT_EQ(changes[0].b, "4");
  EXPECT_EQ(changes[1].kind, ChangeBehind::Kind::kLink);
  EXPECT_EQ(changes[1].stage, 1);
  EXPECT_EQ(changes[1].dst_stage, 2);
  EXPECT_DOUBLE_EQ(changes[1].change.Delta(), 2349.0);
  EXPECT_EQ(changes[2].kind, ChangeBehind::Kind::kStageOp);
  EXPECT_EQ(changes[2].figure, "backward");
  EXPECT_EQ(changes[2].stage, 2);
  EXPECT_DOUBLE_EQ(changes[2].change.Delta(), 1000.0);
  EXPECT_EQ(changes[3].figure, "forward");
  EXPECT_EQ(changes[3].stage, 2);
  EXPECT_DOUBLE_EQ(changes[3].change.Delta(), 500.0);
}

// Stage 0's check: its own ops (the 50 µs rise is within the spread, so none) and its link to
// stage 1, which rose 30 µs.
TEST(ChangesBehindTest, AStageCheckNamesThatStageAndItsLinks) {
  const std::vector<ChangeBehind> changes = ChangesBehind(Measured(), false, 0);
  ASSERT_EQ(changes.size(), 2u);
  EXPECT_EQ(changes[1].kind, ChangeBehind::Kind::kLink);
  EXPECT_EQ(changes[1].stage, 0);
  EXPECT_DOUBLE_EQ(changes[1].change.Delta(), 30.0);
}

TEST(ChangesBehindTest, AMemoryCheckNamesTheShapeOnly) {
  const std::vector<ChangeBehind> changes = ChangesBehind(Measured(), true, 2);
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].figure, "m");
}

}  // namespace
}  // namespace bubblescope::compare
