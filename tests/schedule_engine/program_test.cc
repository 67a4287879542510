// Schedule orders worked out by hand from the definitions in engine.h.
#include "schedule_engine/program.h"

#include <optional>
#include <string>

#include "gtest/gtest.h"
#include "schedule_engine/sim_test_util.h"

namespace bubblescope::sim {
namespace {

using testing::IdealConfig;
using testing::ProgramText;

TEST(ProgramTest, GpipeRunsAllForwardsThenBackwardsInForwardOrder) {
  Config config = IdealConfig(Schedule::kGpipe, 2, 3, 10, 20);
  EXPECT_EQ(ProgramText(StageProgram(config, 0), false), "F0 F1 F2 B0 B1 B2");
  EXPECT_EQ(ProgramText(StageProgram(config, 1), false), "F0 F1 F2 B0 B1 B2");
}

TEST(ProgramTest, LoopedGpipeRunsChunksBreadthFirstAndBackwardsInReverse) {
  // torch's ScheduleLoopedBFS (as its loopedbfs_p4_v2_m4 trace shows): every forward of chunk 0,
  // then of chunk 1; then the backwards from the last chunk, each from the last microbatch.
  Config config = IdealConfig(Schedule::kGpipe, 2, 3, 20, 40, 2);
  ASSERT_TRUE(ValidateConfig(config).ok());
  const std::string order = "F0:0 F0:1 F0:2 F1:0 F1:1 F1:2 B1:2 B1:1 B1:0 B0:2 B0:1 B0:0";
  EXPECT_EQ(ProgramText(StageProgram(config, 0), true), order);
  EXPECT_EQ(ProgramText(StageProgram(config, 1), true), order);
  config.virtual_stages = 3;
  config.microbatches = 2;
  EXPECT_EQ(ProgramText(StageProgram(config, 1), true),
            "F0:0 F0:1 F1:0 F1:1 F2:0 F2:1 B2:1 B2:0 B1:1 B1:0 B0:1 B0:0");
}

TEST(ProgramTest, SeveralChunksNeedInterleavedOrGpipe) {
  for (Schedule schedule : {Schedule::k1F1B, Schedule::kZeroBubbleH1, Schedule::kForwardOnly}) {
    Config config = IdealConfig(schedule, 2, 4, 20, 40, 2);
    config.costs.assign(2, StageCost{20, 40, 20});
    EXPECT_FALSE(ValidateConfig(config).ok()) << ScheduleName(schedule);
  }
  // Looped GPipe, unlike Megatron's interleaving, takes any m.
  EXPECT_TRUE(ValidateConfig(IdealConfig(Schedule::kGpipe, 4, 3, 20, 40, 2)).ok());
  EXPECT_FALSE(ValidateConfig(IdealConfig(Schedule::kInterleaved1F1B, 4, 3, 20, 40, 2)).ok());
}

TEST(ProgramTest, OneForwardOneBackwardThreeStagesFourMicrobatches) {
  Config config = IdealConfig(Schedule::k1F1B, 3, 4, 10, 20);
  // Warm-up min(m, p-1-s) = 2, 1, 0 forwards.
  EXPECT_EQ(ProgramText(StageProgram(config, 0), false), "F0 F1 F2 B0 F3 B1 B2 B3");
  EXPECT_EQ(ProgramText(StageProgram(config, 1), false), "F0 F1 B0 F2 B1 F3 B2 B3");
  EXPECT_EQ(ProgramText(StageProgram(config, 2), false), "F0 B0 F1 B1 F2 B2 F3 B3");
}

TEST(ProgramTest, OneForwardOneBackwardWarmupCappedByMicrobatches) {
  Config config = IdealConfig(Schedule::k1F1B, 4, 2, 10, 20);
  EXPECT_EQ(ProgramText(StageProgram(config, 0), false), "F0 F1 B0 B1");  // warm-up min(2, 3)
  EXPECT_EQ(ProgramText(StageProgram(config, 2), false), "F0 F1 B0 B1");  // warm-up 1
  EXPECT_EQ(ProgramText(StageProgram(config, 3), false), "F0 B0 F1 B1");
}

TEST(ProgramTest, InterleavedTwoStagesTwoChunksFourMicrobatches) {
  Config config = IdealConfig(Schedule::kInterleaved1F1B, 2, 4, 10, 20, 2);
  // Forward sequence (chunk:mb): 0:0 0:1 1:0 1:1 0:2 0:3 1:2 1:3; backward: 1:0 1:1 0:0 0:1
  // 1:2 1:3 0:2 0:3. Warm-up: stage 0 min(8, 2*1 + 1*2) = 4, stage 1 min(8, 0 + 2) = 2.
  EXPECT_EQ(ProgramText(StageProgram(config, 0), true),
            "F0:0 F0:1 F1:0 F1:1 F0:2 B1:0 F0:3 B1:1 F1:2 B0:0 F1:3 B0:1 B1:2 B1:3 B0:2 B0:3");
  EXPECT_EQ(ProgramText(StageProgram(config, 1), true),
            "F0:0 F0:1 F1:0 B1:0 F1:1 B1:1 F0:2 B0:0 F0:3 B0:1 F1:2 B1:2 F1:3 B1:3 B0:2 B0:3");
}

TEST(ProgramTest, ZeroBubbleH1ThreeStagesFourMicrobatches) {
  Config config = IdealConfig(Schedule::kZeroBubbleH1, 3, 4, 10, 20);
  // W(j) right after B(j + s); the rest at the end.
  EXPECT_EQ(ProgramText(StageProgram(config, 0), false), "F0 F1 F2 B0 W0 F3 B1 W1 B2 W2 B3 W3");
  EXPECT_EQ(ProgramText(StageProgram(config, 1), false), "F0 F1 B0 F2 B1 W0 F3 B2 W1 B3 W2 W3");
  EXPECT_EQ(ProgramText(StageProgram(config, 2), false), "F0 B0 F1 B1 F2 B2 W0 F3 B3 W1 W2 W3");
}

TEST(ProgramTest, ForwardOnlyRunsForwards) {
  Config config = IdealConfig(Schedule::kForwardOnly, 3, 3, 10, 20);
  EXPECT_EQ(ProgramText(StageProgram(config, 1), false), "F0 F1 F2");
}

TEST(ProgramTest, InputsFollowTheChunkChain) {
  Config config = IdealConfig(Schedule::kInterleaved1F1B, 2, 4, 10, 20, 2);
  const Op f1_3{OpType::kForward, 1, 3};
  // Stage 0 chunk 1 gets its input from the last stage's chunk 0.
  EXPECT_EQ(InputOf(config, {0, f1_3}), (StageOp{1, Op{OpType::kForward, 0, 3}}));
  EXPECT_EQ(InputOf(config, {1, f1_3}), (StageOp{0, f1_3}));
  EXPECT_EQ(InputOf(config, {0, Op{OpType::kForward, 0, 2}}), std::nullopt);
  // The very last virtual stage's backward needs its own forward (the loss).
  EXPECT_EQ(InputOf(config, {1, Op{OpType::kBackward, 1, 2}}),
            (StageOp{1, Op{OpType::kForward, 1, 2}}));
  // Last stage chunk 0 backward comes from stage 0 chunk 1.
  EXPECT_EQ(InputOf(config, {1, Op{OpType::kBackward, 0, 2}}),
            (StageOp{0, Op{OpType::kBackward, 1, 2}}));
  EXPECT_EQ(RemoteConsumerOf(config, {1, Op{OpType::kForward, 0, 1}}),
            (StageOp{0, Op{OpType::kForward, 1, 1}}));
  EXPECT_EQ(RemoteConsumerOf(config, {1, Op{OpType::kForward, 1, 1}}), std::nullopt);
  EXPECT_EQ(RemoteConsumerOf(config, {0, Op{OpType::kBackward, 1, 1}}),
            (StageOp{1, Op{OpType::kBackward, 0, 1}}));
  EXPECT_EQ(RemoteConsumerOf(config, {0, Op{OpType::kBackward, 0, 1}}), std::nullopt);
}

TEST(ProgramTest, ZeroBubbleWeightGradNeedsItsOwnBackward) {
  Config config = IdealConfig(Schedule::kZeroBubbleH1, 3, 4, 10, 20);
  EXPECT_EQ(InputOf(config, {1, Op{OpType::kWeightGrad, 0, 2}}),
            (StageOp{1, Op{OpType::kBackward, 0, 2}}));
  EXPECT_EQ(RemoteConsumerOf(config, {1, Op{OpType::kWeightGrad, 0, 2}}), std::nullopt);
}

TEST(ProgramTest, SingleStageInterleavedHasNoRemoteTraffic) {
  Config config = IdealConfig(Schedule::kInterleaved1F1B, 1, 2, 10, 20, 2);
  EXPECT_EQ(RemoteConsumerOf(config, {0, Op{OpType::kForward, 0, 0}}), std::nullopt);
  EXPECT_EQ(InputOf(config, {0, Op{OpType::kForward, 1, 0}}),
            (StageOp{0, Op{OpType::kForward, 0, 0}}));
}

}  // namespace
}  // namespace bubblescope::sim
