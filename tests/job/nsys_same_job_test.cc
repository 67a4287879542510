// One simulated job, written once as Kineto traces and once as Nsight Systems SQLite exports (one
// per rank, as `nsys profile` under each rank's launcher leaves them, then `nsys export --type
// sqlite`, with and without --include-blobs; each rank's session started 2 s after the one
// before, each file's times counted from its own session's start), loaded as `analyze` loads them
// and analysed: the two formats must give the same p, m, v, schedule family, stage order, slowest
// stage, bubble (overall and per iteration and rank), latency and findings, over the accuracy grid
// (every schedule, p in {2, 4, 8}, m in {1, 4, 8, 32}: sim::testing::GridJobs) in the file grid's
// variants (tests/job/file_grid_cases.h): balanced without annotations, and imbalanced with
// `PP:` annotations (whose GPU copies nsys does not record), both with jitter, link latency and
// per-rank clock offsets. The simulator's truth is checked too, so two formats agreeing on a
// wrong figure fails.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "job/file_grid_cases.h"
#include "job/job.h"
#include "schedule_engine/sim_test_util.h"
#include "synth/simulated_set.h"
#include "synth/synthetic_job.h"
#include "writers/nsys_writer.h"

namespace bubblescope {
namespace {

using sim::Schedule;

// The grid's case and whether the exports keep NCCL's payloads (--include-blobs=true).
struct Case {
  file_grid::Case job;
  bool payloads;
};

void CheckCase(const Case& c) {
  SCOPED_TRACE(absl::StrCat(file_grid::Name(c.job),
                            c.payloads ? ", with NCCL payloads" : ", without payloads"));
  const sim::Config config = file_grid::MakeConfig(c.job);
  absl::StatusOr<sim::Simulation> simulation = sim::Simulate(config);
  ASSERT_TRUE(simulation.ok()) << simulation.status();
  const sim::Truth truth = simulation->truth;
  sim::SetWriteOptions kineto_write;
  kineto_write.kineto.layout =
      c.job.older_layout ? KinetoLayout::kAbsoluteMicros : KinetoLayout::kRelativeWithBase;
  kineto_write.gzip = c.job.older_layout;
  sim::SetWriteOptions nsys_write;
  // Each rank's nsys session starts on its own, 2 s after the previous rank's (as ranks
  // launched one after another start theirs), and each file counts its times from its own
  // session's start; the exports are written in the schemas of 2026 and 2024 (the older file
  // layout) and, without payloads, of 2022, which records no environment: the loader then
  // numbers the ranks by their files' names.
  nsys_write.nsys = NsysWriteOptions{.nccl_payloads = c.payloads,
                                     .session_lead_step_ns = 2'000'000'000,
                                     .schema = !c.payloads          ? NsysSchema::k2022
                                               : c.job.older_layout ? NsysSchema::k2024
                                                                    : NsysSchema::k2026};
  const absl::StatusOr<job::Result> nsys_job =
      file_grid::FromFiles(config, *simulation, nsys_write);
  const absl::StatusOr<job::Result> kineto_job =
      file_grid::FromFiles(config, *simulation, kineto_write);
  ASSERT_TRUE(nsys_job.ok()) << nsys_job.status();
  ASSERT_TRUE(kineto_job.ok()) << kineto_job.status();
  const job::Result& nsys = *nsys_job;
  const job::Result& kineto = *kineto_job;
  ASSERT_EQ(kineto.pipelines.size(), 1u);
  ASSERT_EQ(nsys.pipelines.size(), 1u);
  const job::Pipeline& k = kineto.pipelines[0];
  const job::Pipeline& n = nsys.pipelines[0];
  ASSERT_TRUE(k.shape.has_value()) << k.shape_problem;
  ASSERT_TRUE(n.shape.has_value()) << n.shape_problem;

  EXPECT_EQ(n.shape->p, k.shape->p);
  EXPECT_EQ(n.shape->m, k.shape->m);
  EXPECT_EQ(n.shape->v, k.shape->v);
  EXPECT_EQ(n.shape->family, k.shape->family);
  EXPECT_EQ(n.shape->stage_order, k.shape->stage_order);
  EXPECT_EQ(n.shape->slowest_stage, k.shape->slowest_stage);
  EXPECT_EQ(n.shape->stage_order, config.stage_to_rank);
  EXPECT_EQ(n.shape->m, c.job.m);
  EXPECT_EQ(schedule_inference::ScheduleFamilyName(n.shape->family),
            file_grid::ExpectedFamily(c.job));

  EXPECT_DOUBLE_EQ(n.bubble.bubble_fraction, k.bubble.bubble_fraction);
  EXPECT_DOUBLE_EQ(n.bubble.bubble_fraction, truth.bubble_fraction);
  EXPECT_EQ(n.bubble.latency.p50, k.bubble.latency.p50);
  EXPECT_EQ(n.bubble.latency.max, k.bubble.latency.max);
  EXPECT_EQ(n.bubble.latency.p50, truth.latency_p50_ns);
  ASSERT_EQ(n.bubble.iterations.size(), k.bubble.iterations.size());
  for (size_t i = 0; i < k.bubble.iterations.size(); ++i) {
    SCOPED_TRACE(absl::StrCat("iteration ", i));
    EXPECT_DOUBLE_EQ(n.bubble.iterations[i].bubble_fraction,
                     k.bubble.iterations[i].bubble_fraction);
    ASSERT_EQ(n.bubble.iterations[i].ranks.size(), k.bubble.iterations[i].ranks.size());
    for (size_t r = 0; r < k.bubble.iterations[i].ranks.size(); ++r) {
      const auto& got = n.bubble.iterations[i].ranks[r];
      const auto& want = k.bubble.iterations[i].ranks[r];
      EXPECT_EQ(got.rank, want.rank);
      EXPECT_EQ(got.split.fill, want.split.fill);
      EXPECT_EQ(got.split.drain, want.split.drain);
      EXPECT_EQ(got.split.stall, want.split.stall);
      EXPECT_EQ(got.split.comm_wait, want.split.comm_wait);
    }
  }

  ASSERT_EQ(n.findings.findings.size(), k.findings.findings.size());
  for (size_t f = 0; f < k.findings.findings.size(); ++f) {
    SCOPED_TRACE(k.findings.findings[f].message);
    EXPECT_EQ(n.findings.findings[f].kind, k.findings.findings[f].kind);
    EXPECT_EQ(n.findings.findings[f].ranks, k.findings.findings[f].ranks);
    EXPECT_EQ(n.findings.findings[f].cost_ns, k.findings.findings[f].cost_ns);
    // Without payloads nsys records no message sizes: a link finding's words say its bandwidth
    // is unknown where Kineto's quote it. Every figure is still the same.
    if (c.payloads) {
      EXPECT_EQ(n.findings.findings[f].message, k.findings.findings[f].message);
    }
  }
}

class NsysSameJobTest : public ::testing::TestWithParam<Schedule> {};

TEST_P(NsysSameJobTest, KinetoAndNsightGiveTheSameFigures) {
  for (const sim::testing::GridJob& job : sim::testing::GridJobs(GetParam())) {
    for (file_grid::Variant variant : {file_grid::Variant::kNewer, file_grid::Variant::kOlder}) {
      CheckCase(Case{file_grid::Case{GetParam(), job.p, job.m, variant}, true});
    }
    // Without payloads (no sizes, no peers, no NCCL rank ids): the loader numbers the ranks by
    // their files' names, and the peers come from the schedule.
    CheckCase(Case{file_grid::Case{GetParam(), job.p, job.m, file_grid::Variant::kNewer}, false});
  }
}

INSTANTIATE_TEST_SUITE_P(AccuracyGrid, NsysSameJobTest,
                         ::testing::ValuesIn(sim::testing::kAllSchedules),
                         sim::testing::ScheduleTestName);

}  // namespace
}  // namespace bubblescope
