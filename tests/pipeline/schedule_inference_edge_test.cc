// Schedule inference edge cases: an imbalanced stage, traces whose kernel names carry no phase,
// the v = 2 on two ranks ambiguity, and the op-name grammar.
#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "pipeline/annotation_ops.h"
#include "pipeline/schedule_inference.h"
#include "pipeline/stage_stats.h"
#include "support/job_helpers.h"
#include "support/timeline_fixtures.h"
#include "synth/synthetic_job.h"

namespace bubblescope {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;

sim::Config Job(sim::Schedule schedule, int32_t p, int32_t m, int32_t v = 1) {
  sim::Config config;
  config.schedule = schedule;
  config.stages = p;
  config.microbatches = m;
  config.virtual_stages = v;
  config.iterations = 1;
  config.costs.assign(static_cast<size_t>(p), sim::StageCost{3000, 6000, 0});
  config.activation_bytes = 4096;
  config.link = sim::Link{100.0, 500};
  config.launch_gap_ns = 20;
  return config;
}

sim::Simulation MustSimulate(const sim::Config& config) {
  absl::StatusOr<sim::Simulation> simulation = sim::Simulate(config);
  EXPECT_TRUE(simulation.ok()) << simulation.status();
  return simulation.ok() ? *std::move(simulation) : sim::Simulation{};
}

TEST(ScheduleInferenceEdgeTest, SlowestStageAndItsExcessWithTenPercentImbalance) {
  for (sim::AnnotationStyle style : {sim::AnnotationStyle::kNone, sim::AnnotationStyle::kPpGpu}) {
    sim::Config config = Job(sim::Schedule::k1F1B, 4, 8);
    config.annotations = style;
    config.stage_to_rank = {1, 3, 0, 2};
    // Stage 2 costs 10% more: per microbatch F + B = 9900 against 9000 elsewhere.
    config.costs[2] = sim::StageCost{3300, 6600, 0};
    const sim::Simulation simulation = MustSimulate(config);
    absl::StatusOr<schedule_inference::Result> result = testing::ShapeOf(simulation.trace);
    ASSERT_TRUE(result.ok()) << result.status();
    EXPECT_EQ(simulation.truth.slowest_stage, 2);
    EXPECT_EQ(result->slowest_stage, 2);
    EXPECT_EQ(result->slowest_rank, 0);
    // Mean over stages (9000·3 + 9900) / 4 = 9225; excess 675 ns = 7.3171%.
    EXPECT_DOUBLE_EQ(result->slowest_excess_ns, 675.0);
    EXPECT_NEAR(result->slowest_excess_percent, 100.0 * 675.0 / 9225.0, 1e-9);
  }
}

// Renames every compute kernel of the trace so no name says forward or backward.
void StripPhaseNames(Trace* trace) {
  for (Rank& rank : trace->ranks) {
    const NameId plain = rank.names.Intern("sm90_xmma_gemm_bf16");
    for (Timeline& timeline : rank.timelines) {
      for (Interval& interval : timeline.intervals) {
        if (interval.kind == IntervalKind::kComputeKernel) interval.name = plain;
      }
    }
  }
}

TEST(ScheduleInferenceEdgeTest, WithoutPhaseNamesTheShapeStillComesFromTraffic) {
  for (sim::Schedule schedule :
       {sim::Schedule::kGpipe, sim::Schedule::k1F1B, sim::Schedule::kInterleaved1F1B}) {
    const int32_t v = schedule == sim::Schedule::kInterleaved1F1B ? 2 : 1;
    sim::Config config = Job(schedule, 4, 8, v);
    config.stage_to_rank = {2, 0, 3, 1};
    sim::Simulation simulation = MustSimulate(config);
    StripPhaseNames(&simulation.trace);
    absl::StatusOr<schedule_inference::Result> result = testing::ShapeOf(simulation.trace);
    ASSERT_TRUE(result.ok()) << result.status();
    EXPECT_EQ(result->stage_order, config.stage_to_rank);
    EXPECT_EQ(result->m, 8);
    EXPECT_EQ(result->v, v);
    EXPECT_EQ(schedule_inference::ScheduleFamilyName(result->family),
              std::string(sim::ScheduleName(schedule)));
    // The names cannot tell forward from backward; the program fitted to the transfers does,
    // and the blocks two ops share are cut after the kernel count the lone ops of the same type
    // run: every op is the simulator's own.
    ASSERT_TRUE(result->op_fit.has_value());
    EXPECT_TRUE(result->op_fit->used);
    EXPECT_EQ(result->op_fit->placed, result->op_fit->program_ops);
    EXPECT_EQ(result->op_fit->weak, 0);
    ASSERT_EQ(result->stages.size(), simulation.truth.per_stage.size());
    for (size_t stage = 0; stage < result->stages.size(); ++stage) {
      const sim::StageTruth& want = simulation.truth.per_stage[stage];
      EXPECT_EQ(result->stages[stage].forward.count, want.forward.count);
      EXPECT_EQ(result->stages[stage].backward.count, want.backward.count);
      EXPECT_DOUBLE_EQ(result->stages[stage].forward.mean_ns, want.forward.mean_ns);
      EXPECT_DOUBLE_EQ(result->stages[stage].backward.mean_ns, want.backward.mean_ns);
    }
    EXPECT_EQ(result->slowest_stage, simulation.truth.slowest_stage);
  }
}

// What a PyTorch GPU trace shows instead of telling kernel names: the backward kernels are
// launched from inside `autograd::engine::evaluate_function` ops. Wraps each launch of a kernel
// whose (simulated) name says backward in such an op on its own CPU thread, then strips the names.
void MoveBackwardLaunchesIntoAutogradOps(Trace* trace) {
  for (Rank& rank : trace->ranks) {
    absl::flat_hash_set<int64_t> backward;
    for (const Timeline& timeline : rank.timelines) {
      for (const Interval& interval : timeline.intervals) {
        if (interval.kind == IntervalKind::kComputeKernel &&
            rank.name(interval.name).find("backward") != std::string_view::npos) {
          backward.insert(interval.correlation);
        }
      }
    }
    const NameId autograd = rank.names.Intern("autograd::engine::evaluate_function: MmBackward0");
    for (Timeline& timeline : rank.timelines) {
      if (timeline.kind != TimelineKind::kCpuThread) continue;
      std::vector<Interval> ops;
      for (const Interval& interval : timeline.intervals) {
        if (interval.kind != IntervalKind::kRuntime || !backward.contains(interval.correlation)) {
          continue;
        }
        Interval op;
        op.start = interval.start;
        op.end = interval.end;
        op.name = autograd;
        op.kind = IntervalKind::kCpuOp;
        ops.push_back(op);
      }
      timeline.intervals.insert(timeline.intervals.end(), ops.begin(), ops.end());
      std::stable_sort(timeline.intervals.begin(), timeline.intervals.end(),
                       [](const Interval& a, const Interval& b) {
                         return a.start != b.start ? a.start < b.start : a.end > b.end;
                       });
    }
  }
  StripPhaseNames(trace);
}

TEST(ScheduleInferenceEdgeTest, BackwardKernelsFoundByTheirAutogradLaunch) {
  struct Shape {
    sim::Schedule schedule;
    int32_t p, m, v;
  };
  for (const Shape& shape :
       {Shape{sim::Schedule::kGpipe, 4, 8, 1}, Shape{sim::Schedule::k1F1B, 4, 8, 1},
        Shape{sim::Schedule::kInterleaved1F1B, 4, 8, 2},
        Shape{sim::Schedule::kInterleaved1F1B, 2, 4, 3}}) {
    SCOPED_TRACE(std::string(sim::ScheduleName(shape.schedule)) + " p=" + std::to_string(shape.p));
    sim::Config config = Job(shape.schedule, shape.p, shape.m, shape.v);
    config.costs[1] = sim::StageCost{3600, 7200, 0};
    sim::Simulation simulation = MustSimulate(config);
    MoveBackwardLaunchesIntoAutogradOps(&simulation.trace);
    absl::StatusOr<schedule_inference::Result> result = testing::ShapeOf(simulation.trace);
    ASSERT_TRUE(result.ok()) << result.status();
    EXPECT_EQ(result->m, shape.m);
    EXPECT_EQ(result->v, shape.v);
    EXPECT_EQ(schedule_inference::ScheduleFamilyName(result->family),
              std::string(sim::ScheduleName(shape.schedule)));
    ASSERT_EQ(result->stages.size(), static_cast<size_t>(shape.p));
    for (size_t stage = 0; stage < result->stages.size(); ++stage) {
      EXPECT_DOUBLE_EQ(result->stages[stage].forward.mean_ns,
                       simulation.truth.per_stage[stage].forward.mean_ns);
      EXPECT_DOUBLE_EQ(result->stages[stage].backward.mean_ns,
                       simulation.truth.per_stage[stage].backward.mean_ns);
    }
    EXPECT_EQ(result->slowest_stage, 1);
  }
}

TEST(ScheduleInferenceEdgeTest, InterleavedOnTwoRanksFromTheForwardCount) {
  for (int32_t v : {2, 3, 4}) {
    SCOPED_TRACE("v=" + std::to_string(v));
    sim::Config config = Job(sim::Schedule::kInterleaved1F1B, 2, 4, v);
    config.stage_to_rank = {1, 0};
    absl::StatusOr<schedule_inference::Result> result =
        testing::ShapeOf(MustSimulate(config).trace);
    ASSERT_TRUE(result.ok()) << result.status();
    // Rank 1 (stage 0) sends (2v - 1)·4 transfers to rank 0, and so does rank 0 back: the
    // traffic alone fits v = 1 with m = (2v - 1)·4 as well. Its v·4 forward ops settle it.
    EXPECT_EQ(result->v, v);
    EXPECT_EQ(result->m, 4);
    EXPECT_EQ(result->stage_order, config.stage_to_rank);
    EXPECT_EQ(schedule_inference::ScheduleFamilyName(result->family), "interleaved");
    EXPECT_THAT(
        result->notes,
        Contains(HasSubstr(absl::StrCat("v = ", v, " from the first stage's ", 4 * v,
                                        " forward ops against its ", (2 * v - 1) * 4, " sends"))));
  }
}

TEST(ScheduleInferenceEdgeTest, InterleavedOnTwoRanksWithoutPhaseNamesAssumesOneChunk) {
  sim::Config config = Job(sim::Schedule::kInterleaved1F1B, 2, 4, 2);
  sim::Simulation simulation = MustSimulate(config);
  StripPhaseNames(&simulation.trace);
  absl::StatusOr<schedule_inference::Result> result = testing::ShapeOf(simulation.trace);
  ASSERT_TRUE(result.ok()) << result.status();
  // 12 sends each way and no forward ops to count: v = 1 with m = 12 fits the traffic too.
  EXPECT_EQ(result->v, 1);
  EXPECT_EQ(result->m, 12);
  EXPECT_THAT(result->notes, Contains(HasSubstr("v = 1 assumed")));

  config.annotations = sim::AnnotationStyle::kPpGpu;
  simulation = MustSimulate(config);
  StripPhaseNames(&simulation.trace);
  result = testing::ShapeOf(simulation.trace);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->v, 2);
  EXPECT_EQ(result->m, 4);
  EXPECT_EQ(schedule_inference::ScheduleFamilyName(result->family), "interleaved");
}

