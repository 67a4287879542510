// Properties of the produced Trace: determinism, clock offsets, well-formedness (sorted
// timelines, every kernel matched by exactly one launch inside the right ProfilerStep), p2p
// metadata, annotations, stage placement, and config validation.
#include <cstdint>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "schedule_engine/sim_test_util.h"
#include "synth/synthetic_job.h"
#include "synth/trace_builder.h"

namespace bubblescope::sim {
namespace {

using ::testing::HasSubstr;
using testing::IdealConfig;

Config RealisticConfig(Schedule schedule) {
  int32_t v = schedule == Schedule::kInterleaved1F1B ? 2 : 1;
  Config config = IdealConfig(schedule, 3, 6, 1000 * v, 2000 * v, v);
  for (StageCost& cost : config.costs) cost.weight_grad = 700;
  config.iterations = 3;
  config.launch_gap_ns = 40;
  config.optimizer_ns = 300;
  config.activation_bytes = 1 << 16;
  config.link = Link{100.0, 2000};
  config.jitter = 0.1;
  config.seed = 99;
  config.weights_bytes.assign(3, int64_t{64} << 20);
  config.activation_stash_bytes = int64_t{8} << 20;
  return config;
}

Simulation MustSimulate(const Config& config) {
  absl::StatusOr<Simulation> simulation = Simulate(config);
  EXPECT_TRUE(simulation.ok()) << simulation.status();
  return simulation.ok() ? *std::move(simulation) : Simulation{};
}

bool SameDeviceTimes(const Records& a, const Records& b) {
  if (a.ranks.size() != b.ranks.size()) return false;
  for (size_t r = 0; r < a.ranks.size(); ++r) {
    const std::vector<KernelRecord>& ka = a.ranks[r].kernels;
    const std::vector<KernelRecord>& kb = b.ranks[r].kernels;
    if (ka.size() != kb.size()) return false;
    for (size_t k = 0; k < ka.size(); ++k) {
      if (ka[k].start != kb[k].start || ka[k].end != kb[k].end) return false;
    }
  }
  return true;
}

TEST(TraceTest, JitterIsSeededAndBounded) {
  Config config = RealisticConfig(Schedule::k1F1B);
  config.jitter = 0.2;
  config.seed = 42;
  Simulation first = MustSimulate(config);
  Simulation again = MustSimulate(config);
  EXPECT_TRUE(SameDeviceTimes(first.records, again.records));
  EXPECT_EQ(first.truth.idle_ns, again.truth.idle_ns);
  config.seed = 43;
  Simulation other = MustSimulate(config);
  EXPECT_FALSE(SameDeviceTimes(first.records, other.records));

  // Forward kernels cost 1000 / 2 = 500 x (1 + u), |u| <= 0.2.
  std::set<TimeNs> durations;
  for (const RankRecord& rank : first.records.ranks) {
    for (const KernelRecord& kernel : rank.kernels) {
      if (kernel.role != KernelRole::kCompute) continue;
      if (rank.ops[static_cast<size_t>(kernel.op)].op.type != OpType::kForward) continue;
      EXPECT_GE(kernel.end - kernel.start, 400);
      EXPECT_LE(kernel.end - kernel.start, 600);
      durations.insert(kernel.end - kernel.start);
    }
  }
  EXPECT_GT(durations.size(), 10u);  // 3 x 6 x 3 x 2 = 108 draws are not all alike
}

TEST(TraceTest, WithoutJitterKernelsSplitTheCostExactly) {
  Config config = RealisticConfig(Schedule::k1F1B);
  config.jitter = 0.0;
  config.kernels_per_op = 3;
  config.costs[0].forward = 1001;  // 334 + 334 + 333
  Simulation simulation = MustSimulate(config);
  const RankRecord& rank = simulation.records.ranks[0];
  const OpRecord& op = rank.ops[0];
  ASSERT_EQ(op.op.type, OpType::kForward);
  ASSERT_EQ(op.kernel_count, 3);
  const KernelRecord* kernels = &rank.kernels[static_cast<size_t>(op.first_kernel)];
  EXPECT_EQ(kernels[0].end - kernels[0].start, 334);
  EXPECT_EQ(kernels[1].end - kernels[1].start, 334);
  EXPECT_EQ(kernels[2].end - kernels[2].start, 333);
  EXPECT_EQ(simulation.truth.per_stage[0].forward.mean_ns, 1001.0);
}

std::vector<TimeNs> AllTimes(const Rank& rank) {
  std::vector<TimeNs> times;
  for (const Timeline& timeline : rank.timelines) {
    for (const Interval& interval : timeline.intervals) {
      times.push_back(interval.start);
      times.push_back(interval.end);
    }
  }
  for (const Annotation& annotation : rank.annotations) {
    times.push_back(annotation.start);
    times.push_back(annotation.end);
  }
  for (const ProfilerStep& step : rank.steps) {
    times.push_back(step.start);
    times.push_back(step.end);
  }
  for (const MemorySample& sample : rank.memory) times.push_back(sample.time);
  return times;
}

TEST(TraceTest, ClockOffsetsShiftOnlyTheirRank) {
  Config config = RealisticConfig(Schedule::kZeroBubbleH1);
  config.annotations = AnnotationStyle::kPpGpu;
  Simulation plain = MustSimulate(config);
  const std::vector<TimeNs> offsets = {0, 123456789, -5000};
  config.clock_offsets_ns = offsets;
  Simulation shifted = MustSimulate(config);
  for (size_t r = 0; r < 3; ++r) {
    std::vector<TimeNs> before = AllTimes(plain.trace.ranks[r]);
    std::vector<TimeNs> after = AllTimes(shifted.trace.ranks[r]);
    ASSERT_EQ(before.size(), after.size());
    ASSERT_FALSE(before.empty());
    size_t mismatches = 0;
    for (size_t i = 0; i < before.size(); ++i) {
      if (after[i] != before[i] + offsets[r]) ++mismatches;
    }
    EXPECT_EQ(mismatches, 0u) << "rank " << r;
  }
  // The truth stays on the true clock.
  EXPECT_EQ(shifted.truth.idle_ns, plain.truth.idle_ns);
  for (size_t i = 0; i < plain.truth.iterations.size(); ++i) {
    EXPECT_EQ(shifted.truth.iterations[i].window_start, plain.truth.iterations[i].window_start);
    EXPECT_EQ(shifted.truth.iterations[i].window_end, plain.truth.iterations[i].window_end);
  }
}

bool SortedByStartLongerFirst(const std::vector<Interval>& intervals) {
  for (size_t i = 1; i < intervals.size(); ++i) {
    const Interval& a = intervals[i - 1];
    const Interval& b = intervals[i];
    if (a.start > b.start || (a.start == b.start && a.end < b.end)) return false;
  }
  return true;
}

void ExpectWellFormed(const Simulation& simulation) {
  const Trace& trace = simulation.trace;
  for (size_t r = 0; r < trace.ranks.size(); ++r) {
    const Rank& rank = trace.ranks[r];
    SCOPED_TRACE("rank " + std::to_string(r));
    EXPECT_EQ(rank.rank, static_cast<int32_t>(r));
    // Iteration of every kernel, by correlation id, from the engine's records.
    absl::flat_hash_map<int64_t, int32_t> iteration_of;
    for (const KernelRecord& kernel : simulation.records.ranks[r].kernels) {
      iteration_of[kernel.correlation] = kernel.iteration;
    }
    absl::flat_hash_map<int64_t, const Interval*> launches;
    int64_t duplicate_launches = 0;
    ASSERT_FALSE(rank.timelines.empty());
    ASSERT_EQ(rank.timelines[0].kind, TimelineKind::kCpuThread);
    int64_t c10d_ops = 0;
    for (const Interval& interval : rank.timelines[0].intervals) {
      if (interval.kind == IntervalKind::kCpuCommOp) {
        // One c10d::send / c10d::recv_ around each p2p launch, checked against the kernels below.
        const CommInfo* comm = rank.comm(interval);
        ASSERT_NE(comm, nullptr);
        EXPECT_EQ(rank.name(interval.name),
                  comm->kind == CommKind::kSend ? "c10d::send" : "c10d::recv_");
        ++c10d_ops;
        continue;
      }
      ASSERT_EQ(interval.kind, IntervalKind::kRuntime);
      if (rank.name(interval.name) != "cudaLaunchKernel") continue;
      if (!launches.emplace(interval.correlation, &interval).second) ++duplicate_launches;
    }
    EXPECT_EQ(duplicate_launches, 0);
    size_t kernels = 0;
    int64_t p2p_kernels = 0;
    int64_t unmatched = 0;
    int64_t misplaced = 0;
    for (const Timeline& timeline : rank.timelines) {
      EXPECT_TRUE(SortedByStartLongerFirst(timeline.intervals)) << "timeline " << timeline.id;
      for (const Interval& interval : timeline.intervals) EXPECT_LE(interval.start, interval.end);
      if (timeline.kind != TimelineKind::kGpuStream) continue;
      for (const Interval& interval : timeline.intervals) {
        ++kernels;
        const CommInfo* comm = rank.comm(interval);
        if (comm != nullptr && (comm->kind == CommKind::kSend || comm->kind == CommKind::kRecv)) {
          ++p2p_kernels;
        }
        auto launch = launches.find(interval.correlation);
        auto iteration = iteration_of.find(interval.correlation);
        if (launch == launches.end() || iteration == iteration_of.end()) {
          ++unmatched;
          continue;
        }
        const ProfilerStep& step = rank.steps[static_cast<size_t>(iteration->second)];
        const Interval& call = *launch->second;
        if (call.end > interval.start || call.start < step.start || call.end > step.end ||
            interval.end > step.end) {
          ++misplaced;
        }
      }
    }
    EXPECT_EQ(unmatched, 0);
    EXPECT_EQ(misplaced, 0);
    EXPECT_EQ(kernels, launches.size());  // every launch has its kernel
    EXPECT_EQ(c10d_ops, p2p_kernels);
    for (size_t i = 1; i < rank.steps.size(); ++i) {
      EXPECT_EQ(rank.steps[i].number, static_cast<int64_t>(i));
      EXPECT_EQ(rank.steps[i].start, rank.steps[i - 1].end);
    }
    for (size_t i = 1; i < rank.annotations.size(); ++i) {
      EXPECT_LE(rank.annotations[i - 1].start, rank.annotations[i].start);
    }
    for (size_t i = 1; i < rank.memory.size(); ++i) {
      EXPECT_LE(rank.memory[i - 1].time, rank.memory[i].time);
    }
  }
}

// ranks_per_host names each rank's host as Kineto's host_name does; without it none is named.
TEST(TraceTest, RanksOfOneHostNameIt) {
  Config config = RealisticConfig(Schedule::k1F1B);
  EXPECT_EQ(MustSimulate(config).trace.ranks[0].host, "");
  config.ranks_per_host = 2;
  const Simulation simulation = MustSimulate(config);
  ASSERT_EQ(simulation.trace.ranks.size(), 3u);
  EXPECT_EQ(simulation.trace.ranks[0].host, "sim-host-0");
  EXPECT_EQ(simulation.trace.ranks[1].host, "sim-host-0");
  EXPECT_EQ(simulation.trace.ranks[2].host, "sim-host-1");
}

TEST(TraceTest, WellFormedForEverySchedule) {
  for (Schedule schedule : {Schedule::kGpipe, Schedule::k1F1B, Schedule::kInterleaved1F1B,
                            Schedule::kZeroBubbleH1, Schedule::kForwardOnly}) {
    SCOPED_TRACE(std::string(ScheduleName(schedule)));
    Config config = RealisticConfig(schedule);
    config.annotations = AnnotationStyle::kPpCpu;
    config.clock_offsets_ns = {10, -20, 30};
    ExpectWellFormed(MustSimulate(config));
  }
}

TEST(TraceTest, PointToPointMetadata) {
  Config config = RealisticConfig(Schedule::k1F1B);
  Simulation simulation = MustSimulate(config);
  const Rank& middle = simulation.trace.ranks[1];
  std::set<std::pair<int32_t, CommKind>> seen;
  for (const Timeline& timeline : middle.timelines) {
    for (const Interval& interval : timeline.intervals) {
      if (interval.kind != IntervalKind::kCommKernel) continue;
      const CommInfo* comm = middle.comm(interval);
      ASSERT_NE(comm, nullptr);
      if (comm->kind == CommKind::kAllReduce) continue;  // the iteration barrier (barrier_test)
      EXPECT_EQ(middle.name(interval.name),
                "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)");
      EXPECT_EQ(comm->bytes, 1 << 16);
      // The pipeline's process group, as torch records p2p ops, not the pair.
      EXPECT_EQ(comm->group_size, 3);
      ASSERT_NE(comm->process_group, kNoIndex);
      EXPECT_EQ(middle.process_groups[comm->process_group].ranks, (std::vector<int32_t>{0, 1, 2}));
      EXPECT_EQ(middle.name(comm->collective), comm->kind == CommKind::kSend ? "send" : "recv");
      seen.insert({comm->peer, comm->kind});
    }
  }
  // Forwards come from rank 0 and go to rank 2; backwards the other way.
  std::set<std::pair<int32_t, CommKind>> expected = {
      {0, CommKind::kRecv}, {2, CommKind::kSend}, {2, CommKind::kRecv}, {0, CommKind::kSend}};
  EXPECT_EQ(seen, expected);
}

TEST(TraceTest, StagePlacementComesFromTheMap) {
  Config config = IdealConfig(Schedule::k1F1B, 4, 8, 100, 250);
  Simulation identity = MustSimulate(config);
  config.stage_to_rank = {2, 0, 3, 1};
  Simulation permuted = MustSimulate(config);
  EXPECT_EQ(permuted.truth.idle_ns, identity.truth.idle_ns);
  EXPECT_EQ(permuted.truth.stage_to_rank, (std::vector<int32_t>{2, 0, 3, 1}));
  EXPECT_EQ(permuted.truth.per_stage[2].rank, 3);
  // Rank 2 runs stage 0: it only sends forwards to rank 0 (stage 1) and receives backwards from
  // it; rank 1 runs the last stage and talks only to rank 3 (stage 2).
  auto peers = [&](int32_t rank) {
    std::set<int32_t> result;
    const Rank& data = permuted.trace.ranks[static_cast<size_t>(rank)];
    for (const CommInfo& comm : data.comms) {
      // Kernels' comm records; the c10d operators around their launches record no peer.
      if (comm.kind != CommKind::kAllReduce && comm.peer >= 0) result.insert(comm.peer);
    }
    return result;
  };
  EXPECT_EQ(peers(2), (std::set<int32_t>{0}));
  EXPECT_EQ(peers(0), (std::set<int32_t>{2, 3}));
  EXPECT_EQ(peers(1), (std::set<int32_t>{3}));
  // The first stage starts computing at the window start, on rank 2.
  EXPECT_EQ(permuted.truth.iterations[0].ranks[2].split.fill, 0);
  EXPECT_EQ(permuted.truth.iterations[0].ranks[0].split.fill, 100);
}

TEST(TraceTest, GpuAnnotationsNameTheVirtualStage) {
  Config config = IdealConfig(Schedule::kInterleaved1F1B, 2, 2, 200, 400, 2);
  config.annotations = AnnotationStyle::kPpGpu;
  Simulation simulation = MustSimulate(config);
  const Rank& rank = simulation.trace.ranks[1];
  std::set<std::string> names;
  for (const Annotation& annotation : rank.annotations) {
    EXPECT_EQ(annotation.scope, AnnotationScope::kGpu);
    EXPECT_EQ(annotation.thread_or_stream, kComputeStreamId);
    // Chunk costs: F 200 / 2 = 100, B 400 / 2 = 200.
    bool forward = rank.name(annotation.name).find('F') != std::string_view::npos;
    EXPECT_EQ(annotation.end - annotation.start, forward ? 100 : 200);
    names.insert(std::string(rank.name(annotation.name)));
  }
  // Rank 1 holds virtual stages 1 (chunk 0) and 3 (chunk 1).
  EXPECT_EQ(names, (std::set<std::string>{"PP:1F0", "PP:1F1", "PP:1B0", "PP:1B1", "PP:3F0",
                                          "PP:3F1", "PP:3B0", "PP:3B1"}));
}

TEST(TraceTest, CpuAnnotationsCoverTheLaunchesOfTheirOp) {
  Config config = IdealConfig(Schedule::kZeroBubbleH1, 2, 2, 200, 400);
  for (StageCost& cost : config.costs) cost.weight_grad = 100;
  config.annotations = AnnotationStyle::kPpCpu;
  config.launch_gap_ns = 10;
  config.start_time_ns = 0;
  Simulation simulation = MustSimulate(config);
  // Rank 0 runs F0 F1 B0 W0 B1 W1. It launches F0's two kernels and its send in [0,30], F1 in
  // [30,60], B0's recv and two kernels in [60,90] (stage 0 sends no backward), ...
  const Rank& rank = simulation.trace.ranks[0];
  ASSERT_EQ(rank.annotations.size(), 6u);
  EXPECT_EQ(rank.name(rank.annotations[0].name), "Forward 0");
  EXPECT_EQ(rank.annotations[0].start, 0);
  EXPECT_EQ(rank.annotations[0].end, 30);
  EXPECT_EQ(rank.name(rank.annotations[2].name), "Backward 0");
  EXPECT_EQ(rank.annotations[2].start, 60);
  EXPECT_EQ(rank.annotations[2].end, 90);
  EXPECT_EQ(rank.name(rank.annotations[3].name), "WeightGrad 0");
  EXPECT_EQ(rank.name(rank.annotations[4].name), "Backward 1");
  EXPECT_EQ(rank.annotations[0].scope, AnnotationScope::kCpu);
  EXPECT_EQ(rank.annotations[0].thread_or_stream, ProcessId(0));
}

// LaunchStyle::kTorch: rank 0 of a p=2, m=2 1f1b job runs F0 F1 B0 B1. Its main thread launches
// the forwards' kernels, the p2p ops and the sync; the autograd thread launches the backwards'
// four kernels; every compute kernel has a GEMM name with no phase in it.
TEST(TraceTest, TorchLaunchesPutBackwardOnTheAutogradThread) {
  Config config = IdealConfig(Schedule::k1F1B, 2, 2, 200, 400);
  config.launches = LaunchStyle::kTorch;
  Simulation simulation = MustSimulate(config);
  const Rank& rank = simulation.trace.ranks[0];
  std::map<int64_t, int> launches_by_thread;
  for (const Timeline& timeline : rank.timelines) {
    if (timeline.kind == TimelineKind::kCpuThread) {
      for (const Interval& interval : timeline.intervals) {
        if (rank.name(interval.name) == "cudaLaunchKernel") ++launches_by_thread[timeline.id];
      }
      continue;
    }
    for (const Interval& interval : timeline.intervals) {
      if (interval.kind != IntervalKind::kComputeKernel) continue;
      const std::string_view name = rank.name(interval.name);
      EXPECT_TRUE(name.starts_with("ampere_bf16_s16816gemm_bf16")) << name;
      EXPECT_EQ(name.find("backward"), std::string_view::npos) << name;
    }
  }
  // Main: F0, F1 (2 kernels each), their 2 sends, the 2 recvs of B0 and B1, the all-reduce.
  EXPECT_EQ(launches_by_thread[ProcessId(0)], 9);
  EXPECT_EQ(launches_by_thread[AutogradThreadId(0)], 4);
}

TEST(TraceTest, RejectsInvalidConfigs) {
  struct Case {
    const char* field;
    void (*mutate)(Config*);
  };
  const Case cases[] = {
      {"stages", [](Config* c) { c->stages = 0; }},
      {"microbatches", [](Config* c) { c->microbatches = 0; }},
      {"costs has", [](Config* c) { c->costs.pop_back(); }},
      {"costs[1].forward", [](Config* c) { c->costs[1].forward = 0; }},
      {"virtual_stages", [](Config* c) { c->virtual_stages = 2; }},
      {"multiple of stages",
       [](Config* c) {
         c->schedule = Schedule::kInterleaved1F1B;
         c->virtual_stages = 2;
         c->microbatches = 6;
       }},
      {"costs[0].weight_grad", [](Config* c) { c->schedule = Schedule::kZeroBubbleH1; }},
      {"jitter", [](Config* c) { c->jitter = 1.0; }},
      {"jitter", [](Config* c) { c->jitter = std::numeric_limits<double>::quiet_NaN(); }},
      {"link.gbps", [](Config* c) { c->link.gbps = 0.0; }},
      {"link_overrides[0]",
       [](Config* c) {
         c->link_overrides.push_back({1, 1, Link{}});
       }},
      {"stage_to_rank",
       [](Config* c) {
         c->stage_to_rank = {0, 0, 1, 2};
       }},
      {"clock_offsets_ns",
       [](Config* c) {
         c->clock_offsets_ns = {1, 2};
       }},
      {"weights_bytes", [](Config* c) { c->weights_bytes = {1}; }},
      {"ranks_per_host", [](Config* c) { c->ranks_per_host = 5; }},
      // One host, one clock: ranks 0 and 1 share a host but not an offset.
      {"ranks_per_host",
       [](Config* c) {
         c->ranks_per_host = 2;
         c->clock_offsets_ns = {0, 1, 2, 2};
       }},
      {"launch_gap_ns", [](Config* c) { c->launch_gap_ns = -1; }},
      {"iterations", [](Config* c) { c->iterations = 0; }},
      {"kernels_per_op", [](Config* c) { c->kernels_per_op = 0; }},
      {"overflow",
       [](Config* c) {
         // Up to 2 stages x 8 microbatches x 3000 s x 1.9 (jitter) x 12000 iterations = 1.1e18 ns
         // after 3e18: past the 4e18 ceiling.
         c->stages = 2;
         c->costs.assign(2, StageCost{1'000'000'000'000, 1'000'000'000'000, 1'000'000'000'000});
         c->jitter = 0.9;
         c->iterations = 12000;
         c->start_time_ns = 3'000'000'000'000'000'000;
       }},
      {"too large", [](Config* c) { c->iterations = 1'000'000; }},
      {"context parallel 0", [](Config* c) { c->parallel.context = 0; }},
      {"product <= 1024",
       [](Config* c) {
         c->parallel.tensor = 8;
         c->parallel.context = 4;
         c->parallel.data = 64;
       }},
      // 512 replicas are allowed, but not of a pipeline of over a million kernels.
      {"kernels over every replica",
       [](Config* c) {
         c->microbatches = 64;
         c->iterations = 512;
         c->parallel.data = 512;
       }},
      // The expert layout spreads over context x data ranks.
      {"expert parallel 3 must be >= 1 and divide context x data parallel (4)",
       [](Config* c) {
         c->parallel.context = 2;
         c->parallel.data = 2;
         c->parallel.expert = 3;
       }},
      {"expert-parallel share", [](Config* c) { c->parallel.expert_share = 1.0; }},
      {"context exchange", [](Config* c) { c->parallel.context_exchange_ns = -1; }},
  };
  for (const Case& test_case : cases) {
    Config config = IdealConfig(Schedule::k1F1B, 4, 8, 100, 200);
    test_case.mutate(&config);
    absl::StatusOr<Simulation> simulation = Simulate(config);
    ASSERT_FALSE(simulation.ok()) << test_case.field;
    EXPECT_EQ(simulation.status().code(), absl::StatusCode::kInvalidArgument) << test_case.field;
    EXPECT_THAT(std::string(simulation.status().message()), HasSubstr(test_case.field));
  }
}

}  // namespace
}  // namespace bubblescope::sim
