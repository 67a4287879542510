// The measured schedule op by op, against the simulator's own records: every op the engine ran
// appears once, at its first kernel start and last kernel end, with the engine's type, chunk and
// microbatch, labelled from annotations where the job has them and from the schedule's program
// where it does not; ops of one iteration share one bubble iteration.
#include "pipeline/op_timeline.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "loader/trace_loader.h"
#include "schedule_engine/sim_test_util.h"
#include "support/job_helpers.h"
#include "synth/synthetic_job.h"

namespace bubblescope {
namespace {

using sim::AnnotationStyle;
using sim::Schedule;

pipeline::OpType TypeOf(sim::OpType type) {
  switch (type) {
    case sim::OpType::kForward:
      return pipeline::OpType::kForward;
    case sim::OpType::kBackward:
      return pipeline::OpType::kBackward;
    case sim::OpType::kWeightGrad:
      return pipeline::OpType::kWeightGrad;
  }
  return pipeline::OpType::kForward;
}

struct Case {
  Schedule schedule;
  int32_t p;
  int32_t m;
  AnnotationStyle annotations;
};

void CheckCase(const Case& c) {
  SCOPED_TRACE(std::string(sim::ScheduleName(c.schedule)) + " p=" + std::to_string(c.p) +
               " m=" + std::to_string(c.m) +
               " annotations=" + std::string(sim::AnnotationStyleName(c.annotations)));
  sim::Config config;
  config.schedule = c.schedule;
  config.stages = c.p;
  config.microbatches = c.m;
  config.virtual_stages = c.schedule == Schedule::kInterleaved1F1B ? 2 : 1;
  config.iterations = 3;
  config.costs.assign(static_cast<size_t>(c.p), sim::StageCost{4000, 8000, 3000});
  config.kernels_per_op = 2;
  config.activation_bytes = 1 << 16;
  config.link = sim::Link{100.0, 1500};
  config.launch_gap_ns = 30;
  config.optimizer_ns = 2500;
  config.jitter = 0.05;
  config.annotations = c.annotations;
  for (int32_t stage = 0; stage < c.p; ++stage) config.stage_to_rank.push_back(c.p - 1 - stage);
  absl::StatusOr<sim::Simulation> simulation = sim::Simulate(config);
  ASSERT_TRUE(simulation.ok()) << simulation.status();
  const job::Result job = testing::AnalyzeJob(simulation->trace);
  ASSERT_EQ(job.pipelines.size(), 1u);
  const job::Pipeline& pipeline = job.pipelines[0];
  ASSERT_TRUE(pipeline.shape.has_value()) << pipeline.shape_problem;
  const op_timeline::Result& timeline = pipeline.op_timeline;
  EXPECT_EQ(timeline.unlabelled, 0);

  const auto ops_per_stage = static_cast<size_t>(c.m * config.virtual_stages *
                                                 (c.schedule == Schedule::kForwardOnly    ? 1
                                                  : c.schedule == Schedule::kZeroBubbleH1 ? 3
                                                                                          : 2) *
                                                 config.iterations);
  ASSERT_EQ(timeline.ops.size(), ops_per_stage * static_cast<size_t>(c.p));
  for (int32_t stage = 0; stage < c.p; ++stage) {
    SCOPED_TRACE("stage " + std::to_string(stage));
    const int32_t rank = config.stage_to_rank[static_cast<size_t>(stage)];
    const std::vector<sim::OpRecord>& records =
        simulation->records.ranks[static_cast<size_t>(rank)].ops;
    std::vector<op_timeline::TimelineOp> measured;
    for (const op_timeline::TimelineOp& op : timeline.ops) {
      if (op.stage == stage) measured.push_back(op);
    }
    ASSERT_EQ(measured.size(), records.size());
    // Both in start order: the engine's records run in launch order, which on one compute
    // stream is start order.
    std::vector<sim::OpRecord> by_start = records;
    std::stable_sort(
        by_start.begin(), by_start.end(),
        [](const sim::OpRecord& a, const sim::OpRecord& b) { return a.start < b.start; });
    // The reference clock is the first stage's; the offset alignment finds for this rank is the
    // same for every op, so each op's start minus the first one's is exact.
    const TimeNs shift = measured.front().start - by_start.front().start;
    std::map<int32_t, int64_t> iteration_of;  // engine iteration -> bubble iteration number
    std::set<int64_t> numbers;
    for (size_t k = 0; k < measured.size(); ++k) {
      const op_timeline::TimelineOp& got = measured[k];
      const sim::OpRecord& want = by_start[k];
      SCOPED_TRACE("op " + std::to_string(k));
      EXPECT_EQ(got.rank, rank);
      EXPECT_EQ(got.type, TypeOf(want.op.type));
      EXPECT_EQ(got.microbatch, want.op.microbatch);
      EXPECT_EQ(got.chunk, want.op.chunk);
      EXPECT_EQ(got.label, c.annotations == AnnotationStyle::kNone
                               ? op_timeline::LabelSource::kSchedule
                               : op_timeline::LabelSource::kAnnotation);
      EXPECT_EQ(got.start - shift, want.start);
      EXPECT_EQ(got.end - shift, want.end);
      EXPECT_GE(got.iteration, 0);
      const auto [it, inserted] = iteration_of.emplace(want.iteration, got.iteration);
      if (inserted) numbers.insert(got.iteration);
      EXPECT_EQ(it->second, got.iteration);
    }
    EXPECT_EQ(numbers.size(), static_cast<size_t>(config.iterations));
  }
}

TEST(OpTimelineTest, EveryOpOfEveryScheduleIsPlacedAndLabelledAsTheEngineRanIt) {
  for (Schedule schedule : {Schedule::kGpipe, Schedule::k1F1B, Schedule::kInterleaved1F1B,
                            Schedule::kZeroBubbleH1, Schedule::kForwardOnly}) {
    for (AnnotationStyle style :
         {AnnotationStyle::kNone, AnnotationStyle::kPpGpu, AnnotationStyle::kPpCpu}) {
      CheckCase(Case{schedule, 4, 8, style});
    }
  }
}

TEST(OpTimelineTest, SmallAndDeepPipelines) {
  CheckCase(Case{Schedule::k1F1B, 2, 1, AnnotationStyle::kNone});
  CheckCase(Case{Schedule::k1F1B, 8, 32, AnnotationStyle::kNone});
  CheckCase(Case{Schedule::kInterleaved1F1B, 8, 16, AnnotationStyle::kNone});
}

// The ideal run's schedule: the program of every stage, each op once, F before its B.
TEST(OpTimelineTest, IdealScheduleHoldsEveryOpOfOneIteration) {
  sim::Config config;
  config.schedule = Schedule::k1F1B;
  config.stages = 4;
  config.microbatches = 8;
  config.iterations = 2;
  config.costs.assign(4, sim::StageCost{1'000'000, 2'000'000, 0});
  absl::StatusOr<sim::Simulation> simulation = sim::Simulate(config);
  ASSERT_TRUE(simulation.ok()) << simulation.status();
  const job::Result job = testing::AnalyzeJob(simulation->trace);
  ASSERT_EQ(job.pipelines.size(), 1u);
  ASSERT_TRUE(job.pipelines[0].ideal.has_value());
  const pipeline::IdealBubble& ideal = *job.pipelines[0].ideal;
  ASSERT_EQ(ideal.schedule.size(), 4u * 8u * 2u);
  // Equal stages F=1 ms, B=2 ms: the iteration is (m + p - 1) * (F + B) = 11 * 3 ms.
  EXPECT_EQ(ideal.schedule_ns, 33'000'000);
  std::map<std::pair<int32_t, int32_t>, TimeNs> forward_end;
  for (const pipeline::IdealOp& op : ideal.schedule) {
    EXPECT_EQ(op.end - op.start, op.type == pipeline::OpType::kForward ? 1'000'000 : 2'000'000);
    if (op.type == pipeline::OpType::kForward) forward_end[{op.stage, op.microbatch}] = op.end;
  }
  for (const pipeline::IdealOp& op : ideal.schedule) {
    if (op.type == pipeline::OpType::kBackward) {
      EXPECT_GE(op.start, (forward_end[{op.stage, op.microbatch}]))
          << op.stage << " " << op.microbatch;
    }
  }
}

}  // namespace
}  // namespace bubblescope

