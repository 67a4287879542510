// One simulated job, written once as Kineto traces and once as Nsight Systems SQLite exports (one
// per rank, as `nsys profile` under each rank's launcher leaves them, then `nsys export --type
// sqlite`, with and without --include-blobs), read back and analysed: the two formats must give
// the same p, m, v, schedule family, stage order, bubble (overall and per iteration and rank),
// latency and findings, over the schedules of the accuracy grid (docs/accuracy.md: 1F1B, GPipe,
// interleaved 1F1B, ZB-H1, forward-only; imbalanced, with jitter, link latency and per-rank
// clock offsets). The simulator's truth is checked too, so two formats agreeing on a wrong
// figure fails.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "job/job.h"
#include "loader/trace_loader.h"
#include "readers/nsys_reader.h"
#include "simulator/simulator.h"
#include "support/test_files.h"
#include "writers/nsys_writer.h"
#include "writers/simulated_set.h"

namespace bubblescope {
namespace {

using sim::Schedule;

struct Case {
  Schedule schedule;
  int32_t p;
  int32_t m;
  bool payloads;  // exported with --include-blobs=true
};

sim::Config MakeConfig(const Case& c) {
  sim::Config config;
  config.schedule = c.schedule;
  config.stages = c.p;
  config.microbatches = c.m;
  config.virtual_stages = c.schedule == Schedule::kInterleaved1F1B ? 2 : 1;
  config.iterations = 3;
  const bool training = c.schedule != Schedule::kForwardOnly;
  const int64_t weight_grad = c.schedule == Schedule::kZeroBubbleH1 ? 1500 : 0;
  config.costs.assign(static_cast<size_t>(c.p),
                      sim::StageCost{.forward = 4000,
                                     .backward = training ? 8000 : 0,
                                     .weight_grad = weight_grad});
  // One stage 15% slower, so the slowest stage and its finding show.
  config.costs[1] = sim::StageCost{.forward = 4600,
                                   .backward = training ? 9200 : 0,
                                   .weight_grad = weight_grad == 0 ? 0 : 1725};
  config.kernels_per_op = 2;
  config.activation_bytes = 1 << 18;
  config.link = sim::Link{.gbps = 200.0, .latency_ns = 2000};
  config.launch_gap_ns = 60;
  config.optimizer_ns = training ? 3000 : 0;
  config.jitter = 0.05;
  config.seed = static_cast<uint64_t>(c.p * 100 + c.m);
  for (int32_t r = 0; r < c.p; ++r) config.clock_offsets_ns.push_back((r % 3 - 1) * 2'500'000LL);
  // Stage s on rank p-1-s: rank numbers say nothing about the order.
  for (int32_t s = 0; s < c.p; ++s) config.stage_to_rank.push_back(c.p - 1 - s);
  return config;
}

// The Kineto set as `analyze` reads it.
absl::StatusOr<job::Result> FromKineto(const sim::Config& config, sim::Simulation& simulation) {
  testing::TempDir dir;
  sim::SetWriteOptions write;
  absl::StatusOr<std::vector<std::string>> written =
      sim::WriteSimulationSet(config, simulation, dir.path(), write);
  EXPECT_TRUE(written.ok()) << written.status();
  LoadOptions load;
  load.jobs = 1;
  absl::StatusOr<Trace> trace = LoadTrace({dir.path()}, load);
  if (!trace.ok()) return trace.status();
  return job::Analyze(*trace, job::Options{});
}

// One export per rank, read as `analyze` reads a directory of them.
absl::StatusOr<job::Result> FromNsys(const sim::Simulation& simulation, bool payloads) {
  testing::TempDir dir;
  NsysWriteOptions write;
  write.nccl_payloads = payloads;
  for (const Rank& rank : simulation.trace.ranks) {
    const std::string path = absl::StrCat(dir.path(), "/rank", rank.rank, ".sqlite");
    if (absl::Status status = WriteNsysSqlite(rank, write, path); !status.ok()) return status;
    // With payloads the rank is NCCL's own; without, the loader takes it from the file name.
    absl::StatusOr<std::vector<Rank>> read = ReadNsysSqlite(path, NsysReadOptions{});
    if (!read.ok()) return read.status();
    EXPECT_EQ(read->size(), 1u);
    EXPECT_EQ(read->front().rank, payloads ? rank.rank : -1);
  }
  LoadOptions load;
  load.jobs = 1;
  absl::StatusOr<Trace> trace = LoadTrace({dir.path()}, load);
  if (!trace.ok()) return trace.status();
  return job::Analyze(*trace, job::Options{});
}

std::string Name(const Case& c) {
  return absl::StrCat(std::string(sim::ScheduleName(c.schedule)), " p=", c.p, " m=", c.m,
                      c.payloads ? " with NCCL payloads" : " without payloads");
}

void CheckCase(const Case& c) {
  SCOPED_TRACE(Name(c));
  const sim::Config config = MakeConfig(c);
  absl::StatusOr<sim::Simulation> simulation = sim::Simulate(config);
  ASSERT_TRUE(simulation.ok()) << simulation.status();
  const sim::Truth truth = simulation->truth;
  const absl::StatusOr<job::Result> nsys_job = FromNsys(*simulation, c.payloads);
  const absl::StatusOr<job::Result> kineto_job = FromKineto(config, *simulation);
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
  EXPECT_EQ(n.shape->m, c.m);

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
      EXPECT_EQ(got.fill, want.fill);
      EXPECT_EQ(got.drain, want.drain);
      EXPECT_EQ(got.stall, want.stall);
      EXPECT_EQ(got.comm_wait, want.comm_wait);
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

class NsysSameJobTest : public ::testing::TestWithParam<Case> {};

TEST_P(NsysSameJobTest, KinetoAndNsightGiveTheSameFigures) { CheckCase(GetParam()); }

std::vector<Case> Cases() {
  std::vector<Case> cases;
  for (Schedule schedule : {Schedule::k1F1B, Schedule::kGpipe, Schedule::kInterleaved1F1B,
                            Schedule::kZeroBubbleH1, Schedule::kForwardOnly}) {
    for (bool payloads : {true, false}) cases.push_back(Case{schedule, 4, 8, payloads});
  }
  cases.push_back(Case{Schedule::k1F1B, 2, 4, true});
  cases.push_back(Case{Schedule::kInterleaved1F1B, 8, 16, true});
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Grid, NsysSameJobTest, ::testing::ValuesIn(Cases()));

}  // namespace
}  // namespace bubblescope
