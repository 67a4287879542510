// The replica fold (job/replica_sets.h) on simulated data-parallel jobs: which pipelines are
// joined, and each spread against values worked out from the simulations' costs and truths.
#include "job/replica_sets.h"

#include <algorithm>
#include <cstdint>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "job/job.h"
#include "job/replica_job.h"
#include "synth/synthetic_job.h"

namespace bubblescope {
namespace {

using replica_testing::kBackwardNs;
using replica_testing::kForwardNs;
using replica_testing::kMicrobatches;
using replica_testing::kReplicas;
using replica_testing::kSlowForwardNs;
using replica_testing::kSlowReplica;

job::Result AnalyzeOk(const Trace& trace) {
  absl::StatusOr<job::Result> result = job::Analyze(trace, job::Options{});
  EXPECT_TRUE(result.ok()) << result.status();
  return result.ok() ? *std::move(result) : job::Result{};
}

// The index of the pipeline whose first stage runs on `rank`.
int32_t PipelineOfFirstRank(const job::Result& result, int32_t rank) {
  for (size_t i = 0; i < result.pipelines.size(); ++i) {
    if (result.pipelines[i].crossrank.pipeline.stage_order().front() == rank) {
      return static_cast<int32_t>(i);
    }
  }
  return -1;
}

TEST(ReplicaSetsTest, OneSlowReplicaStandsOutInTheSpread) {
  const replica_testing::OneSlowReplica job = replica_testing::MakeOneSlowReplica();
  ASSERT_EQ(job.trace.ranks.size(), 8u);
  const job::Result result = AnalyzeOk(job.trace);
  ASSERT_EQ(result.pipelines.size(), static_cast<size_t>(kReplicas));
  const int32_t slow = PipelineOfFirstRank(result, kSlowReplica);
  ASSERT_GE(slow, 0);
  ASSERT_EQ(result.pipelines[static_cast<size_t>(slow)].crossrank.pipeline.stage_order(),
            (std::vector<int32_t>{kSlowReplica, kSlowReplica + kReplicas}));

  ASSERT_EQ(result.replica_sets.size(), 1u);
  const job::ReplicaSet& set = result.replica_sets[0];
  EXPECT_EQ(set.pipelines, (std::vector<int32_t>{0, 1, 2, 3}));
  // The gradient all-reduce runs over Megatron-Core's data-parallel group with context ranks.
  EXPECT_EQ(set.group_descriptions, (std::vector<std::string>{"DATA_PARALLEL_GROUP_WITH_CP"}));
  ASSERT_EQ(set.stages.size(), 2u);
  EXPECT_EQ(set.stages[1].ranks.size(), 4u);
  EXPECT_EQ(set.stages[1].ranks[static_cast<size_t>(slow)], kSlowReplica + kReplicas);

  // Stage 1's forward: 1 ms on three replicas, 1.5 ms on the slow one. The median of four
  // values is the second smallest (nearest rank), so 1 ms.
  ASSERT_TRUE(set.stages[1].forward_ns.has_value());
  const job::Spread& forward = *set.stages[1].forward_ns;
  EXPECT_NEAR(forward.min, kForwardNs, 1'000);
  EXPECT_NEAR(forward.median, kForwardNs, 1'000);
  EXPECT_NEAR(forward.max, kSlowForwardNs, 1'000);
  EXPECT_EQ(forward.max_pipeline, slow);
  EXPECT_NE(forward.min_pipeline, slow);
  // Stage 0's forward and every backward are the same on all four: nothing stands out.
  ASSERT_TRUE(set.stages[0].forward_ns.has_value());
  EXPECT_NEAR(set.stages[0].forward_ns->max - set.stages[0].forward_ns->min, 0.0, 1'000);
  ASSERT_TRUE(set.stages[1].backward_ns.has_value());
  EXPECT_NEAR(set.stages[1].backward_ns->median, kBackwardNs, 1'000);
  EXPECT_FALSE(set.stages[1].weight_grad_ns.has_value());  // 1F1B runs no separate W

  // Compute per complete iteration on stage 1: m x (F + B) = 4 x 3 ms = 12 ms, and 4 x 3.5 ms =
  // 14 ms on the slow replica.
  EXPECT_NEAR(set.stages[1].compute_ns.min, kMicrobatches * (kForwardNs + kBackwardNs), 1'000);
  EXPECT_NEAR(set.stages[1].compute_ns.median, kMicrobatches * (kForwardNs + kBackwardNs), 1'000);
  EXPECT_NEAR(set.stages[1].compute_ns.max, kMicrobatches * (kSlowForwardNs + kBackwardNs), 1'000);
  EXPECT_EQ(set.stages[1].compute_ns.max_pipeline, slow);

  // The pipeline figures: the slow replica's stage imbalance gives it the larger bubble and
  // iteration; each side as its own simulation's truth says.
  const sim::Truth& normal = job.normal;
  const sim::Truth& slowed = job.slow;
  ASSERT_GT(slowed.bubble_fraction, normal.bubble_fraction + 0.01);
  EXPECT_NEAR(set.bubble_fraction.min, normal.bubble_fraction, 0.005);
  EXPECT_NEAR(set.bubble_fraction.median, normal.bubble_fraction, 0.005);
  EXPECT_NEAR(set.bubble_fraction.max, slowed.bubble_fraction, 0.005);
  EXPECT_EQ(set.bubble_fraction.max_pipeline, slow);
  EXPECT_EQ(set.worst_pipeline, slow);
  EXPECT_NEAR(set.latency_p50_ns.median, static_cast<double>(normal.latency_p50_ns), 2'000);
  EXPECT_NEAR(set.latency_p50_ns.max, static_cast<double>(slowed.latency_p50_ns), 2'000);
  // The excess is each replica's measured minus its own schedule's bubble.
  ASSERT_TRUE(set.excess_bubble_fraction.has_value());
  const job::Pipeline& worst = result.pipelines[static_cast<size_t>(slow)];
  ASSERT_TRUE(worst.ideal.has_value());
  EXPECT_DOUBLE_EQ(set.excess_bubble_fraction->max,
                   worst.bubble.bubble_fraction - worst.ideal->fraction);

  // Memory: every replica sampled it, the same weights and stash on each.
  ASSERT_TRUE(set.stages[0].peak_allocated_bytes.has_value());
  EXPECT_EQ(set.stages[0].peak_allocated_bytes->min,
            static_cast<double>(normal.memory[0].peak_allocated_bytes));

  // The job's ranking puts the slow replica's larger bubble first.
  ASSERT_EQ(result.job.pipelines_by_bubble.size(), 4u);
  EXPECT_EQ(result.job.pipelines_by_bubble.front(), slow);
}

// TP 2 x DP 2 x PP 2: four pipelines, one per tensor rank and replica.
sim::Simulation TensorAndDataParallel() {
  sim::Config config = replica_testing::DataParallelJob(kForwardNs);
  config.parallel.tensor = 2;
  config.parallel.data = 2;
  absl::StatusOr<sim::Simulation> simulation = sim::Simulate(config);
  EXPECT_TRUE(simulation.ok()) << simulation.status();
  return simulation.ok() ? *std::move(simulation) : sim::Simulation{};
}

TEST(ReplicaSetsTest, TensorRanksMakeOneSetEach) {
  // The data-parallel groups join the two replicas of each tensor rank, never two tensor ranks.
  const sim::Simulation simulation = TensorAndDataParallel();
  const job::Result result = AnalyzeOk(simulation.trace);
  ASSERT_EQ(result.pipelines.size(), 4u);
  ASSERT_EQ(result.replica_sets.size(), 2u);
  std::set<int32_t> seen;
  for (const job::ReplicaSet& set : result.replica_sets) {
    ASSERT_EQ(set.pipelines.size(), 2u);
    // Global rank = tensor + 2 * (replica + 2 * stage): one tensor rank per set.
    const int32_t tensor = result.pipelines[static_cast<size_t>(set.pipelines[0])]
                               .crossrank.pipeline.stage_order()[0] %
                           2;
    for (int32_t member : set.pipelines) {
      EXPECT_TRUE(seen.insert(member).second);
      for (int32_t rank :
           result.pipelines[static_cast<size_t>(member)].crossrank.pipeline.stage_order()) {
        EXPECT_EQ(rank % 2, tensor);
      }
    }
  }
}

TEST(ReplicaSetsTest, GuessedGroupRolesFoldNothing) {
  // TP 2 x DP 2 x PP 2 with every group undescribed: the layout suggests that the stride-2
  // groups are data parallel, but a guess never joins pipelines.
  sim::Simulation simulation = TensorAndDataParallel();
  for (Rank& rank : simulation.trace.ranks) {
    for (ProcessGroup& group : rank.process_groups) group.description = "undefined";
  }
  const job::Result result = AnalyzeOk(simulation.trace);
  ASSERT_EQ(result.pipelines.size(), 4u);
  EXPECT_TRUE(std::any_of(result.job.process_groups.begin(), result.job.process_groups.end(),
                          [](const index::JobGroup& group) {
                            return group.role.role == index::GroupRole::kData &&
                                   group.role.source == index::RoleSource::kLayout;
                          }));
  EXPECT_TRUE(result.replica_sets.empty());
}

TEST(ReplicaSetsTest, ADifferentShapeIsNoReplica) {
  // Replica 3 runs 6 microbatches instead of 4: it shares every data-parallel group but not the
  // shape, so the set holds the other three.
  sim::Config config = replica_testing::DataParallelJob(kForwardNs);
  absl::StatusOr<sim::Simulation> four = sim::Simulate(config);
  config.microbatches = 6;
  absl::StatusOr<sim::Simulation> six = sim::Simulate(config);
  ASSERT_TRUE(four.ok() && six.ok());
  replica_testing::TakeReplica(six->trace, kSlowReplica, four->trace);
  const job::Result result = AnalyzeOk(four->trace);
  ASSERT_EQ(result.pipelines.size(), 4u);
  ASSERT_EQ(result.replica_sets.size(), 1u);
  const int32_t odd = PipelineOfFirstRank(result, kSlowReplica);
  ASSERT_TRUE(result.pipelines[static_cast<size_t>(odd)].shape.has_value());
  EXPECT_EQ(result.pipelines[static_cast<size_t>(odd)].shape->m, 6);
  const std::vector<int32_t>& members = result.replica_sets[0].pipelines;
  EXPECT_EQ(members.size(), 3u);
  EXPECT_EQ(std::count(members.begin(), members.end(), odd), 0);
}

TEST(ReplicaSetsTest, WithoutDataParallelGroupsNothingFolds) {
  // Four copies of a pipeline that declare no data-parallel group (no gradient sync): nothing
  // says they are replicas.
  sim::Config config = replica_testing::DataParallelJob(kForwardNs);
  config.parallel.dp_sync_ns = 0;
  absl::StatusOr<sim::Simulation> simulation = sim::Simulate(config);
  ASSERT_TRUE(simulation.ok()) << simulation.status();
  const job::Result result = AnalyzeOk(simulation->trace);
  ASSERT_EQ(result.pipelines.size(), 4u);
  EXPECT_TRUE(result.replica_sets.empty());
}

// The replica sets as (pipelines, each stage's ranks), to compare two analyses.
std::vector<std::pair<std::vector<int32_t>, std::vector<std::vector<int32_t>>>> SetsOf(
    const job::Result& result) {
  std::vector<std::pair<std::vector<int32_t>, std::vector<std::vector<int32_t>>>> sets;
  for (const job::ReplicaSet& set : result.replica_sets) {
    std::vector<std::vector<int32_t>> stages;
    for (const job::StageSpread& stage : set.stages) stages.push_back(stage.ranks);
    sets.emplace_back(set.pipelines, std::move(stages));
  }
  return sets;
}

// Each pipeline rank's exposed DP sync (bubble::RankTotals::dp_sync, over the complete
// iterations) against the simulator's truth for its pipeline rank, summed over the iterations.
// Every replica runs the truth's pipeline. The trace writes exact nanoseconds and the clocks are
// exact, so the two differ only where a kernel is attributed to another group: at least the
// loss all-reduce (5 us) or the sync itself. The tolerance, 1 us per rank, is below both.
void ExpectDpSyncAsTruth(const job::Result& result, const sim::Truth& truth) {
  ASSERT_EQ(result.pipelines.size(), static_cast<size_t>(kReplicas));
  for (const job::Pipeline& pipeline : result.pipelines) {
    ASSERT_EQ(pipeline.bubble.complete_iterations, static_cast<int64_t>(truth.iterations.size()));
    for (const bubble::RankTotals& totals : pipeline.bubble.per_rank) {
      const int32_t stage = totals.rank / kReplicas;  // global rank = replica + 4 * stage
      TimeNs expected = 0;
      for (const sim::IterationTruth& iteration : truth.iterations) {
        expected += iteration.ranks[static_cast<size_t>(stage)].split.dp_sync;
      }
      EXPECT_GT(expected, 0);
      EXPECT_NEAR(static_cast<double>(totals.split.dp_sync), static_cast<double>(expected), 1'000.0)
          << "rank " << totals.rank;
    }
  }
}

sim::Simulation SimulateOk(const sim::Config& config) {
  absl::StatusOr<sim::Simulation> simulation = sim::Simulate(config);
  EXPECT_TRUE(simulation.ok()) << simulation.status();
  return simulation.ok() ? *std::move(simulation) : sim::Simulation{};
}

TEST(ReplicaSetsTest, GroupsWithoutDescriptionsFoldAsDescribedOnesDo) {
  // DP 4 x PP 2 as torch before 2.4 writes it: the same groups, none described. Each stage's
  // data-parallel group holds one rank of every pipeline at that stage, so the fold is the
  // described job's, marked as inferred; the gradient sync is measured as the truth has it.
  sim::Config config = replica_testing::DataParallelJob(kForwardNs);
  const sim::Simulation described = SimulateOk(config);
  config.describe_groups = false;
  const sim::Simulation bare = SimulateOk(config);
  const job::Result with = AnalyzeOk(described.trace);
  const job::Result without = AnalyzeOk(bare.trace);
  ASSERT_EQ(with.replica_sets.size(), 1u);
  EXPECT_FALSE(with.replica_sets[0].inferred_from_ranks);
  EXPECT_EQ(with.replica_sets[0].group_descriptions,
            std::vector<std::string>{"DATA_PARALLEL_GROUP_WITH_CP"});
  ASSERT_EQ(without.replica_sets.size(), 1u);
  EXPECT_EQ(SetsOf(without), SetsOf(with));
  EXPECT_TRUE(without.replica_sets[0].inferred_from_ranks);
  EXPECT_TRUE(without.replica_sets[0].group_descriptions.empty());
  // Global rank = replica + 4 * stage: stage s's group is ranks 4s..4s+3.
  int32_t inferred = 0;
  for (const index::JobGroup& group : without.job.process_groups) {
    if (group.role.source != index::RoleSource::kStructure) continue;
    ++inferred;
    EXPECT_EQ(group.role.role, index::GroupRole::kData);
    ASSERT_EQ(group.ranks.size(), static_cast<size_t>(kReplicas));
    EXPECT_EQ(group.ranks.front() % kReplicas, 0);
    EXPECT_EQ(group.ranks.back(), group.ranks.front() + kReplicas - 1);
  }
  EXPECT_EQ(inferred, 2);
  ExpectDpSyncAsTruth(with, described.truth);
  ExpectDpSyncAsTruth(without, bare.truth);
}

TEST(ReplicaSetsTest, CoalescedGradientSyncIsMeasuredFromItsStream) {
  // The gradient sync as Megatron's distributed optimizer issues it: a coalesced reduce-scatter
  // whose kernel names no group, then the loss all-reduce on the same stream that names the
  // data-parallel group. Described or not, the exposed sync is the truth's.
  for (const bool describe : {true, false}) {
    SCOPED_TRACE(describe ? "described groups" : "no descriptions");
    sim::Config config = replica_testing::DataParallelJob(kForwardNs);
    config.parallel.dp_sync_coalesced = true;
    config.describe_groups = describe;
    const sim::Simulation simulation = SimulateOk(config);
    ExpectDpSyncAsTruth(AnalyzeOk(simulation.trace), simulation.truth);
  }
}

TEST(ReplicaSetsTest, WhyTensorAndDataGroupsWithoutDescriptionsFoldNothing) {
  sim::Config config = replica_testing::DataParallelJob(kForwardNs);
  config.parallel.tensor = 2;
  config.parallel.data = 2;
  config.describe_groups = false;
  const job::Result result = AnalyzeOk(SimulateOk(config).trace);
  EXPECT_TRUE(result.replica_sets.empty());
  EXPECT_TRUE(
      std::any_of(result.job.notes.begin(), result.job.notes.end(), [](const std::string& note) {
        return note.starts_with(
            "no data-parallel groups inferred from the groups' ranks: rank 0 "
            "is in two groups");
      }));
}

}  // namespace
}  // namespace bubblescope
