// Activation recomputation in real PyTorch CPU runs (sample_traces/torch_cpu): two 1F1B runs
// that checkpoint every stage (reentrant, as Megatron-LM and DeepSpeed run it, and torch's
// non-reentrant form), against every other run, which does not. A stage recomputes its own
// forward once per backward, so its recomputation per microbatch must be about its measured
// forward per microbatch (one noisy CPU recording: within a factor of 2), and the recompute
// cause's predicted saving is that time taken off every backward.
#include <string>
#include <vector>

#include "findings/torch_cpu_run.h"
#include "gtest/gtest.h"
#include "job/job.h"

namespace bubblescope::root_causes {
namespace {

job::Pipeline Analyse(const std::string& run) { return testing::TorchCpuRunPipeline(run); }

const findings::Finding* RecomputeFinding(const job::Pipeline& pipeline) {
  for (const findings::Finding& finding : pipeline.findings.findings) {
    if (finding.kind == findings::Kind::kRecompute) return &finding;
  }
  return nullptr;
}

TEST(RecomputeRealTest, CheckpointedRunsRecomputeAboutOneForwardPerBackward) {
  for (const std::string run : {"1f1b_p2_m4_recompute", "1f1b_p2_m4_recompute_nr"}) {
    SCOPED_TRACE(run);
    const job::Pipeline pipeline = Analyse(run);
    ASSERT_TRUE(pipeline.model.has_value()) << pipeline.model_problem;
    const findings::Finding* finding = RecomputeFinding(pipeline);
    ASSERT_NE(finding, nullptr);
    EXPECT_EQ(finding->ranks, (std::vector<int32_t>{0, 1}));
    for (const whatif::StageModel& stage : pipeline.model->stages) {
      SCOPED_TRACE(stage.rank);
      EXPECT_GT(stage.recompute_ns, 0.5 * stage.forward_ns);
      EXPECT_LT(stage.recompute_ns, 2.0 * stage.forward_ns);
    }
    const RootCause* cause = nullptr;
    for (const RootCause& each : pipeline.causes.causes) {
      if (each.cause == Cause::kRecompute) cause = &each;
    }
    ASSERT_NE(cause, nullptr);
    EXPECT_EQ(cause->severity, Severity::kInfo);
    ASSERT_TRUE(cause->saving_per_iteration_ns.has_value());
    EXPECT_GT(*cause->saving_per_iteration_ns, 0);
    // Never more than the recomputation of the stages together per iteration.
    double recomputed = 0.0;
    for (const whatif::StageModel& stage : pipeline.model->stages) {
      recomputed += stage.recompute_ns * pipeline.model->m;
    }
    EXPECT_LE(static_cast<double>(*cause->saving_per_iteration_ns), recomputed);
  }
}

TEST(RecomputeRealTest, RunsWithoutCheckpointingRecomputeNothing) {
  for (const std::string run :
       {"gpipe_p2_m4", "1f1b_p4_m8", "1f1b_p4_m8_heavy2", "interleaved_p2_v2_m4", "zb_p2_v2_m4",
        "zbv_p2_v2_m4", "dualpipev_p2_v2_m8", "gpipe_eval_p2_m4"}) {
    SCOPED_TRACE(run);
    EXPECT_EQ(RecomputeFinding(Analyse(run)), nullptr);
  }
}

}  // namespace
}  // namespace bubblescope::root_causes
