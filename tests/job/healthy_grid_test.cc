// A healthy job is not a fault: simulated jobs with equal stages, free links, no jitter and no
// host delay leave exactly their schedule's own bubble, and the analysis of each must produce
// no warning (issue 15's validation), only the informational pipeline depth. The comm waits
// such a schedule leaves between its hand-offs are its depth, not a late peer.
#include <cstdint>
#include <limits>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "job/job.h"
#include "synth/synthetic_job.h"

namespace bubblescope {
namespace {

using sim::Schedule;

TEST(HealthyGridTest, NoWarningOnAHealthyJob) {
  int64_t jobs = 0;
  for (Schedule schedule : {Schedule::kGpipe, Schedule::k1F1B, Schedule::kInterleaved1F1B,
                            Schedule::kZeroBubbleH1, Schedule::kForwardOnly}) {
    for (int32_t p : {2, 4, 8}) {
      for (int32_t m : {8, 16, 32}) {
        SCOPED_TRACE(absl::StrCat(std::string(sim::ScheduleName(schedule)), " p=", p, " m=", m));
        sim::Config config;
        config.schedule = schedule;
        config.stages = p;
        config.microbatches = m;
        config.virtual_stages = schedule == Schedule::kInterleaved1F1B ? 2 : 1;
        config.iterations = 2;
        const bool zb = schedule == Schedule::kZeroBubbleH1;
        const bool training = schedule != Schedule::kForwardOnly;
        config.costs.assign(static_cast<size_t>(p),
                            sim::StageCost{.forward = 1'000'000,
                                           .backward = training ? (zb ? 1'000'000 : 2'000'000) : 0,
                                           .weight_grad = zb ? 1'000'000 : 0});
        config.activation_bytes = 0;
        config.link = sim::Link{.gbps = std::numeric_limits<double>::infinity(), .latency_ns = 0};
        config.launch_gap_ns = 0;
        absl::StatusOr<sim::Simulation> simulation = sim::Simulate(config);
        ASSERT_TRUE(simulation.ok()) << simulation.status();
        absl::StatusOr<job::Result> result = job::Analyze(simulation->trace, job::Options{});
        ASSERT_TRUE(result.ok()) << result.status();
        ASSERT_EQ(result->pipelines.size(), 1u);
        const job::Pipeline& pipeline = result->pipelines[0];
        for (const findings::Finding& finding : pipeline.findings.findings) {
          EXPECT_NE(finding.severity, Severity::kWarning)
              << findings::KindName(finding.kind) << ": " << finding.message;
        }
        // Its only cause is the schedule's depth, informational.
        ASSERT_EQ(pipeline.causes.causes.size(), 1u);
        EXPECT_EQ(pipeline.causes.causes[0].cause, root_causes::Cause::kScheduleDepth);
        EXPECT_EQ(pipeline.causes.causes[0].severity, Severity::kInfo);
        ++jobs;
      }
    }
  }
  EXPECT_EQ(jobs, 45);
}

}  // namespace
}  // namespace bubblescope