// A rank whose file was cut short may have lost any of its ops (a whole stream's, when the writer
// grouped events by stream), so the shape says so; the same job read whole does not.
TEST(ScheduleInferenceEdgeTest, ARankCutShortIsNamedInTheNotes) {
  absl::StatusOr<sim::Simulation> simulation = sim::Simulate(Job(sim::Schedule::k1F1B, 4, 8));
  ASSERT_TRUE(simulation.ok()) << simulation.status();
  absl::StatusOr<schedule_inference::Result> whole = testing::ShapeOf(simulation->trace);
  ASSERT_TRUE(whole.ok()) << whole.status();
  EXPECT_THAT(whole->notes, ::testing::Not(::testing::Contains(HasSubstr("cut short"))));
  simulation->trace.ranks[2].stats.Bump(ImportCounter::kTruncated, 1234);
  absl::StatusOr<schedule_inference::Result> cut = testing::ShapeOf(simulation->trace);
  ASSERT_TRUE(cut.ok()) << cut.status();
  EXPECT_THAT(cut->notes, ::testing::Contains(HasSubstr("rank 2's trace was cut short")));
}

TEST(ScheduleInferenceEdgeTest, OpAnnotationGrammar) {
  using pipeline::OpType;
  using pipeline::ParseOpAnnotation;
  std::optional<pipeline::ParsedOpName> op = ParseOpAnnotation("PP:12B3");
  ASSERT_TRUE(op.has_value());
  EXPECT_EQ(op->virtual_stage, 12);
  EXPECT_EQ(op->type, OpType::kBackward);
  EXPECT_FALSE(op->input_grad_only);
  EXPECT_EQ(op->microbatch, 3);
  op = ParseOpAnnotation("PP:2I0");
  ASSERT_TRUE(op.has_value());
  EXPECT_TRUE(op->input_grad_only);
  EXPECT_EQ(ParseOpAnnotation("PP:2W7")->type, OpType::kWeightGrad);
  op = ParseOpAnnotation("Backward 5");
  ASSERT_TRUE(op.has_value());
  EXPECT_EQ(op->virtual_stage, -1);
  EXPECT_EQ(op->microbatch, 5);
  EXPECT_EQ(ParseOpAnnotation("WeightGrad 2")->type, OpType::kWeightGrad);
  // Without the stage: the stage comes from the p2p order.
  op = ParseOpAnnotation("PP:F17");
  ASSERT_TRUE(op.has_value());
  EXPECT_EQ(op->virtual_stage, -1);
  EXPECT_EQ(op->type, OpType::kForward);
  EXPECT_EQ(op->microbatch, 17);
  EXPECT_EQ(ParseOpAnnotation("PP:B0")->type, OpType::kBackward);
  EXPECT_TRUE(ParseOpAnnotation("PP:I3")->input_grad_only);
  EXPECT_EQ(ParseOpAnnotation("PP:W2")->virtual_stage, -1);
  for (const char* other :
       {"PP:0SEND_F0", "PP:2RECV_B1", "PP:0WAIT_SEND_F0", "PP:0UNSHARD", "PP:0REDUCE_GRAD",
        "PP:SEND_F0", "PP:F", "PP:", "PP:X0", "PP:0F", "PP:0F0x", "PP:F0x", "PP:-1F0", "Forward",
        "Forward x", "Forward 1 ", "ProfilerStep#2", "PP:99999999999F0", "PP:F99999999999"}) {
    EXPECT_FALSE(ParseOpAnnotation(other).has_value()) << other;
  }
}

