// Process-group roles: the names Megatron-Core, torch's DeviceMesh and torch's default group give
// their groups, and the layout guess for groups without a description, each checked against the
// role the creating code gives that group.
#include "index/group_roles.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "index/rank_index.h"

namespace bubblescope::index {
namespace {

using ::testing::ElementsAre;

ProcessGroup Group(std::string description, std::vector<int32_t> ranks) {
  return ProcessGroup{"7", std::move(ranks), std::move(description)};
}

TEST(GroupRolesTest, MegatronCoreGroupDescriptions) {
  // megatron/core/parallel_state.py passes these as group_desc (the _GLOO twins beside them).
  EXPECT_EQ(RoleFromDescription("TENSOR_MODEL_PARALLEL_GROUP"), GroupRole::kTensor);
  EXPECT_EQ(RoleFromDescription("PIPELINE_MODEL_PARALLEL_GROUP"), GroupRole::kPipeline);
  EXPECT_EQ(RoleFromDescription("DATA_PARALLEL_GROUP"), GroupRole::kData);
  EXPECT_EQ(RoleFromDescription("DATA_PARALLEL_GROUP_GLOO"), GroupRole::kData);
  EXPECT_EQ(RoleFromDescription("DATA_PARALLEL_GROUP_WITH_CP"), GroupRole::kData);
  EXPECT_EQ(RoleFromDescription("INTRA_PARTIAL_DATA_PARALLEL_GROUP_WITH_CP"), GroupRole::kData);
  EXPECT_EQ(RoleFromDescription("EXPERT_DATA_PARALLEL_GROUP"), GroupRole::kData);
  EXPECT_EQ(RoleFromDescription("CONTEXT_PARALLEL_GROUP"), GroupRole::kContext);
  EXPECT_EQ(RoleFromDescription("TENSOR_AND_CONTEXT_PARALLEL_GROUP"), GroupRole::kContext);
  EXPECT_EQ(RoleFromDescription("EXPERT_MODEL_PARALLEL_GROUP"), GroupRole::kExpert);
  EXPECT_EQ(RoleFromDescription("EXPERT_TENSOR_PARALLEL_GROUP"), GroupRole::kTensor);
  EXPECT_EQ(RoleFromDescription("EMBEDDING_GROUP"), GroupRole::kEmbedding);
  EXPECT_EQ(RoleFromDescription("POSITION_EMBEDDING_GROUP"), GroupRole::kEmbedding);
  EXPECT_EQ(RoleFromDescription("MODEL_PARALLEL_GROUP"), GroupRole::kModel);
}

TEST(GroupRolesTest, DeviceMeshAndTorchDescriptions) {
  // torch's DeviceMesh describes each dimension's group as "mesh_<dim name>" (torchtitan's
  // names), or "mesh_dim_<i>" for an unnamed dimension.
  EXPECT_EQ(RoleFromDescription("mesh_tp"), GroupRole::kTensor);
  EXPECT_EQ(RoleFromDescription("mesh_pp"), GroupRole::kPipeline);
  EXPECT_EQ(RoleFromDescription("mesh_cp"), GroupRole::kContext);
  EXPECT_EQ(RoleFromDescription("mesh_ep"), GroupRole::kExpert);
  EXPECT_EQ(RoleFromDescription("mesh_dp_shard"), GroupRole::kData);
  EXPECT_EQ(RoleFromDescription("mesh_dp_replicate"), GroupRole::kData);
  EXPECT_EQ(RoleFromDescription("mesh_dp_shard_cp"), GroupRole::kData);
  EXPECT_EQ(RoleFromDescription("mesh_dim_0"), GroupRole::kUnknown);
  EXPECT_EQ(RoleFromDescription("default_pg"), GroupRole::kWorld);
  // torch writes "undefined" for a group created without a description.
  EXPECT_EQ(RoleFromDescription("undefined"), GroupRole::kUnknown);
  EXPECT_EQ(RoleFromDescription(""), GroupRole::kUnknown);
}

TEST(GroupRolesTest, ADescriptionIsAFact) {
  const GroupRoleInfo info = ClassifyGroup(Group("TENSOR_MODEL_PARALLEL_GROUP", {4, 5}), 16);
  EXPECT_EQ(info.role, GroupRole::kTensor);
  EXPECT_EQ(info.source, RoleSource::kDescription);
  EXPECT_EQ(AppliedRole(info), GroupRole::kTensor);
}

// Megatron's default order tp-cp-ep-dp-pp with tp = 2, dp = 2, pp = 4 (16 ranks): rank
// = tp_rank + 2 * dp_rank + 4 * pp_rank, so rank 5's tensor group is {4, 5}, its data group
// {5, 7} and its pipeline group {1, 5, 9, 13}.
TEST(GroupRolesTest, WithoutADescriptionTheLayoutIsOnlyAGuess) {
  const GroupRoleInfo tensor = ClassifyGroup(Group("undefined", {4, 5}), 16);
  EXPECT_EQ(tensor.role, GroupRole::kTensor);
  EXPECT_EQ(tensor.source, RoleSource::kLayout);
  EXPECT_EQ(AppliedRole(tensor), GroupRole::kUnknown);  // never applied to a figure
  EXPECT_EQ(ClassifyGroup(Group("undefined", {5, 7}), 16).role, GroupRole::kData);
  EXPECT_EQ(ClassifyGroup(Group("", {13, 1, 9, 5}), 16).role, GroupRole::kPipeline);
  EXPECT_EQ(ClassifyGroup(Group("", {0, 1, 2, 3}), 4).role, GroupRole::kWorld);
  // No regular stride, a single rank, or no world size: nothing to go on.
  const GroupRoleInfo irregular = ClassifyGroup(Group("", {0, 1, 5}), 16);
  EXPECT_EQ(irregular.role, GroupRole::kUnknown);
  EXPECT_EQ(irregular.source, RoleSource::kNone);
  EXPECT_EQ(ClassifyGroup(Group("", {3}), 16).source, RoleSource::kNone);
  EXPECT_EQ(ClassifyGroup(Group("", {0, 1}), -1).source, RoleSource::kNone);
}

TEST(GroupRolesTest, JobGroupsAreDeduplicatedAcrossRanks) {
  Trace trace;
  for (int32_t r : {0, 1}) {
    Rank& rank = trace.ranks.emplace_back();
    rank.rank = r;
    rank.world_size = 2;
    rank.process_groups.push_back(Group("TENSOR_MODEL_PARALLEL_GROUP", {0, 1}));
  }
  std::vector<std::vector<GroupRoleInfo>> roles;
  for (const Rank& rank : trace.ranks) roles.push_back(ClassifyGroups(rank));
  const std::vector<JobGroup> groups = JobGroups(trace, {&roles[0], &roles[1]});
  ASSERT_EQ(groups.size(), 1u);
  EXPECT_EQ(groups[0].role.role, GroupRole::kTensor);
  EXPECT_THAT(groups[0].declared_by, ElementsAre(0, 1));
  EXPECT_THAT(groups[0].ranks, ElementsAre(0, 1));
}

// A rank whose only transfers are a send and a receive in a group described `description`.
Rank TransfersIn(std::string description) {
  Rank rank;
  rank.rank = 0;
  rank.world_size = 4;
  rank.process_groups.push_back(Group(std::move(description), {0, 1}));
  Timeline stream;
  stream.kind = TimelineKind::kGpuStream;
  stream.device = 0;
  stream.id = 20;
  for (CommKind kind : {CommKind::kSend, CommKind::kRecv}) {
    CommInfo info;
    info.kind = kind;
    info.peer = 1;
    info.process_group = 0;
    rank.comms.push_back(info);
    Interval interval;
    interval.kind = IntervalKind::kCommKernel;
    interval.start = kind == CommKind::kSend ? 0 : 100;
    interval.end = interval.start + 50;
    interval.comm = static_cast<uint32_t>(rank.comms.size() - 1);
    stream.intervals.push_back(interval);
  }
  rank.timelines.push_back(std::move(stream));
  return rank;
}

// Context parallelism passes p2p around a ring inside one stage: never a pipeline's transfer.
// The pipeline's own group, the world and groups of unknown role keep theirs.
TEST(GroupRolesTest, OnlyPipelineWorldAndUnknownGroupsCarryPipelineTransfers) {
  const RankIndex ring = BuildRank(TransfersIn("CONTEXT_PARALLEL_GROUP"));
  ASSERT_EQ(ring.ops.size(), 2u);
  EXPECT_FALSE(ring.HasP2p());
  EXPECT_EQ(ring.ops[0].group, GroupRole::kContext);
  EXPECT_TRUE(ring.ops[0].in_stage_comm());
  EXPECT_TRUE(BuildRank(TransfersIn("PIPELINE_MODEL_PARALLEL_GROUP")).HasP2p());
  EXPECT_TRUE(BuildRank(TransfersIn("default_pg")).HasP2p());
  // Ranks 0,1 look like tensor parallelism in Megatron's layout, but that is a guess.
  const RankIndex guessed = BuildRank(TransfersIn("undefined"));
  EXPECT_TRUE(guessed.HasP2p());
  EXPECT_EQ(guessed.groups[0].role, GroupRole::kTensor);
  EXPECT_EQ(guessed.groups[0].source, RoleSource::kLayout);
  EXPECT_EQ(guessed.ops[0].group, GroupRole::kUnknown);
}

// A job group of `ranks` with the role ClassifyGroup gives it in a world of 16.
JobGroup Undescribed(std::string name, std::vector<int32_t> ranks) {
  JobGroup group;
  group.name = std::move(name);
  group.ranks = std::move(ranks);
  group.role = ClassifyGroup(ProcessGroup{group.name, group.ranks, ""}, 16);
  group.declared_by = group.ranks;
  return group;
}

// DP 4 x PP 4 in Megatron-Core's order (global rank = replica + 4 * stage): pipeline d holds
// ranks d, d+4, d+8, d+12.
std::vector<std::vector<int32_t>> FourPipelines() {
  std::vector<std::vector<int32_t>> orders(4);
  for (int32_t d = 0; d < 4; ++d) {
    for (int32_t s = 0; s < 4; ++s) orders[static_cast<size_t>(d)].push_back(d + 4 * s);
  }
  return orders;
}

TEST(InferDataParallelGroupsTest, OneSameStageRankOfEachPipelineIsTheirDataParallelGroup) {
  std::vector<JobGroup> groups;
  for (int32_t s = 0; s < 4; ++s) {
    // Each stage's data-parallel group, each pipeline's own group, and the world.
    groups.push_back(Undescribed(absl::StrCat("dp", s), {4 * s, 4 * s + 1, 4 * s + 2, 4 * s + 3}));
    groups.push_back(Undescribed(absl::StrCat("pp", s), {s, s + 4, s + 8, s + 12}));
  }
  std::vector<int32_t> world(16);
  for (int32_t r = 0; r < 16; ++r) world[static_cast<size_t>(r)] = r;
  groups.push_back(Undescribed("world", world));
  const StructureInference inferred = InferDataParallelGroups(FourPipelines(), groups);
  EXPECT_EQ(inferred.inferred, 4);
  EXPECT_TRUE(inferred.refused.empty());
  for (const JobGroup& group : groups) {
    if (group.name.starts_with("dp")) {
      EXPECT_EQ(group.role.role, GroupRole::kData) << group.name;
      EXPECT_EQ(group.role.source, RoleSource::kStructure) << group.name;
      EXPECT_EQ(AppliedRole(group.role), GroupRole::kData);
    } else {
      // The pipelines' groups and the world span stages: their layout guesses stay guesses.
      EXPECT_NE(group.role.source, RoleSource::kStructure) << group.name;
      EXPECT_EQ(AppliedRole(group.role), GroupRole::kUnknown);
    }
  }
  EXPECT_EQ(groups[0].role.evidence,
            "ranks 0,1,2,3: the stage-0 rank of each of pipelines 0,1,2,3, which share such a "
            "group at every stage (no description; inferred from the ranks)");
}

TEST(InferDataParallelGroupsTest, TwoFamiliesOfSuchGroupsAdmitNoSingleReading) {
  // TP 2 x DP 2 x PP 2 (global rank = t + 2 * (d + 2 * s)): the tensor-parallel pairs {0,1}
  // and the data-parallel pairs {0,2} both hold one stage-0 rank of two pipelines.
  const std::vector<std::vector<int32_t>> orders = {{0, 4}, {1, 5}, {2, 6}, {3, 7}};
  std::vector<JobGroup> groups = {Undescribed("tp0", {0, 1}), Undescribed("tp1", {2, 3}),
                                  Undescribed("tp2", {4, 5}), Undescribed("tp3", {6, 7}),
                                  Undescribed("dp0", {0, 2}), Undescribed("dp1", {1, 3}),
                                  Undescribed("dp2", {4, 6}), Undescribed("dp3", {5, 7})};
  const std::vector<JobGroup> before = groups;
  const StructureInference inferred = InferDataParallelGroups(orders, groups);
  EXPECT_EQ(inferred.inferred, 0);
  EXPECT_EQ(inferred.refused,
            "rank 0 is in two groups that each hold one same-stage rank of several pipelines "
            "(ranks 0,1 and 0,2): tensor- and data-parallel groups look alike by their ranks, so "
            "neither is taken as data parallel");
  for (size_t g = 0; g < groups.size(); ++g) {
    EXPECT_EQ(groups[g].role.source, before[g].role.source);
    EXPECT_EQ(groups[g].role.role, before[g].role.role);
  }
}

TEST(InferDataParallelGroupsTest, StagesThatJoinDifferentPipelinesAdmitNoSingleReading) {
  // Stage 0 pairs pipelines {0,1} and {2,3}, stage 1 pairs {0,2} and {1,3}.
  const std::vector<std::vector<int32_t>> orders = {{0, 4}, {1, 5}, {2, 6}, {3, 7}};
  std::vector<JobGroup> groups = {Undescribed("a", {0, 1}), Undescribed("b", {2, 3}),
                                  Undescribed("c", {4, 6}), Undescribed("d", {5, 7})};
  const StructureInference inferred = InferDataParallelGroups(orders, groups);
  EXPECT_EQ(inferred.inferred, 0);
  EXPECT_EQ(inferred.refused,
            "the groups of pipeline 0's stages join different pipelines (0,1 at stage 0, 0,2 at "
            "stage 1)");
}

TEST(InferDataParallelGroupsTest, AStageOutsideEveryGroupAdmitsNoSingleReading) {
  const std::vector<std::vector<int32_t>> orders = {{0, 4}, {1, 5}};
  std::vector<JobGroup> groups = {Undescribed("a", {0, 1})};
  const StructureInference inferred = InferDataParallelGroups(orders, groups);
  EXPECT_EQ(inferred.inferred, 0);
  EXPECT_EQ(inferred.refused,
            "pipeline 0 has a rank in a group holding one same-stage rank of several pipelines, "
            "but its stage 1 (rank 4) is in no such group");
}

TEST(InferDataParallelGroupsTest, ADescribedDataParallelGroupLeavesTheJobAsItIs) {
  std::vector<JobGroup> groups = {Undescribed("a", {0, 1}), Undescribed("b", {4, 5})};
  JobGroup described = Undescribed("c", {8, 9});
  described.description = "DATA_PARALLEL_GROUP";
  described.role = ClassifyGroup(ProcessGroup{"c", {8, 9}, "DATA_PARALLEL_GROUP"}, 16);
  groups.push_back(described);
  const StructureInference inferred = InferDataParallelGroups({{0, 4}, {1, 5}}, groups);
  EXPECT_EQ(inferred.inferred, 0);
  EXPECT_TRUE(inferred.refused.empty());
  EXPECT_NE(groups[0].role.source, RoleSource::kStructure);
}

TEST(InferDataParallelGroupsTest, AMemberOutsideEveryPipelineIsNoCandidate) {
  // Rank 9 has no pipeline (not loaded, or no p2p): nothing says where it sits.
  std::vector<JobGroup> groups = {Undescribed("a", {0, 1, 9}), Undescribed("b", {4, 5, 13})};
  const StructureInference inferred = InferDataParallelGroups({{0, 4}, {1, 5}}, groups);
  EXPECT_EQ(inferred.inferred, 0);
  EXPECT_TRUE(inferred.refused.empty());
}

}  // namespace
}  // namespace bubblescope::index
