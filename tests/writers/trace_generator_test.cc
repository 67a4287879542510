#include "trace_generator.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "generator_truth.h"
#include "pipeline_schedule.h"
#include "writers/kineto_writer.h"

namespace bubblescope::bench {
namespace {

std::string Spell(const std::vector<PipelineOp>& order) {
  std::string text;
  for (const PipelineOp& op : order) {
    text += (op.pass == Pass::kForward ? "F" : "B") + std::to_string(op.microbatch) + " ";
  }
  return text;
}

TEST(PipelineScheduleTest, OneForwardOneBackward) {
  EXPECT_EQ(Spell(OneForwardOneBackwardOrder(0, 4, 6)), "F0 F1 F2 F3 B0 F4 B1 F5 B2 B3 B4 B5 ");
  EXPECT_EQ(Spell(OneForwardOneBackwardOrder(2, 4, 6)), "F0 F1 B0 F2 B1 F3 B2 F4 B3 F5 B4 B5 ");
  EXPECT_EQ(Spell(OneForwardOneBackwardOrder(3, 4, 3)), "F0 B0 F1 B1 F2 B2 ");
  EXPECT_EQ(Spell(OneForwardOneBackwardOrder(0, 4, 2)), "F0 F1 B0 B1 ");
}

GeneratorOptions Exact(int ranks, int steps) {
  GeneratorOptions options;
  options.ranks = ranks;
  options.steps = steps;
  options.microbatches = 1;
  options.layers_per_stage = 1;
  options.jitter = false;
  return options;
}

constexpr int64_t kMiB = 1 << 20;
// Nominal GPU durations (ns) of one layer: forward 40+310+420+60 µs, backward
// 90+900+30+300+300+45+50+35 µs, one fused AdamW kernel 120 µs.
constexpr TimeNs kForward = 830000;
constexpr TimeNs kBackward = 1750000;
constexpr TimeNs kOptimizer = 120000;
// 64 MiB memset at 1 TB/s + 2 µs; 32 KiB token copy at 25 GB/s + 2 µs; 4-byte loss copy.
constexpr TimeNs kMemset = 2000 + 67108;
constexpr TimeNs kTokens = 2000 + 1310;
constexpr TimeNs kLoss = 2000;
// 32 MiB activation at 50 GB/s + 5 µs.
constexpr TimeNs kSend = 5000 + 671088;

TEST(TraceGeneratorTest, SingleStageTwoStepsByHand) {
  absl::StatusOr<GeneratedJob> job = GenerateJob(Exact(1, 2));
  ASSERT_TRUE(job.ok()) << job.status();
  ASSERT_EQ(job->truth.size(), 1u);
  const RankTruth& truth = job->truth[0];
  // Per step: 12 layer kernels + 1 optimizer kernel; memset, token copy, loss copy.
  EXPECT_EQ(truth.kernels, 26);
  EXPECT_EQ(truth.comm_ops, 0);
  EXPECT_EQ(truth.memcpys, 6);
  EXPECT_EQ(truth.steps, 2);
  EXPECT_EQ(truth.compute, 2 * (kForward + kBackward + kOptimizer));
  EXPECT_EQ(truth.memcpy, 2 * (kMemset + kTokens + kLoss));
  EXPECT_EQ(truth.comm, 0);
  // The GPU is busy back to back within a step (launches take ~9 µs, kernels >= 30 µs). Between
  // steps it idles from the loss copy's end until the next memset: 2 µs sync slack + 20 µs tail
  // + 1.5 µs gap + 1 µs + 180 µs data loader + 1.5 µs gap + 8.4 µs memset launch path.
  EXPECT_EQ(truth.idle, 214400);
  EXPECT_EQ(truth.span, truth.compute + truth.memcpy + 214400);
  // 8 GiB of weights and optimizer state plus 3 activations of 32 MiB; reserved in 512 MiB.
  EXPECT_EQ(truth.peak_allocated_bytes, (8192 + 96) * kMiB);
  EXPECT_EQ(truth.peak_reserved_bytes, 17 * 512 * kMiB);
}

TEST(TraceGeneratorTest, TwoStagesByHand) {
  absl::StatusOr<GeneratedJob> job = GenerateJob(Exact(2, 1));
  ASSERT_TRUE(job.ok()) << job.status();
  ASSERT_EQ(job->truth.size(), 2u);
  // Times from the memset start M, identical on both stages. Stage 0: memset, tokens, F until
  // 902418, send until 1578506; its backward receive then waits for stage 1's send.
  // Stage 1: memset; receive posted at 8100 ends at the arrival 1578506; F, B back to back until
  // 4158506; send to 4834594; optimizer to 4278506 and the loss copy to 4280506.
  const RankTruth& first = job->truth[0];
  EXPECT_EQ(first.comm_ops, 2);
  EXPECT_EQ(first.kernels, 13 + 2);
  EXPECT_EQ(first.memcpys, 2);
  EXPECT_EQ(first.span, 4834594 + kBackward + kOptimizer);
  EXPECT_EQ(first.comm, 4834594 - 902418);  // send and receive back to back
  EXPECT_EQ(first.compute, kForward + kBackward + kOptimizer);
  EXPECT_EQ(first.memcpy, kMemset + kTokens);
  EXPECT_EQ(first.idle, 0);
  const RankTruth& last = job->truth[1];
  EXPECT_EQ(last.comm_ops, 2);
  EXPECT_EQ(last.memcpys, 3);
  EXPECT_EQ(last.span, 4834594);
  EXPECT_EQ(last.comm, (1578506 - 8100) + kSend);
  EXPECT_EQ(last.compute, kForward + kBackward + kOptimizer);
  EXPECT_EQ(last.memcpy, kMemset + kTokens + kLoss);
  EXPECT_EQ(last.idle, 0);
}

TEST(TraceGeneratorTest, CountsFollowTheSchedule) {
  GeneratorOptions options;
  options.ranks = 3;
  options.steps = 2;
  options.microbatches = 4;
  options.layers_per_stage = 2;
  absl::StatusOr<GeneratedJob> job = GenerateJob(options);
  ASSERT_TRUE(job.ok()) << job.status();
  // Per step: 4 microbatches x 2 layers x 12 kernels + 2 optimizer kernels = 98 compute kernels.
  // p2p: the first and last stage send and receive once per microbatch, the middle one twice.
  const int64_t comm_per_step[] = {8, 16, 8};
  const int64_t copies_per_step[] = {1 + 4, 1, 1 + 4 + 1};
  for (int stage = 0; stage < 3; ++stage) {
    const RankTruth& truth = job->truth[static_cast<size_t>(stage)];
    EXPECT_EQ(truth.rank, stage);
    EXPECT_EQ(truth.comm_ops, 2 * comm_per_step[stage]) << stage;
    EXPECT_EQ(truth.kernels, 2 * (98 + comm_per_step[stage])) << stage;
    EXPECT_EQ(truth.memcpys, 2 * copies_per_step[stage]) << stage;
    EXPECT_EQ(truth.steps, 2);
    EXPECT_GT(truth.idle, 0);
    EXPECT_LE(truth.compute + truth.memcpy, truth.span);

    const Rank& rank = job->trace.ranks[static_cast<size_t>(stage)];
    EXPECT_EQ(rank.rank, stage);
    EXPECT_EQ(rank.world_size, 3);
    ASSERT_EQ(rank.steps.size(), 2u);
    EXPECT_EQ(rank.steps[1].number, 11);
    int64_t comm_kernels = 0;
    for (const Timeline& timeline : rank.timelines) {
      for (size_t i = 0; i < timeline.intervals.size(); ++i) {
        const Interval& interval = timeline.intervals[i];
        if (interval.kind == IntervalKind::kCommKernel) {
          ++comm_kernels;
          const CommInfo* comm = rank.comm(interval);
          ASSERT_NE(comm, nullptr);
          EXPECT_TRUE(comm->peer == stage - 1 || comm->peer == stage + 1);
        }
        // A stream runs one op at a time.
        if (timeline.kind == TimelineKind::kGpuStream && i > 0) {
          EXPECT_LE(timeline.intervals[i - 1].end, interval.start);
        }
      }
    }
    EXPECT_EQ(comm_kernels, truth.comm_ops);
  }
}

TEST(TraceGeneratorTest, SameSeedSameTraceOtherSeedOtherTrace) {
  GeneratorOptions options;
  options.ranks = 2;
  options.microbatches = 2;
  absl::StatusOr<GeneratedJob> a = GenerateJob(options);
  absl::StatusOr<GeneratedJob> b = GenerateJob(options);
  options.seed = 2;
  absl::StatusOr<GeneratedJob> c = GenerateJob(options);
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  KinetoWriteOptions write;
  EXPECT_TRUE(KinetoJson(a->trace.ranks[1], write) == KinetoJson(b->trace.ranks[1], write));
  EXPECT_EQ(a->truth, b->truth);
  EXPECT_FALSE(KinetoJson(a->trace.ranks[1], write) == KinetoJson(c->trace.ranks[1], write));
}

TEST(TraceGeneratorTest, RejectsEmptyJobs) {
  GeneratorOptions options;
  options.microbatches = 0;
  EXPECT_FALSE(GenerateJob(options).ok());
}

TEST(GeneratorTruthTest, UnionsAndJsonRoundTrip) {
  // Compute [0,10) and [5,20) overlap: 20. Comm [30,40). Copy [20,25). Span 0..40, idle
  // [25,30) = 5.
  std::vector<DeviceOp> ops = {{0, 10, DeviceOpKind::kCompute},
                               {5, 20, DeviceOpKind::kCompute},
                               {30, 40, DeviceOpKind::kComm},
                               {20, 25, DeviceOpKind::kCopy}};
  RankTruth truth = TruthFromDeviceOps(7, ops);
  EXPECT_EQ(truth.kernels, 3);
  EXPECT_EQ(truth.comm_ops, 1);
  EXPECT_EQ(truth.memcpys, 1);
  EXPECT_EQ(truth.compute, 20);
  EXPECT_EQ(truth.comm, 10);
  EXPECT_EQ(truth.memcpy, 5);
  EXPECT_EQ(truth.span, 40);
  EXPECT_EQ(truth.idle, 5);
  truth.steps = 3;
  absl::StatusOr<std::vector<RankTruth>> parsed = ParseTruthJson(TruthJson({truth}));
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  ASSERT_EQ(parsed->size(), 1u);
  EXPECT_EQ((*parsed)[0], truth);
  EXPECT_FALSE(ParseTruthJson("{\"ranks\": [{\"rank\": 1}]}").ok());
}

}  // namespace
}  // namespace bubblescope::bench