// The middle kernel of every backward loses its name hint, so the hints split each backward in
// two: twice as many backwards as forwards on every stage. The program fit places every op, but
// on the last stage, where each forward shares its block with its backward and no lone op of
// that stage shows its kernels, the cut is not confirmed: a guess. With stage 1 made 40%
// slower, the per-stage times would otherwise call it slowest and raise stage_imbalance; times
// that rest on a guess must give neither, nor a rebalance.
TEST(ScheduleInferenceEdgeTest, OpCountsThatDoNotFitGiveNoImbalanceFinding) {
  sim::Config config = Job(sim::Schedule::k1F1B, 4, 8);
  config.kernels_per_op = 3;
  config.costs[1] = sim::StageCost{4200, 8400, 0};
  sim::Simulation simulation = MustSimulate(config);
  for (Rank& rank : simulation.trace.ranks) {
    const NameId plain = rank.names.Intern("sm90_xmma_gemm_bf16");
    for (Timeline& timeline : rank.timelines) {
      int run = 0;
      NameId previous = kNoName;
      for (Interval& interval : timeline.intervals) {
        if (interval.kind != IntervalKind::kComputeKernel) continue;
        const bool backward = rank.name(interval.name).find("backward") != std::string_view::npos;
        run = interval.name == previous ? run + 1 : 0;
        previous = interval.name;
        if (backward && run % 3 == 1) interval.name = plain;
      }
    }
  }
  absl::StatusOr<schedule_inference::Result> result = testing::ShapeOf(simulation.trace);
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_EQ(result->stages.size(), 4u);
  EXPECT_EQ(result->stages[0].forward.count, 8);
  EXPECT_EQ(result->stages[0].backward.count, 8);
  ASSERT_TRUE(result->op_fit.has_value());
  EXPECT_TRUE(result->op_fit->used);
  EXPECT_EQ(result->op_fit->placed, 64);
  EXPECT_EQ(result->op_fit->weak, 16);  // the last stage's 8 forwards and 8 backwards
  EXPECT_FALSE(result->stage_counts_fit);
  EXPECT_EQ(result->slowest_stage, -1);
  EXPECT_THAT(result->notes, Contains(HasSubstr("guess: 16 of the fitted ops")));

  job::Options options;
  options.layers_per_stage = {4, 4, 4, 4};
  const job::Result job = testing::AnalyzeJob(simulation.trace, options);
  ASSERT_EQ(job.pipelines.size(), 1u);
  for (const findings::Finding& finding : job.pipelines[0].findings.findings) {
    EXPECT_NE(finding.kind, findings::Kind::kStageImbalance) << finding.message;
  }
  ASSERT_TRUE(job.pipelines[0].rebalance.has_value());
  EXPECT_FALSE(job.pipelines[0].rebalance->result.ok());
}

