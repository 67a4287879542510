// Schedule inference on the six real PyTorch CPU pipeline runs in sample_traces/torch_cpu. The
// expected p, v, m, family and stage placement are each run's truth.json (also the README table);
// the heavy run's slowest stage is the one record.py built with twice the layers. Also the
// generated GPU job in sample_traces/synthetic_pipeline_4rank (1F1B, m = 4, per its README),
// whose `PP:` ranges Kineto-style exist twice, on the CPU and on the GPU.
#include <cstdint>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "loader/trace_loader.h"
#include "pipeline/schedule_inference.h"
#include "readers/kineto_reader.h"
#include "simdjson.h"
#include "support/job_helpers.h"
#include "writers/kineto_writer.h"

namespace bubblescope {
namespace {

struct RealRun {
  std::string dir;
  int32_t p, v, m;
  std::string family;
  std::vector<int32_t> virtual_stage_ranks;  // truth.json stage_order
  std::string stage_order_source;
  std::string schedule_source;
};

// `without_steps`: the ProfilerStep ranges removed, so the iterations come from the repeating
// schedule; m must still be one step's microbatches.
// `set`: the directory under sample_traces/ holding the run `dir`.
schedule_inference::Result Infer(const std::string& dir, bool without_steps = false,
                                 const std::string& set = "torch_cpu") {
  LoadOptions options;
  options.jobs = 2;
  absl::StatusOr<Trace> trace = LoadTrace(
      {std::string(BUBBLESCOPE_SOURCE_DIR) + "/sample_traces/" + set + "/" + dir}, options);
  EXPECT_TRUE(trace.ok()) << trace.status();
  if (!trace.ok()) return {};
  if (without_steps) {
    for (Rank& rank : trace->ranks) rank.steps.clear();
  }
  absl::StatusOr<schedule_inference::Result> result = testing::ShapeOf(*trace);
  EXPECT_TRUE(result.ok()) << result.status();
  return result.ok() ? *std::move(result) : schedule_inference::Result{};
}

// The training runs whose every stage runs one forward, backward (and W for zb) per microbatch.
const RealRun kTrainingRuns[] = {
    {"gpipe_p2_m4", 2, 1, 4, "gpipe", {0, 1}, "p2p", "annotations"},
    {"1f1b_p4_m8", 4, 1, 8, "1f1b", {0, 1, 2, 3}, "p2p", "p2p"},
    {"interleaved_p2_v2_m4", 2, 2, 4, "interleaved", {0, 1, 0, 1}, "annotations", "annotations"},
    {"zb_p2_v2_m4", 2, 2, 4, "zb", {0, 1, 0, 1}, "annotations", "annotations"},
    {"zbv_p2_v2_m4", 2, 2, 4, "zb", {0, 1, 1, 0}, "annotations", "annotations"},
    {"1f1b_p4_m8_heavy2", 4, 1, 8, "1f1b", {0, 1, 2, 3}, "p2p", "p2p"}};

// Activation checkpointing: the recomputed forward runs inside each backward, which must still
// count as one backward per microbatch.
const RealRun kRecomputeRuns[] = {
    {"1f1b_p2_m4_recompute", 2, 1, 4, "1f1b", {0, 1}, "p2p", "p2p"},
    {"1f1b_p2_m4_recompute_nr", 2, 1, 4, "1f1b", {0, 1}, "p2p", "p2p"}};

void CheckRun(const RealRun& run, const schedule_inference::Result& result) {
  SCOPED_TRACE(run.dir);
  EXPECT_EQ(result.p, run.p);
  EXPECT_EQ(result.v, run.v);
  EXPECT_EQ(result.m, run.m);
  EXPECT_EQ(schedule_inference::ScheduleFamilyName(result.family), run.family);
  EXPECT_EQ(result.virtual_stage_ranks, run.virtual_stage_ranks);
  EXPECT_EQ(pipeline::ShapeSourceName(result.stage_order_source), run.stage_order_source);
  EXPECT_EQ(pipeline::ShapeSourceName(result.schedule_source), run.schedule_source);
  // Two profiled steps: every stage ran m·v forwards and as many backwards per step.
  ASSERT_EQ(result.stages.size(), static_cast<size_t>(run.p));
  for (const schedule_inference::StageFigures& stage : result.stages) {
    SCOPED_TRACE("stage " + std::to_string(stage.stage));
    EXPECT_EQ(stage.forward.count, 2 * run.m * run.v);
    EXPECT_EQ(stage.backward.count, 2 * run.m * run.v);
    EXPECT_EQ(stage.weight_grad.count, run.family == "zb" ? 2 * run.m * run.v : 0);
    EXPECT_GT(stage.forward.mean_ns, 0.0);
    EXPECT_GT(stage.backward.mean_ns, 0.0);
  }
}

TEST(ScheduleInferenceRealTest, GpipeFromForwardBackwardRangesAndReceiveOrder) {
  CheckRun({"gpipe_p2_m4", 2, 1, 4, "gpipe", {0, 1}, "p2p", "annotations"}, Infer("gpipe_p2_m4"));
}

TEST(ScheduleInferenceRealTest, OneFOneBFromGlooTrafficAlone) {
  CheckRun({"1f1b_p4_m8", 4, 1, 8, "1f1b", {0, 1, 2, 3}, "p2p", "p2p"}, Infer("1f1b_p4_m8"));
}

TEST(ScheduleInferenceRealTest, InterleavedFromPpRanges) {
  CheckRun(
      {"interleaved_p2_v2_m4", 2, 2, 4, "interleaved", {0, 1, 0, 1}, "annotations", "annotations"},
      Infer("interleaved_p2_v2_m4"));
}

TEST(ScheduleInferenceRealTest, ZeroBubbleFromPpRanges) {
  CheckRun({"zb_p2_v2_m4", 2, 2, 4, "zb", {0, 1, 0, 1}, "annotations", "annotations"},
           Infer("zb_p2_v2_m4"));
}

TEST(ScheduleInferenceRealTest, ZeroBubbleVPlacementFromPpRanges) {
  CheckRun({"zbv_p2_v2_m4", 2, 2, 4, "zb", {0, 1, 1, 0}, "annotations", "annotations"},
           Infer("zbv_p2_v2_m4"));
}

TEST(ScheduleInferenceRealTest, RecomputedForwardsStayInsideTheirBackward) {
  for (const RealRun& run : kRecomputeRuns) CheckRun(run, Infer(run.dir));
}

TEST(ScheduleInferenceRealTest, WithoutProfilerStepsEveryRunKeepsItsShape) {
  for (const RealRun& run : kTrainingRuns) CheckRun(run, Infer(run.dir, /*without_steps=*/true));
}

TEST(ScheduleInferenceRealTest, HeavyStageIsTheSlowest) {
  const schedule_inference::Result result = Infer("1f1b_p4_m8_heavy2");
  CheckRun({"1f1b_p4_m8_heavy2", 4, 1, 8, "1f1b", {0, 1, 2, 3}, "p2p", "p2p"}, result);
  EXPECT_EQ(result.slowest_stage, 2);
  EXPECT_EQ(result.slowest_rank, 2);
  EXPECT_GT(result.slowest_excess_ns, 0.0);
}

// Each run re-exported as torch built without Kineto writes it (bare array, no categories, the
// pid "CPU functions", each rank's times from its own zero: kineto_writer's legacy flavour) must
// keep its shape, and its bubble within 0.5 points of the Kineto original's, whose ranks share
// one clock: here the offsets must be recovered from the traffic.
TEST(ScheduleInferenceRealTest, LegacyExportsKeepEveryRunsShapeAndBubble) {
  KinetoWriteOptions legacy;
  legacy.layout = KinetoLayout::kBareArray;
  legacy.legacy_cpu_functions = true;
  for (const RealRun& run : kTrainingRuns) {
    SCOPED_TRACE(run.dir);
    LoadOptions options;
    options.jobs = 1;
    absl::StatusOr<Trace> original = LoadTrace(
        {std::string(BUBBLESCOPE_SOURCE_DIR) + "/sample_traces/torch_cpu/" + run.dir}, options);
    ASSERT_TRUE(original.ok()) << original.status();
    Trace exported;
    for (const Rank& rank : original->ranks) {
      const simdjson::padded_string json(KinetoJson(rank, legacy));
      ASSERT_EQ(json.data()[0], '[');
      ASSERT_EQ(std::string_view(json.data(), json.size()).find("\"cat\": \"user_annotation\""),
                std::string_view::npos);
      KinetoReader reader;
      Rank read;
      ASSERT_TRUE(reader.Read("legacy.json", json, &read).ok());
      read.rank = rank.rank;  // from the file name, as the loader does for files without it
      exported.ranks.push_back(std::move(read));
    }
    absl::StatusOr<schedule_inference::Result> shape = testing::ShapeOf(exported);
    ASSERT_TRUE(shape.ok()) << shape.status();
    CheckRun(run, *shape);
    const job::Result want = testing::AnalyzeJob(*original);
    const job::Result got = testing::AnalyzeJob(exported);
    ASSERT_EQ(want.pipelines.size(), 1u);
    ASSERT_EQ(got.pipelines.size(), 1u);
    EXPECT_NEAR(got.pipelines[0].bubble.bubble_fraction, want.pipelines[0].bubble.bubble_fraction,
                0.005);
  }
}

// Every range there is a CPU user_annotation and a gpu_user_annotation copy; read twice, the
// doubled forwards made the job look interleaved (v = 2).
TEST(ScheduleInferenceRealTest, MirroredGpuRangesCountOnce) {
  CheckRun({"synthetic_pipeline_4rank", 4, 1, 4, "1f1b", {0, 1, 2, 3}, "p2p", "annotations"},
           Infer("synthetic_pipeline_4rank", false, "."));
}

// DP×PP on gloo: two 2-stage pipelines on ranks {0,2} and {1,3}, whose ops record no peer.
// The ranks' pg_config lists both the pipeline groups and the data-parallel pairs {0,1}, {2,3};
// only the pipeline groups give each group a stage order (truth.json: pipelines, stage_order).
TEST(ScheduleInferenceRealTest, DataParallelPipelinesFromDeclaredProcessGroups) {
  LoadOptions options;
  options.jobs = 1;
  absl::StatusOr<Trace> trace = LoadTrace(
      {std::string(BUBBLESCOPE_SOURCE_DIR) + "/sample_traces/torch_cpu/dp2_1f1b_p2_m4"}, options);
  ASSERT_TRUE(trace.ok()) << trace.status();
  const job::Result job = testing::AnalyzeJob(*trace);
  ASSERT_EQ(job.pipelines.size(), 2u);
  const std::vector<int32_t> want[] = {{0, 2}, {1, 3}};
  for (size_t i = 0; i < 2; ++i) {
    SCOPED_TRACE(i);
    const job::Pipeline& pipeline = job.pipelines[i];
    EXPECT_EQ(pipeline.crossrank.pipeline.stage_order(), want[i]);
    ASSERT_TRUE(pipeline.shape.has_value()) << pipeline.shape_problem;
    EXPECT_EQ(pipeline.shape->p, 2);
    EXPECT_EQ(pipeline.shape->m, 4);
    EXPECT_EQ(pipeline.shape->v, 1);
    EXPECT_EQ(schedule_inference::ScheduleFamilyName(pipeline.shape->family), "1f1b");
    for (const schedule_inference::StageFigures& stage : pipeline.shape->stages) {
      EXPECT_EQ(stage.forward.count, 8);  // 4 microbatches in each of 2 profiled steps
      EXPECT_EQ(stage.backward.count, 8);
    }
  }
  EXPECT_TRUE(job.job.ranks_without_p2p.empty());
}

// torch's ScheduleDualPipeV: V placement, and forward/backward pairs of different stages run as
// one action, `PP:(0F3;3B1)OVERLAP_F_B`. Each action is an op, so every stage still counts
// m·v forwards and backwards per step; W ops follow only the split backwards, fewer than B.
// ScheduleGPipe.eval(): forwards only, though every rank still opens an empty "Backward {mb}"
// range per skipped backward. Read as an inference pass, not as gpipe training.
TEST(ScheduleInferenceRealTest, GpipeEvalIsForwardOnly) {
  const schedule_inference::Result result = Infer("gpipe_eval_p2_m4");
  EXPECT_EQ(result.p, 2);
  EXPECT_EQ(result.v, 1);
  EXPECT_EQ(result.m, 4);
  EXPECT_EQ(schedule_inference::ScheduleFamilyName(result.family), "fwd-only");
  EXPECT_EQ(result.virtual_stage_ranks, (std::vector<int32_t>{0, 1}));
  ASSERT_EQ(result.stages.size(), 2u);
  for (const schedule_inference::StageFigures& stage : result.stages) {
    EXPECT_EQ(stage.forward.count, 2 * 4);  // two profiled steps
    EXPECT_EQ(stage.backward.count, 0);
  }
}

TEST(ScheduleInferenceRealTest, DualPipeVOverlappedActionsCountAsOps) {
  const schedule_inference::Result result = Infer("dualpipev_p2_v2_m8");
  EXPECT_EQ(result.p, 2);
  EXPECT_EQ(result.v, 2);
  EXPECT_EQ(result.m, 8);
  EXPECT_EQ(schedule_inference::ScheduleFamilyName(result.family), "zb");
  EXPECT_EQ(result.virtual_stage_ranks, (std::vector<int32_t>{0, 1, 1, 0}));
  EXPECT_TRUE(result.stage_counts_fit);
  ASSERT_EQ(result.stages.size(), 2u);
  for (const schedule_inference::StageFigures& stage : result.stages) {
    SCOPED_TRACE(stage.stage);
    EXPECT_EQ(stage.forward.count, 2 * 8 * 2);  // two profiled steps
    EXPECT_EQ(stage.backward.count, 2 * 8 * 2);
    EXPECT_GT(stage.weight_grad.count, 0);
    EXPECT_LT(stage.weight_grad.count, stage.backward.count);
    EXPECT_GT(stage.forward.mean_ns, 0.0);
  }
}

}  // namespace
}  // namespace bubblescope
