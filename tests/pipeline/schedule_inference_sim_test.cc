// Schedule inference on simulated jobs: every family, p in {2,4,8}, m in {1,4,8,32}, balanced
// and with one stage 10% slower, with no annotations, GPU `PP:{stage}F{mb}` annotations, CPU
// `Forward {mb}` annotations and stageless CPU `PP:F{mb}` annotations, with iterations marked by
// profiler steps, by an --iteration-marker annotation or by nothing (the repeating schedule),
// against the simulator's own Truth (its config for p, v, m, family and stage placement; its
// records for per-stage op times and the slowest stage).
#include <algorithm>
#include <cstdint>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "pipeline/schedule_inference.h"
#include "schedule_engine/sim_test_util.h"
#include "support/job_helpers.h"
#include "synth/synthetic_job.h"

namespace bubblescope {
namespace {

using sim::AnnotationStyle;
using sim::Schedule;
using sim::testing::Marking;
using ::testing::HasSubstr;

struct Case {
  Schedule schedule;
  int32_t p;
  int32_t m;
  AnnotationStyle annotations;
  bool imbalanced = false;  // one stage 10% slower in F, B and W than the others
  Marking marking = Marking::kProfilerSteps;
  int32_t v = 0;  // chunks per rank; 0: 2 for interleaved, else 1
};

// The heavy stage of an imbalanced case: a different one across the grid, never always the last.
int32_t HeavyStage(const Case& c) { return (3 * c.m + 1) % c.p; }

// With one microbatch 1f1b runs exactly gpipe's order, which is how it is reported.
std::string ExpectedFamily(Schedule schedule, int32_t m) {
  if (schedule == Schedule::kZeroBubbleH1) return "zb";
  if (schedule == Schedule::k1F1B && m == 1) return "gpipe";
  return std::string(sim::ScheduleName(schedule));
}

// A job with real-looking timing: link latency, launch gaps, an optimizer step, jitter, two
// profiler steps, and a stage -> rank permutation so rank numbers say nothing about stages.
sim::Config MakeConfig(const Case& c) {
  sim::Config config;
  config.schedule = c.schedule;
  config.stages = c.p;
  config.microbatches = c.m;
  config.virtual_stages = c.v > 0 ? c.v : c.schedule == Schedule::kInterleaved1F1B ? 2 : 1;
  config.iterations = 2;
  config.costs.assign(static_cast<size_t>(c.p), sim::StageCost{4000, 8000, 3000});
  if (c.imbalanced) config.costs[static_cast<size_t>(HeavyStage(c))] = {4400, 8800, 3300};
  config.kernels_per_op = 2;
  config.activation_bytes = 1 << 16;
  config.link = sim::Link{100.0, 1500};
  config.launch_gap_ns = 30;
  config.optimizer_ns = 2500;
  config.jitter = 0.05;
  config.seed = static_cast<uint64_t>(c.p * 1000 + c.m);
  config.annotations = c.annotations;
  // Reverse the ranks and swap the first two: stage 0 never runs on rank 0.
  for (int32_t stage = 0; stage < c.p; ++stage) config.stage_to_rank.push_back(c.p - 1 - stage);
  std::swap(config.stage_to_rank[0], config.stage_to_rank[1]);
  return config;
}

void ExpectOpStats(const schedule_inference::OpStats& got, const sim::OpTimeStats& want,
                   const char* what) {
  SCOPED_TRACE(what);
  EXPECT_EQ(got.count, want.count);
  EXPECT_DOUBLE_EQ(got.mean_ns, want.mean_ns);
  EXPECT_EQ(got.p90_ns, want.p90_ns);
}

void CheckCase(const Case& c) {
  SCOPED_TRACE(std::string(sim::ScheduleName(c.schedule)) + " p=" + std::to_string(c.p) +
               " m=" + std::to_string(c.m) + " v=" + std::to_string(c.v) +
               " annotations=" + std::string(sim::AnnotationStyleName(c.annotations)) +
               (c.imbalanced ? " imbalanced" : "") +
               " iterations: " + sim::testing::MarkingName(c.marking));
  const sim::Config config = MakeConfig(c);
  absl::StatusOr<sim::Simulation> simulation = sim::Simulate(config);
  ASSERT_TRUE(simulation.ok()) << simulation.status();
  const sim::Truth& truth = simulation->truth;

  iterations::Options options;
  options.iteration_marker = sim::testing::Remark(c.marking, simulation->trace);
  absl::StatusOr<schedule_inference::Result> result = testing::ShapeOf(simulation->trace, options);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->p, c.p);
  EXPECT_EQ(result->v, config.virtual_stages);
  EXPECT_EQ(result->m, c.m);
  const std::string family = ExpectedFamily(c.schedule, c.m);
  EXPECT_EQ(schedule_inference::ScheduleFamilyName(result->family), family);
  using schedule_inference::FamilyRule;
  if (family == "1f1b" || family == "interleaved") {
    EXPECT_EQ(result->family_rule, FamilyRule::kBackwardBeforeLastForward);
  } else if (family == "gpipe") {
    EXPECT_EQ(result->family_rule, c.m * config.virtual_stages == 1 ? FamilyRule::kOneMicrobatch
                                                                    : FamilyRule::kForwardsFirst);
  }
  EXPECT_EQ(result->stage_order, config.stage_to_rank);
  std::vector<int32_t> placement;
  for (int32_t chunk = 0; chunk < config.virtual_stages; ++chunk) {
    placement.insert(placement.end(), config.stage_to_rank.begin(), config.stage_to_rank.end());
  }
  EXPECT_EQ(result->virtual_stage_ranks, placement);
  const bool staged =
      c.annotations == AnnotationStyle::kPpGpu || c.annotations == AnnotationStyle::kPpMirrored;
  EXPECT_EQ(pipeline::ShapeSourceName(result->stage_order_source), staged ? "annotations" : "p2p");
  EXPECT_EQ(pipeline::ShapeSourceName(result->schedule_source),
            c.annotations == AnnotationStyle::kNone ? "p2p" : "annotations");
  if (c.m == 1 && c.schedule != Schedule::kForwardOnly && c.schedule != Schedule::kZeroBubbleH1) {
    EXPECT_THAT(result->notes, ::testing::Contains(HasSubstr("m = 1")));
  }

