// Simulated sets written to disk and loaded back: writer -> reader -> model
// must equal the simulator's own model (names, kinds, times to the ns, comm
// peers and bytes, steps, memory samples, annotations) in every layout the
// writer has.
#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <string>
#include <tuple>
#include <vector>

#include "gtest/gtest.h"
#include "loader/trace_loader.h"
#include "schedule_engine/sim_test_util.h"
#include "support/test_files.h"
#include "synth/simulated_rank_views.h"
#include "synth/simulated_set.h"
#include "synth/synthetic_job.h"

namespace bubblescope::sim {
namespace {

using ::bubblescope::testing::TempDir;

class RoundTripTest
    : public ::testing::TestWithParam<std::tuple<KinetoLayout, Schedule, AnnotationStyle, bool>> {};

TEST_P(RoundTripTest, LoadedTraceEqualsTheSimulatedOne) {
  auto [layout, schedule, annotations, gzip] = GetParam();
  const Config config = RoundTripConfig(schedule, annotations);
  absl::StatusOr<Simulation> simulation = Simulate(config);
  ASSERT_TRUE(simulation.ok()) << simulation.status();
  TempDir dir;
  SetWriteOptions options;
  options.kineto.layout = layout;
  options.gzip = gzip;
  absl::StatusOr<std::vector<std::string>> written =
      WriteSimulationSet(config, *simulation, dir.path(), options);
  ASSERT_TRUE(written.ok()) << written.status();
  ASSERT_EQ(written->size(), 4u);
  EXPECT_EQ(written->back(), dir.path() + "/truth.json");
  EXPECT_EQ(written->front(),
            dir.path() + (gzip ? "/rank0.pt.trace.json.gz" : "/rank0.pt.trace.json"));

  LoadOptions load_options;
  load_options.jobs = 1;
  absl::StatusOr<Trace> loaded = LoadTrace({dir.path()}, load_options);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  ASSERT_EQ(loaded->skipped_files.size(), 1u);  // truth.json
  ASSERT_EQ(loaded->ranks.size(), simulation->trace.ranks.size());
  for (size_t r = 0; r < loaded->ranks.size(); ++r) {
    ExpectSameRank(loaded->ranks[r], simulation->trace.ranks[r],
                   layout != KinetoLayout::kBareArray);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Layouts, RoundTripTest,
    ::testing::Values(std::make_tuple(KinetoLayout::kRelativeWithBase, Schedule::k1F1B,
                                      AnnotationStyle::kPpGpu, false),
                      std::make_tuple(KinetoLayout::kRelativeWithBase, Schedule::kZeroBubbleH1,
                                      AnnotationStyle::kPpCpu, true),
                      std::make_tuple(KinetoLayout::kAbsoluteMicros, Schedule::kInterleaved1F1B,
                                      AnnotationStyle::kPpGpu, false),
                      std::make_tuple(KinetoLayout::kAbsoluteMicros, Schedule::kGpipe,
                                      AnnotationStyle::kNone, true),
                      std::make_tuple(KinetoLayout::kBareArray, Schedule::kForwardOnly,
                                      AnnotationStyle::kPpCpu, false),
                      std::make_tuple(KinetoLayout::kBareArray, Schedule::k1F1B,
                                      AnnotationStyle::kPpGpu, true)));

using Group = std::tuple<std::string, std::vector<int32_t>>;

// Writes `config`'s simulated set and loads it back: every rank's file, its collectives' and
// transfers' args and the groups distributedInfo.pg_config declares (name, Megatron-Core
// description, ranks) come back as written. Returns the (description, ranks) of global rank
// `rank`'s groups, sorted.
std::vector<Group> RoundTripGroupsOf(const Config& config, size_t ranks, size_t rank) {
  absl::StatusOr<Simulation> simulation = Simulate(config);
  EXPECT_TRUE(simulation.ok()) << simulation.status();
  if (!simulation.ok()) return {};
  EXPECT_EQ(simulation->trace.ranks.size(), ranks);
  TempDir dir;
  absl::StatusOr<std::vector<std::string>> written =
      WriteSimulationSet(config, *simulation, dir.path(), SetWriteOptions{});
  EXPECT_TRUE(written.ok()) << written.status();
  LoadOptions load_options;
  load_options.jobs = 1;
  absl::StatusOr<Trace> loaded = LoadTrace({dir.path()}, load_options);
  EXPECT_TRUE(loaded.ok()) << loaded.status();
  if (!loaded.ok() || loaded->ranks.size() != simulation->trace.ranks.size()) return {};
  for (size_t r = 0; r < loaded->ranks.size(); ++r) {
    const Rank& simulated = simulation->trace.ranks[r];
    ExpectSameRank(loaded->ranks[r], simulated, true);
    std::vector<std::tuple<std::string, std::string, std::vector<int32_t>>> want;
    std::vector<std::tuple<std::string, std::string, std::vector<int32_t>>> got;
    for (const ProcessGroup& group : simulated.process_groups) {
      want.emplace_back(group.name, group.description, group.ranks);
    }
    for (const ProcessGroup& group : loaded->ranks[r].process_groups) {
      got.emplace_back(group.name, group.description, group.ranks);
    }
    std::sort(want.begin(), want.end());
    std::sort(got.begin(), got.end());
    EXPECT_EQ(got, want);
  }
  std::vector<Group> groups;
  for (const ProcessGroup& group : loaded->ranks[rank].process_groups) {
    groups.emplace_back(group.description, group.ranks);
  }
  std::sort(groups.begin(), groups.end());
  return groups;
}

TEST(RoundTripTest, TensorAndDataParallelRanksAndTheirGroups) {
  Config config = RoundTripConfig(Schedule::k1F1B, AnnotationStyle::kNone);
  config.parallel = ModelParallel{.tensor = 2,
                                  .data = 2,
                                  .sequence_parallel = true,
                                  .overlap = true,
                                  .tensor_share = 0.2,
                                  .dp_sync_ns = 250'000};
  // Global rank 5 = tensor 1 + 2 * (data 0 + 2 * pipeline rank 1): its tensor group is {4, 5},
  // its data group {5, 7}, its pipeline {1, 5, 9}.
  EXPECT_EQ(RoundTripGroupsOf(config, 12, 5),
            (std::vector<Group>{
                Group{"DATA_PARALLEL_GROUP_WITH_CP", {5, 7}},
                Group{"PIPELINE_MODEL_PARALLEL_GROUP", {1, 5, 9}},
                Group{"TENSOR_MODEL_PARALLEL_GROUP", {4, 5}},
                Group{"default_pg", {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}},
            }));
}

TEST(RoundTripTest, ContextAndExpertParallelRanksAndTheirGroups) {
  Config config = RoundTripConfig(Schedule::k1F1B, AnnotationStyle::kNone);
  config.parallel = ModelParallel{
      .tensor = 2, .dp_sync_ns = 250'000, .context = 4, .context_exchange_ns = 50'000, .expert = 2};
  // p = 3 stages of 2 x 4 ranks. Global rank 10 = tensor 0 + 2 * (context 1 + 4 * pipeline
  // rank 1): its tensor group {10, 11}; its ring (and gradient sync) the context ranks 8, 10, 12,
  // 14; its experts, laid tp-ep-dp-pp over the same ranks, {8, 10}; its pipeline {2, 10, 18}.
  EXPECT_EQ(RoundTripGroupsOf(config, 24, 10),
            (std::vector<Group>{
                Group{"CONTEXT_PARALLEL_GROUP", {8, 10, 12, 14}},
                Group{"DATA_PARALLEL_GROUP_WITH_CP", {8, 10, 12, 14}},
                Group{"EXPERT_MODEL_PARALLEL_GROUP", {8, 10}},
                Group{"PIPELINE_MODEL_PARALLEL_GROUP", {2, 10, 18}},
                Group{"TENSOR_MODEL_PARALLEL_GROUP", {10, 11}},
                Group{"default_pg", {0,  1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11,
                                     12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23}},
            }));
}

TEST(SetWriterTest, RefusesToOverwriteWithoutForceAndCleansUpWithIt) {
  TempDir dir;
  Config config = testing::IdealConfig(Schedule::k1F1B, 3, 4, 1000, 2000);
  absl::StatusOr<Simulation> simulation = Simulate(config);
  ASSERT_TRUE(simulation.ok()) << simulation.status();
  ASSERT_TRUE(WriteSimulationSet(config, *simulation, dir.path(), SetWriteOptions{}).ok());

  // A second write of the same set, here gzip'd, would leave two files per
  // rank.
  SetWriteOptions gzip;
  gzip.gzip = true;
  absl::StatusOr<std::vector<std::string>> refused =
      WriteSimulationSet(config, *simulation, dir.path(), gzip);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kAlreadyExists);
  EXPECT_FALSE(std::filesystem::exists(dir.path() + "/rank0.pt.trace.json.gz"));

  // With overwrite, a smaller job replaces the set: the plain files and rank 2
  // go away.
  config = testing::IdealConfig(Schedule::k1F1B, 2, 4, 1000, 2000);
  simulation = Simulate(config);
  ASSERT_TRUE(simulation.ok()) << simulation.status();
  gzip.overwrite = true;
  ASSERT_TRUE(WriteSimulationSet(config, *simulation, dir.path(), gzip).ok());
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(dir.path())) {
    names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"rank0.pt.trace.json.gz", "rank1.pt.trace.json.gz",
                                             "truth.json"}));
}

TEST(SetWriterTest, RankFileNames) {
  EXPECT_EQ(RankFileName(0, false), "rank0.pt.trace.json");
  EXPECT_EQ(RankFileName(12, true), "rank12.pt.trace.json.gz");
}

}  // namespace
}  // namespace bubblescope::sim