// torch's ScheduleGPipe.eval() still opens "Backward {mb}" ranges for the backwards it skips:
// empty, over no compute. An inference pass with them is still forward-only, m intact.
TEST(ScheduleInferenceEdgeTest, EmptyBackwardRangesOfAnEvalPassAreNoOps) {
  sim::Config config = Job(sim::Schedule::kForwardOnly, 4, 8);
  config.costs.assign(4, sim::StageCost{3000, 0, 0});
  config.annotations = sim::AnnotationStyle::kPpCpu;
  sim::Simulation simulation = MustSimulate(config);
  for (Rank& rank : simulation.trace.ranks) {
    TimeNs end = 0;
    int64_t thread = 0;
    for (const Annotation& annotation : rank.annotations) {
      if (annotation.scope != AnnotationScope::kCpu) continue;
      if (annotation.end > end) {
        end = annotation.end;
        thread = annotation.thread_or_stream;
      }
    }
    for (int32_t mb = 0; mb < 8; ++mb) {
      const TimeNs at = end + 10 + 10 * mb;  // after every launch: nothing is issued inside
      rank.annotations.push_back(
          Annotation{.start = at,
                     .end = at + 2,
                     .name = rank.names.Intern(absl::StrCat("Backward ", mb)),
                     .scope = AnnotationScope::kCpu,
                     .device = -1,
                     .thread_or_stream = thread});
    }
  }
  absl::StatusOr<schedule_inference::Result> result = testing::ShapeOf(simulation.trace);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(schedule_inference::ScheduleFamilyName(result->family), "fwd-only");
  EXPECT_EQ(result->m, 8);
  EXPECT_EQ(result->p, 4);
  for (const schedule_inference::StageFigures& stage : result->stages) {
    EXPECT_EQ(stage.backward.count, 0);
    EXPECT_EQ(stage.forward.count, 8);
  }
}

