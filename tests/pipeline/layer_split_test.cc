// Re-splitting stage figures over a new contiguous layer split, against sums worked by hand.
#include "pipeline/layer_split.h"

#include <vector>

#include "gtest/gtest.h"

namespace bubblescope::pipeline {
namespace {

TEST(LayerSplitTest, NeighbourMoveCarriesTheGiversShare) {
  // Values 4, 8, 12 over 4 layers each: 1, 2 and 3 per layer. Stage 0's last layer moves on.
  EXPECT_EQ(Resplit({4, 8, 12}, {4, 4, 4}, {3, 5, 4}), (std::vector<double>{3, 9, 12}));
  EXPECT_EQ(Resplit({10, 20}, {2, 2}, {1, 3}), (std::vector<double>{5, 25}));
}

TEST(LayerSplitTest, MoveAcrossAStageShiftsTheOneBetween) {
  // Stage 2 gives one layer to stage 0: stage 0 takes stage 1's first layer (2), stage 1 takes
  // stage 2's first layer (3) and keeps three of its own (6).
  EXPECT_EQ(Resplit({4, 8, 12}, {4, 4, 4}, {5, 4, 3}), (std::vector<double>{6, 9, 9}));
  EXPECT_EQ(AfterMove({4, 4, 4}, 2, 0, 1), (std::vector<int32_t>{5, 4, 3}));
}

TEST(LayerSplitTest, UnchangedSplitKeepsEveryValue) {
  EXPECT_EQ(Resplit({1.5, 2.5, 7}, {3, 1, 2}, {3, 1, 2}), (std::vector<double>{1.5, 2.5, 7}));
}

TEST(LayerSplitTest, RejectsSplitsThatDoNotFit) {
  EXPECT_TRUE(CheckResplit({4, 4}, {3, 5}).ok());
  EXPECT_FALSE(CheckResplit({4, 4}, {4, 5}).ok());     // 9 layers, not 8
  EXPECT_FALSE(CheckResplit({4, 4}, {8, 0}).ok());     // an empty stage
  EXPECT_FALSE(CheckResplit({4, 4}, {2, 3, 3}).ok());  // another stage count
}

}  // namespace
}  // namespace bubblescope::pipeline
