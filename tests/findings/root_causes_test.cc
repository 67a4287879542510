// Root causes on simulated jobs with one known fault each: the cause named first, its findings,
// and its predicted saving against the truth of simulating the job without that fault (the
// difference of the two simulated median iterations), within 2% of the iteration.
#include "findings/root_causes.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <set>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "job/job.h"
#include "synth/synthetic_job.h"

namespace bubblescope::root_causes {
namespace {

// p=4, m=8 1F1B, F=1 ms and B=2 ms per microbatch, 8 MiB activations on 200 Gbit/s links with
// 10 us latency, two iterations, no jitter.
sim::Config Base() {
  sim::Config config;
  config.schedule = sim::Schedule::k1F1B;
  config.stages = 4;
  config.microbatches = 8;
  config.iterations = 2;
  config.costs.assign(4, sim::StageCost{.forward = 1'000'000, .backward = 2'000'000});
  config.activation_bytes = int64_t{8} << 20;
  config.link = sim::Link{.gbps = 200.0, .latency_ns = 10'000};
  return config;
}

TimeNs Iteration(const sim::Config& config) {
  absl::StatusOr<sim::Simulation> simulation = sim::Simulate(config);
  EXPECT_TRUE(simulation.ok()) << simulation.status();
  return simulation.ok() ? simulation->truth.latency_p50_ns : 0;
}

job::Pipeline Analyse(const sim::Config& config) {
  absl::StatusOr<sim::Simulation> simulation = sim::Simulate(config);
  EXPECT_TRUE(simulation.ok()) << simulation.status();
  absl::StatusOr<job::Result> result = job::Analyze(simulation->trace, job::Options{});
  EXPECT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->pipelines.size(), 1u);
  return result->pipelines.at(0);
}

// Every finding sits under exactly one cause.
void ExpectPartition(const job::Pipeline& pipeline) {
  std::multiset<size_t> seen;
  for (const RootCause& cause : pipeline.causes.causes) {
    seen.insert(cause.findings.begin(), cause.findings.end());
  }
  ASSERT_EQ(seen.size(), pipeline.findings.findings.size());
  for (size_t i = 0; i < pipeline.findings.findings.size(); ++i) EXPECT_EQ(seen.count(i), 1u);
}

void ExpectSaving(const RootCause& cause, TimeNs with_fault, TimeNs without) {
  ASSERT_TRUE(cause.saving_per_iteration_ns.has_value()) << cause.fix;
  EXPECT_NEAR(static_cast<double>(*cause.saving_per_iteration_ns),
              static_cast<double>(with_fault - without), 0.02 * static_cast<double>(with_fault))
      << CauseName(cause.cause) << ": " << cause.fix;
}

bool Holds(const job::Pipeline& pipeline, const RootCause& cause, findings::Kind kind) {
  for (size_t index : cause.findings) {
    if (pipeline.findings.findings[index].kind == kind) return true;
  }
  return false;
}

TEST(RootCausesTest, SlowStageLeadsAndOwnsItsSymptoms) {
  sim::Config slow = Base();
  slow.costs[2] = sim::StageCost{.forward = 1'500'000, .backward = 3'000'000};
  // The fix: stage 2 at the mean, F = (3 x 1 + 1.5) / 4 = 1.125 ms, B = 2.25 ms.
  sim::Config fixed = slow;
  fixed.costs[2] = sim::StageCost{.forward = 1'125'000, .backward = 2'250'000};
  const job::Pipeline pipeline = Analyse(slow);
  ExpectPartition(pipeline);
  const RootCause& top = pipeline.causes.causes.at(0);
  EXPECT_EQ(top.cause, Cause::kStageImbalance);
  EXPECT_EQ(top.ranks, std::vector<int32_t>{2});
  ExpectSaving(top, Iteration(slow), Iteration(fixed));
  EXPECT_TRUE(Holds(pipeline, top, findings::Kind::kStageImbalance));
  EXPECT_TRUE(Holds(pipeline, top, findings::Kind::kCommWait));
  EXPECT_TRUE(Holds(pipeline, top, findings::Kind::kLateSender));
}

TEST(RootCausesTest, SlowLinkLeadsWithTheSavingOfAHealthyLink) {
  sim::Config slow = Base();
  slow.link_overrides = {sim::LinkOverride{1, 2, sim::Link{.gbps = 25.0, .latency_ns = 10'000}}};
  const job::Pipeline pipeline = Analyse(slow);
  ExpectPartition(pipeline);
  const RootCause& top = pipeline.causes.causes.at(0);
  EXPECT_EQ(top.cause, Cause::kSlowLink);
  EXPECT_EQ(top.ranks, (std::vector<int32_t>{1, 2}));
  ExpectSaving(top, Iteration(slow), Iteration(Base()));
  EXPECT_TRUE(Holds(pipeline, top, findings::Kind::kCommWait));
}

TEST(RootCausesTest, TransfersOnHealthyLinksAreTransferTime) {
  const sim::Config linked = Base();
  sim::Config free_links = linked;
  free_links.link = sim::Link{.gbps = std::numeric_limits<double>::infinity(), .latency_ns = 0};
  const job::Pipeline pipeline = Analyse(linked);
  ExpectPartition(pipeline);
  const RootCause* transfer = nullptr;
  for (const RootCause& cause : pipeline.causes.causes) {
    EXPECT_NE(cause.cause, Cause::kSlowLink);
    EXPECT_NE(cause.cause, Cause::kStageImbalance);
    if (cause.cause == Cause::kTransferTime) transfer = &cause;
  }
  ASSERT_NE(transfer, nullptr);
  ExpectSaving(*transfer, Iteration(linked), Iteration(free_links));
}

TEST(RootCausesTest, ScheduleDepthSavingIsTheBestShallowerConfiguration) {
  // Free links and equal stages: only the depth; its saving is the best of the predicted
  // remedies that fit, here ZB-H1 with B = W = 1 ms (a simulated ZB-H1 of those costs).
  sim::Config healthy = Base();
  healthy.link = sim::Link{.gbps = std::numeric_limits<double>::infinity(), .latency_ns = 0};
  healthy.activation_bytes = 0;
  sim::Config zero_bubble = healthy;
  zero_bubble.schedule = sim::Schedule::kZeroBubbleH1;
  zero_bubble.costs.assign(
      4, sim::StageCost{.forward = 1'000'000, .backward = 1'000'000, .weight_grad = 1'000'000});
  const job::Pipeline pipeline = Analyse(healthy);
  ExpectPartition(pipeline);
  ASSERT_EQ(pipeline.causes.causes.size(), 1u);
  const RootCause& depth = pipeline.causes.causes[0];
  EXPECT_EQ(depth.cause, Cause::kScheduleDepth);
  EXPECT_EQ(depth.severity, Severity::kInfo);
  ExpectSaving(depth, Iteration(healthy), Iteration(zero_bubble));
}

// The base job on an ideal link whose host takes 1.5 ms to launch each kernel.
sim::Config SlowHost() {
  sim::Config config = Base();
  config.link = sim::Link{.gbps = std::numeric_limits<double>::infinity(), .latency_ns = 0};
  config.activation_bytes = 0;
  config.launch_gap_ns = 1'500'000;
  return config;
}

TEST(RootCausesTest, SlowLaunchesAreHostBoundWithTheModelsIterationAsTheFix) {
  // Launching a kernel takes 1.5 ms of CPU time, three times a 0.5 ms kernel (an op is two
  // kernels): the device waits on the host. The fix is the job without launch gaps.
  const sim::Config slow_host = SlowHost();
  sim::Config fast_host = slow_host;
  fast_host.launch_gap_ns = 0;
  const job::Pipeline pipeline = Analyse(slow_host);
  ExpectPartition(pipeline);
  const RootCause& top = pipeline.causes.causes.at(0);
  EXPECT_EQ(top.cause, Cause::kHostBound);
  EXPECT_TRUE(Holds(pipeline, top, findings::Kind::kHostBound));
  // Cost and saving come from the same empty time: the gaps put back into the model (the
  // "before") down to the model as measured, never more than the empty time itself.
  EXPECT_FALSE(top.before_is_measured);
  ASSERT_TRUE(top.saving_per_iteration_ns.has_value());
  EXPECT_LE(*top.saving_per_iteration_ns, top.cost_per_iteration_ns);
  EXPECT_EQ(*top.saving_per_iteration_ns, top.iteration_before_ns - top.iteration_after_ns);
  // Spreading the gaps evenly over the ops is an estimate (here within 15% of the truth); what
  // it misses is unexplained, and the two together are the simulated job without the gaps.
  const TimeNs truth = Iteration(slow_host) - Iteration(fast_host);
  EXPECT_NEAR(static_cast<double>(*top.saving_per_iteration_ns), static_cast<double>(truth),
              0.15 * static_cast<double>(truth));
  const RootCause* rest = nullptr;
  for (const RootCause& cause : pipeline.causes.causes) {
    if (cause.cause == Cause::kUnexplained) rest = &cause;
  }
  const TimeNs accounted = *top.saving_per_iteration_ns +
                           (rest != nullptr ? rest->saving_per_iteration_ns.value_or(0) : 0);
  EXPECT_NEAR(static_cast<double>(accounted), static_cast<double>(truth),
              0.02 * static_cast<double>(Iteration(slow_host)));
  // A GPU rank's host keeps its device waiting.
  EXPECT_NE(top.summary.find("the host does not keep the device busy"), std::string::npos);
}

const RootCause* Find(const job::Pipeline& pipeline, Cause kind) {
  for (const RootCause& cause : pipeline.causes.causes) {
    if (cause.cause == kind) return &cause;
  }
  return nullptr;
}

TEST(RootCausesTest, WorkTheModelLeavesOutIsUnexplainedAndLeads) {
  // A 10 ms optimizer kernel on every rank after each iteration: the model (microbatch ops and
  // transfers) leaves it out, no finding names it, and it is the largest loss. The unexplained
  // cause accounts for it: its saving the simulated iteration with it minus without it.
  sim::Config optimizer = Base();
  optimizer.optimizer_ns = 10'000'000;
  const job::Pipeline pipeline = Analyse(optimizer);
  ExpectPartition(pipeline);
  const RootCause& top = pipeline.causes.causes.at(0);
  EXPECT_EQ(top.cause, Cause::kUnexplained);
  EXPECT_EQ(top.severity, Severity::kWarning);
  ExpectSaving(top, Iteration(optimizer), Iteration(Base()));
  // From the measured iteration down to the model's, on every one of the 4 ranks.
  EXPECT_TRUE(top.before_is_measured);
  EXPECT_EQ(top.iteration_before_ns, pipeline.bubble.latency.p50);
  EXPECT_EQ(top.cost_per_iteration_ns, 4 * *top.saving_per_iteration_ns);
  EXPECT_EQ(top.ranks, (std::vector<int32_t>{0, 1, 2, 3}));
  // The evidence points at it: each rank computes 8 x (1 + 2) = 24 ms of microbatch ops and
  // 34 ms in all.
  EXPECT_NE(top.next_step.find("compute outside the microbatch ops per iteration: rank 0 10.0 "
                               "ms, rank 1 10.0 ms, rank 2 10.0 ms, rank 3 10.0 ms"),
            std::string::npos)
      << top.next_step;
  // Without the optimizer the model accounts for the measured iteration.
  EXPECT_EQ(Find(Analyse(Base()), Cause::kUnexplained), nullptr);
}

TEST(RootCausesTest, ModelHostGapsAndTheRestAddUpToTheMeasuredIteration) {
  // Slow launches (host_bound) and a 20 ms optimizer step the model leaves out. The host
  // cause's saving is an estimate of the launch gaps' alone (within 15% of the simulated job
  // without them, both with no optimizer), within its cost; the unexplained cause takes the
  // optimizer step and what the estimate misses; the model, the host gaps and the rest add up
  // to the measured iteration exactly, and the two savings to the simulated job without both.
  const sim::Config slow_host = SlowHost();
  sim::Config fast_host = slow_host;
  fast_host.launch_gap_ns = 0;
  sim::Config with_optimizer = slow_host;
  with_optimizer.optimizer_ns = 20'000'000;
  const job::Pipeline pipeline = Analyse(with_optimizer);
  ExpectPartition(pipeline);
  const RootCause* host = Find(pipeline, Cause::kHostBound);
  const RootCause* rest = Find(pipeline, Cause::kUnexplained);
  ASSERT_NE(host, nullptr);
  ASSERT_NE(rest, nullptr);
  ASSERT_TRUE(host->saving_per_iteration_ns.has_value());
  ASSERT_TRUE(rest->saving_per_iteration_ns.has_value());
  const TimeNs gaps = Iteration(slow_host) - Iteration(fast_host);
  EXPECT_NEAR(static_cast<double>(*host->saving_per_iteration_ns), static_cast<double>(gaps),
              0.15 * static_cast<double>(gaps));
  EXPECT_LE(*host->saving_per_iteration_ns, host->cost_per_iteration_ns);
  const TimeNs optimizer = Iteration(with_optimizer) - Iteration(slow_host);
  EXPECT_GE(*rest->saving_per_iteration_ns, optimizer - optimizer / 50);
  EXPECT_NEAR(static_cast<double>(*host->saving_per_iteration_ns + *rest->saving_per_iteration_ns),
              static_cast<double>(gaps + optimizer),
              0.02 * static_cast<double>(Iteration(with_optimizer)));
  EXPECT_EQ(rest->iteration_before_ns, pipeline.bubble.latency.p50);
  EXPECT_EQ(rest->iteration_after_ns, host->iteration_before_ns);
  EXPECT_EQ(
      *host->saving_per_iteration_ns + *rest->saving_per_iteration_ns + host->iteration_after_ns,
      pipeline.bubble.latency.p50);
}

TEST(RootCausesTest, HostBoundOnCpuRanksNamesTheModelThread) {
  // Hand-built, no model: a CPU-only job (gloo) has no device for a host to keep busy; its
  // model thread is what sits idle. The same figures on GPU ranks keep the device's words.
  using findings::Finding;
  using findings::Kind;
  const std::vector<Finding> all = {
      Finding{Kind::kHostBound, Severity::kWarning, "idle 0", {0}, 8'000'000},
      Finding{Kind::kHostBound, Severity::kWarning, "idle 1", {1}, 4'000'000}};
  bubble::Result bubble;
  bubble.complete_iterations = 2;
  bubble.ranks = {0, 1};
  for (int32_t rank : bubble.ranks) {
    bubble::RankTotals totals;
    totals.rank = rank;
    totals.device = index::DeviceKind::kCpu;
    bubble.per_rank.push_back(totals);
  }
  const std::vector<int32_t> order = {0, 1};
  const std::vector<link_stats::Link> links;
  const Input input{.findings = &all, .bubble = &bubble, .stage_order = &order, .links = &links};
  Result result = Analyze(input);
  ASSERT_EQ(result.causes.size(), 1u);
  const RootCause& cpu = result.causes[0];
  EXPECT_EQ(cpu.cause, Cause::kHostBound);
  EXPECT_EQ(cpu.ranks, (std::vector<int32_t>{0, 1}));
  EXPECT_EQ(cpu.cost_per_iteration_ns, 6'000'000);  // (8 + 4) ms over 2 iterations
  EXPECT_EQ(cpu.summary.find("device"), std::string::npos) << cpu.summary;
  EXPECT_NE(cpu.summary.find("the model thread sits idle between ops"), std::string::npos);
  EXPECT_EQ(cpu.next_step.find("launches"), std::string::npos) << cpu.next_step;
  for (bubble::RankTotals& totals : bubble.per_rank) totals.device = index::DeviceKind::kGpu;
  result = Analyze(input);
  EXPECT_NE(result.causes.at(0).summary.find("the host does not keep the device busy"),
            std::string::npos);
}

TEST(RootCausesTest, LateSendersJoinTheImbalanceOfTheirStageOrStandAlone) {
  // Hand-built findings, no model: rank 2 is the slowest stage; rank 0 sends late too.
  using findings::Finding;
  using findings::Kind;
  const std::vector<Finding> all = {
      Finding{Kind::kStageImbalance, Severity::kWarning, "slow", {2}, 40'000'000},
      Finding{Kind::kLateSender, Severity::kWarning, "late 2", {2, 3}, 30'000'000},
      Finding{Kind::kLateSender, Severity::kWarning, "late 0", {0, 1}, 20'000'000},
      Finding{Kind::kCommWait, Severity::kWarning, "wait", {1}, 10'000'000},
      Finding{Kind::kIncompleteIterations, Severity::kInfo, "cut", {0, 1, 2, 3}, 0}};
  bubble::Result bubble;
  bubble.complete_iterations = 2;
  schedule_inference::Result shape;
  shape.slowest_stage = 2;
  shape.slowest_rank = 2;
  const std::vector<int32_t> order = {0, 1, 2, 3};
  const std::vector<link_stats::Link> links;
  const Result result = Analyze({.findings = &all,
                                 .bubble = &bubble,
                                 .shape = &shape,
                                 .stage_order = &order,
                                 .links = &links,
                                 .model = nullptr,
                                 .depth_remedies = nullptr,
                                 .rebalance = nullptr,
                                 .rebalance_predicted = nullptr});
  // Nothing is predicted without a model, so the causes go by cost per iteration: the
  // imbalance (20 ms) with its late sender and the wait (the largest warning cause takes the
  // symptoms), rank 0's late sending (10 ms), the incomplete job (0).
  ASSERT_EQ(result.causes.size(), 3u);
  EXPECT_EQ(result.causes[0].cause, Cause::kStageImbalance);
  EXPECT_EQ(result.causes[0].cost_per_iteration_ns, 20'000'000);
  EXPECT_EQ(result.causes[0].findings, (std::vector<size_t>{0, 1, 3}));
  EXPECT_EQ(result.causes[1].cause, Cause::kLateSender);
  EXPECT_EQ(result.causes[1].findings, std::vector<size_t>{2});
  EXPECT_FALSE(result.causes[1].saving_per_iteration_ns.has_value());
  EXPECT_EQ(result.causes[2].cause, Cause::kIncompleteJob);
  EXPECT_EQ(result.causes[2].severity, Severity::kInfo);
  for (const RootCause& cause : result.causes) {
    EXPECT_FALSE(cause.saving_per_iteration_ns.has_value()) << CauseName(cause.cause);
  }
  EXPECT_EQ(result.causes[1].fix.rfind("not predicted: the job could not be modelled", 0), 0u);
}

}  // namespace
}  // namespace bubblescope::root_causes