// DualPipeV's overlapped pairs: each action is an op, counted per stage, with the shared range's
// compute kept out of the per-stage times.
TEST(ScheduleInferenceEdgeTest, OverlappedPairsAreOneOpPerAction) {
  using pipeline::OpType;
  std::vector<pipeline::ParsedOpName> pair =
      pipeline::ParseOverlappedOps("PP:(0F3;3B1)OVERLAP_F_B");
  ASSERT_EQ(pair.size(), 2u);
  EXPECT_EQ(pair[0].type, OpType::kForward);
  EXPECT_EQ(pair[0].virtual_stage, 0);
  EXPECT_EQ(pair[0].microbatch, 3);
  EXPECT_EQ(pair[1].type, OpType::kBackward);
  EXPECT_EQ(pair[1].virtual_stage, 3);
  EXPECT_EQ(pair[1].microbatch, 1);
  EXPECT_EQ(pipeline::ParseOverlappedOps("PP:(1F0;2I4)OVERLAP_F_B")[1].input_grad_only, true);
  EXPECT_FALSE(pipeline::ParseOpAnnotation("PP:(0F3;3B1)OVERLAP_F_B").has_value());
  for (const char* other : {"PP:(0F3;3B1)", "PP:(0F3;B1)OVERLAP_F_B", "PP:(0F3;;3B1)OVERLAP_F_B",
                            "PP:()OVERLAP_F_B", "PP:(0F3 ;3B1)OVERLAP_F_B", "(0F3;3B1)OVERLAP_F_B",
                            "PP:(0F0;0F1;0F2;0F3;0F4;0F5;0F6;0F7;0F8)OVERLAP_F_B"}) {
    EXPECT_TRUE(pipeline::ParseOverlappedOps(other).empty()) << other;
  }

  // On a rank: F0 alone (its kernel 100 ns), then F1 and B0 overlapped over a 300 ns kernel.
  Rank rank;
  rank.rank = 0;
  rank.timelines.push_back(testing::Stream(
      7, {testing::Op(testing::kCompute, 1000, 1100), testing::Op(testing::kCompute, 2000, 2300)}));
  for (auto [name, start, end] :
       {std::tuple{"PP:0F0", 1000, 1100}, std::tuple{"PP:(0F1;0B0)OVERLAP_F_B", 2000, 2300}}) {
    rank.annotations.push_back(Annotation{.start = start,
                                          .end = end,
                                          .name = rank.names.Intern(name),
                                          .scope = AnnotationScope::kGpu,
                                          .device = 0,
                                          .thread_or_stream = 7});
  }
  const index::RankIndex index = index::BuildRank(rank);
  const pipeline::StepMap steps;  // every moment is step 0
  const std::vector<pipeline::PipelineOp> ops = pipeline::AnnotatedOps(rank, index, steps);
  ASSERT_EQ(ops.size(), 3u);
  EXPECT_FALSE(ops[0].overlapped);
  EXPECT_TRUE(ops[1].overlapped);
  EXPECT_TRUE(ops[2].overlapped);
  EXPECT_EQ(ops[2].type, OpType::kBackward);
  const std::vector<schedule_inference::StageFigures> stages = pipeline::StageStats(ops, {0});
  ASSERT_EQ(stages.size(), 1u);
  EXPECT_EQ(stages[0].forward.count, 2);
  EXPECT_DOUBLE_EQ(stages[0].forward.mean_ns, 100.0);  // F0 alone; F1's range is shared
  EXPECT_EQ(stages[0].backward.count, 1);
  EXPECT_DOUBLE_EQ(stages[0].backward.mean_ns, 0.0);  // only ever overlapped: not measured
}

}  // namespace
}  // namespace bubblescope