  ASSERT_EQ(result->stages.size(), truth.per_stage.size());
  for (size_t stage = 0; stage < truth.per_stage.size(); ++stage) {
    SCOPED_TRACE("stage " + std::to_string(stage));
    const sim::StageTruth& want = truth.per_stage[stage];
    const schedule_inference::StageFigures& got = result->stages[stage];
    EXPECT_EQ(got.rank, want.rank);
    ExpectOpStats(got.forward, want.forward, "forward");
    ExpectOpStats(got.backward, want.backward, "backward");
    ExpectOpStats(got.weight_grad, want.weight_grad, "weight_grad");
    EXPECT_DOUBLE_EQ(got.mean_total_ns, want.mean_total_ns);
  }
  EXPECT_EQ(result->slowest_stage, truth.slowest_stage);
  if (c.imbalanced) {
    // 10% above the others in every op, far more than the 5% jitter moves a mean.
    EXPECT_EQ(result->slowest_stage, HeavyStage(c));
    EXPECT_EQ(result->slowest_rank, config.stage_to_rank[static_cast<size_t>(HeavyStage(c))]);
  }
}

void CheckJobs(Schedule schedule, const std::vector<sim::testing::GridJob>& jobs) {
  for (const sim::testing::GridJob& job : jobs) {
    for (AnnotationStyle style :
         {AnnotationStyle::kNone, AnnotationStyle::kPpGpu, AnnotationStyle::kPpCpu,
          AnnotationStyle::kPpShortCpu, AnnotationStyle::kPpMirrored}) {
      for (bool imbalanced : {false, true}) {
        for (Marking marking : sim::testing::kAllMarkings) {
          CheckCase(Case{schedule, job.p, job.m, style, imbalanced, marking, job.v});
        }
      }
    }
  }
}

void CheckFamily(Schedule schedule) { CheckJobs(schedule, sim::testing::GridJobs(schedule)); }

// Stageless annotations when one step spans all three simulated iterations (a marker that
// matches once, as when no iteration boundaries are found): the microbatch ids repeat three
// times, yet v and the family come out right and m counts one pass. Training schedules only:
// without a backward, v chunks and v passes look the same (docs/schedule-inference.md).
TEST(ScheduleInferenceSimTest, StagelessAnnotationsInAStepOfSeveralIterations) {
  const std::pair<Schedule, int32_t> schedules[] = {{Schedule::kGpipe, 1},
                                                    {Schedule::kGpipe, 2},
                                                    {Schedule::k1F1B, 1},
                                                    {Schedule::kInterleaved1F1B, 2},
                                                    {Schedule::kZeroBubbleH1, 1}};
  for (const auto& [schedule, v] : schedules) {
    for (AnnotationStyle style : {AnnotationStyle::kPpCpu, AnnotationStyle::kPpShortCpu}) {
      Case c{schedule, 4, 8, style};
      c.v = v;
      SCOPED_TRACE(std::string(sim::ScheduleName(schedule)) + " v=" + std::to_string(v) + " " +
                   std::string(sim::AnnotationStyleName(style)));
      sim::Config config = MakeConfig(c);
      config.iterations = 3;
      absl::StatusOr<sim::Simulation> simulation = sim::Simulate(config);
      ASSERT_TRUE(simulation.ok()) << simulation.status();
      for (Rank& rank : simulation->trace.ranks) {
        rank.annotations.insert(rank.annotations.begin(),
                                Annotation{.start = 0,
                                           .end = 1,
                                           .name = rank.names.Intern("whole run"),
                                           .scope = AnnotationScope::kCpu,
                                           .device = -1,
                                           .thread_or_stream = rank.pid});
        rank.steps.clear();
      }
      iterations::Options options;
      options.iteration_marker = "^whole run$";
      absl::StatusOr<schedule_inference::Result> result =
          testing::ShapeOf(simulation->trace, options);
      ASSERT_TRUE(result.ok()) << result.status();
      EXPECT_EQ(result->m, 8);
      EXPECT_EQ(result->v, config.virtual_stages);
      EXPECT_EQ(schedule_inference::ScheduleFamilyName(result->family),
                ExpectedFamily(schedule, 8));
      EXPECT_EQ(result->stage_order, config.stage_to_rank);
      EXPECT_THAT(result->notes, ::testing::Contains(HasSubstr(": 3 passes")));
    }
  }
}

TEST(ScheduleInferenceSimTest, Gpipe) { CheckFamily(Schedule::kGpipe); }
TEST(ScheduleInferenceSimTest, OneFOneB) { CheckFamily(Schedule::k1F1B); }
TEST(ScheduleInferenceSimTest, Interleaved) { CheckFamily(Schedule::kInterleaved1F1B); }
TEST(ScheduleInferenceSimTest, ZeroBubbleH1) { CheckFamily(Schedule::kZeroBubbleH1); }
TEST(ScheduleInferenceSimTest, ForwardOnly) { CheckFamily(Schedule::kForwardOnly); }
// GPipe over v = 2 and 3 chunks per rank (torch's ScheduleLoopedBFS): reported as gpipe with its
// v, told from interleaved 1F1B by the last virtual stage's rank running every forward first.
TEST(ScheduleInferenceSimTest, LoopedGpipe) {
  CheckJobs(Schedule::kGpipe, sim::testing::LoopedGpipeJobs());
}

}  // namespace
}  // namespace bubblescope