namespace bubblescope {
namespace {

// Real PyTorch CPU runs (sample_traces/torch_cpu, torch.distributed.pipelining): every op is
// labelled by its own `PP:...` or `Forward {mb}` range, and in each complete iteration each
// stage runs every forward and every backward (microbatch, chunk) exactly once. The pipeline's
// windows overlap on these runs (the last stage posts its next receive while the first still
// runs the last backward ops), so an op placed by the window alone lands in the next iteration.
TEST(OpTimelineTest, RealRunsLabelEveryOpFromItsAnnotation) {
  for (const char* set : {"1f1b_p4_m8", "1f1b_p4_m8_heavy2", "dp2_1f1b_p2_m4", "dualpipev_p2_v2_m8",
                          "gpipe_p2_m4", "interleaved_p2_v2_m4", "zb_p2_v2_m4", "zbv_p2_v2_m4"}) {
    SCOPED_TRACE(set);
    LoadOptions options;
    options.jobs = 2;
    absl::StatusOr<Trace> trace = LoadTrace(
        {std::string(BUBBLESCOPE_SOURCE_DIR) + "/sample_traces/torch_cpu/" + set}, options);
    ASSERT_TRUE(trace.ok()) << trace.status();
    const job::Result job = testing::AnalyzeJob(*trace);
    ASSERT_FALSE(job.pipelines.empty());
    for (const job::Pipeline& pipeline : job.pipelines) {
      ASSERT_TRUE(pipeline.shape.has_value());
      const schedule_inference::Result& shape = *pipeline.shape;
      EXPECT_EQ(pipeline.op_timeline.unlabelled, 0);
      for (const bubble::IterationFigures& iteration : pipeline.bubble.iterations) {
        if (!iteration.complete) continue;
        for (int32_t stage = 0; stage < shape.p; ++stage) {
          for (pipeline::OpType type : {pipeline::OpType::kForward, pipeline::OpType::kBackward}) {
            std::set<std::pair<int32_t, int32_t>> ops;
            int64_t count = 0;
            for (const op_timeline::TimelineOp& op : pipeline.op_timeline.ops) {
              if (op.stage != stage || op.iteration != iteration.number || op.type != type) {
                continue;
              }
              ++count;
              ops.insert({op.microbatch, op.chunk});
            }
            const std::string where =
                absl::StrCat("iteration ", iteration.number, " stage ", stage,
                             type == pipeline::OpType::kForward ? " forward" : " backward");
            EXPECT_EQ(count, int64_t{shape.m} * shape.v) << where;
            EXPECT_EQ(ops.size(), static_cast<size_t>(count)) << where;
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace bubblescope
