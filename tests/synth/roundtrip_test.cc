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
#include "synth/simulated_set.h"
#include "synth/synthetic_job.h"

namespace bubblescope::sim {
namespace {

using ::bubblescope::testing::TempDir;

// Every field of an interval that a file can carry, with names and comm
// metadata resolved.
using IntervalView =
    std::tuple<TimeNs, TimeNs, int64_t, int, std::string, int, int64_t, int32_t, int32_t,
               std::string, std::string, std::string, std::vector<int32_t>>;

IntervalView View(const Rank& rank, const Interval& interval) {
  const CommInfo* comm = rank.comm(interval);
  if (comm == nullptr) {
    return {interval.start,
            interval.end,
            interval.correlation,
            static_cast<int>(interval.kind),
            std::string(rank.name(interval.name)),
            -1,
            -1,
            -1,
            -1,
            "",
            "",
            "",
            {}};
  }
  const ProcessGroup* group =
      comm->process_group == kNoIndex ? nullptr : &rank.process_groups[comm->process_group];
  return {interval.start,
          interval.end,
          interval.correlation,
          static_cast<int>(interval.kind),
          std::string(rank.name(interval.name)),
          static_cast<int>(comm->kind),
          comm->bytes,
          comm->peer,
          comm->group_size,
          std::string(rank.name(comm->collective)),
          std::string(rank.name(comm->dtype)),
          group == nullptr ? "" : group->name,
          group == nullptr ? std::vector<int32_t>{} : group->ranks};
}

// A timeline's identity and contents.
using TimelineView = std::tuple<int, int32_t, int64_t, int64_t, std::vector<IntervalView>>;

std::vector<TimelineView> Timelines(const Rank& rank) {
  std::vector<TimelineView> views;
  for (const Timeline& timeline : rank.timelines) {
    std::vector<IntervalView> intervals;
    for (const Interval& interval : timeline.intervals) intervals.push_back(View(rank, interval));
    views.emplace_back(static_cast<int>(timeline.kind), timeline.device, timeline.pid, timeline.id,
                       std::move(intervals));
  }
  std::sort(views.begin(), views.end());
  return views;
}

using AnnotationView = std::tuple<TimeNs, TimeNs, std::string, int, int32_t, int64_t>;

// With `steps` true only the ProfilerStep#N annotations, else all others.
std::vector<AnnotationView> Annotations(const Rank& rank, bool steps) {
  std::vector<AnnotationView> views;
  for (const Annotation& annotation : rank.annotations) {
    std::string name(rank.name(annotation.name));
    if (name.starts_with("ProfilerStep#") != steps) continue;
    views.emplace_back(annotation.start, annotation.end, name, static_cast<int>(annotation.scope),
                       annotation.device, annotation.thread_or_stream);
  }
  return views;
}

using StepView = std::tuple<int64_t, TimeNs, TimeNs>;
using MemoryView = std::tuple<TimeNs, int64_t, int64_t, int32_t>;

void ExpectSameRank(const Rank& loaded, const Rank& simulated, bool distributed_info) {
  SCOPED_TRACE("rank " + std::to_string(simulated.rank));
  EXPECT_EQ(loaded.rank, simulated.rank);
  // The loader keeps the path it read; the writer names the file alone.
  EXPECT_EQ(std::filesystem::path(loaded.source_path).filename().string(), simulated.source_path);
  if (distributed_info) {
    EXPECT_EQ(loaded.world_size, simulated.world_size);
    EXPECT_EQ(loaded.backend, simulated.backend);
    // The trace root's host_name, which only the object layouts have.
    EXPECT_EQ(loaded.host, simulated.host);
  }
  EXPECT_EQ(Timelines(loaded), Timelines(simulated));
  EXPECT_EQ(Annotations(loaded, false), Annotations(simulated, false));
  // The simulator keeps ProfilerStep ranges in `steps` only; the reader records
  // each as a step and as a CPU annotation on the main thread.
  EXPECT_TRUE(Annotations(simulated, true).empty());
  std::vector<StepView> loaded_steps;
  std::vector<StepView> simulated_steps;
  std::vector<AnnotationView> step_annotations;
  for (const ProfilerStep& step : loaded.steps) {
    loaded_steps.emplace_back(step.number, step.start, step.end);
  }
  for (const ProfilerStep& step : simulated.steps) {
    simulated_steps.emplace_back(step.number, step.start, step.end);
    step_annotations.emplace_back(step.start, step.end,
                                  "ProfilerStep#" + std::to_string(step.number),
                                  static_cast<int>(AnnotationScope::kCpu), -1, simulated.pid);
  }
  EXPECT_EQ(loaded_steps, simulated_steps);
  EXPECT_EQ(Annotations(loaded, true), step_annotations);
  std::vector<MemoryView> loaded_memory;
  std::vector<MemoryView> simulated_memory;
  for (const MemorySample& sample : loaded.memory) {
    loaded_memory.emplace_back(sample.time, sample.allocated_bytes, sample.reserved_bytes,
                               sample.device);
  }
  for (const MemorySample& sample : simulated.memory) {
    simulated_memory.emplace_back(sample.time, sample.allocated_bytes, sample.reserved_bytes,
                                  sample.device);
  }
  EXPECT_EQ(loaded_memory, simulated_memory);
}

// Jitter makes kernel times odd numbers of ns, clock offsets give each rank its
// own clock, and a slow link, memory, W ops and GPU annotations exercise every
// part of the model.
Config RoundTripConfig(Schedule schedule, AnnotationStyle annotations) {
  int32_t v = schedule == Schedule::kInterleaved1F1B ? 2 : 1;
  Config config = testing::IdealConfig(schedule, 3, 3 * v, 1000'000, 2000'000, v);
  for (StageCost& cost : config.costs) cost.weight_grad = 700'000;
  config.iterations = 2;
  config.launch_gap_ns = 5'000;
  config.optimizer_ns = 300'001;
  config.activation_bytes = int64_t{16} << 20;
  config.link = Link{100.0, 5'000};
  config.link_overrides.push_back({1, 2, Link{25.0, 5'000}});
  config.jitter = 0.05;
  config.seed = 7;
  config.clock_offsets_ns = {0, 1'234'567, -7'654'321};
  config.ranks_per_host = 1;  // three hosts, each its own clock
  config.weights_bytes = {int64_t{512} << 20, int64_t{256} << 20, int64_t{384} << 20};
  config.activation_stash_bytes = int64_t{24} << 20;
  config.annotations = annotations;
  config.start_time_ns = 1'700'000'000'123'456'789;
  return config;
}

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
