// A simulated job written live (synth/live_set.h), on an injected clock so nothing sleeps: a rank
// sliced by its profiler steps; the growing array files read between two writes hold exactly
// the iterations written so far, and at the end exactly the simulated ranks; the cycle files are
// one whole document per rank per iteration that the loader takes for cycles; the writes keep
// their pace; and what cannot be written live is refused before anything is written.
#include "synth/live_set.h"

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "loader/trace_loader.h"
#include "support/test_files.h"
#include "synth/simulated_rank_views.h"
#include "synth/simulated_set.h"
#include "synth/synthetic_job.h"

namespace bubblescope::sim {
namespace {

namespace fs = std::filesystem;
using ::bubblescope::testing::ReadFile;
using ::bubblescope::testing::TempDir;
using ::bubblescope::testing::WriteFile;

constexpr int64_t kStartNs = 1'800'000'000'000'000'000;  // the fake wall clock's first reading

// A wall clock that moves only when slept on, recording each sleep; `on_sleep` sees the directory
// between two iterations' writes (its argument: the iterations written so far).
class FakeClock {
 public:
  LiveClock Clock() {
    return LiveClock{.now_ns = [this] { return now_; },
                     .sleep_until_ns =
                         [this](int64_t until) {
                           sleeps_.push_back(until);
                           if (on_sleep) on_sleep(sleeps_.size());
                           now_ = std::max(now_, until);
                         }};
  }
  const std::vector<int64_t>& sleeps() const { return sleeps_; }
  std::function<void(size_t)> on_sleep;

 private:
  int64_t now_ = kStartNs;
  std::vector<int64_t> sleeps_;
};

Simulation MakeJob(const Config& config) {
  absl::StatusOr<Simulation> simulation = Simulate(config);
  EXPECT_TRUE(simulation.ok()) << simulation.status();
  return *std::move(simulation);
}

absl::StatusOr<Trace> Load(const std::vector<std::string>& paths, int32_t cycle = 0) {
  LoadOptions options;
  options.jobs = 1;
  options.profiler_cycle = cycle;
  return LoadTrace(paths, options);
}

std::vector<int64_t> StepNumbers(const Rank& rank) {
  std::vector<int64_t> numbers;
  for (const ProfilerStep& step : rank.steps) numbers.push_back(step.number);
  return numbers;
}

std::vector<int64_t> FirstSteps(size_t count) {
  std::vector<int64_t> numbers;
  for (size_t i = 0; i < count; ++i) numbers.push_back(static_cast<int64_t>(i));
  return numbers;
}

// The start of the launch of each correlation id on the rank's CPU threads.
std::vector<std::pair<int64_t, TimeNs>> Launches(const Rank& rank) {
  std::vector<std::pair<int64_t, TimeNs>> launches;
  for (const Timeline& timeline : rank.timelines) {
    if (timeline.kind != TimelineKind::kCpuThread) continue;
    for (const Interval& interval : timeline.intervals) {
      if (interval.kind == IntervalKind::kRuntime && interval.correlation != 0) {
        launches.emplace_back(interval.correlation, interval.start);
      }
    }
  }
  return launches;
}

// How many of the simulated rank's intervals a reader of its first `iterations` slices sees:
// CPU intervals starting before the next step, device ops launched before it (every simulated
// device op has its launch).
struct IntervalCounts {
  size_t cpu = 0;
  size_t device = 0;
  bool operator==(const IntervalCounts&) const = default;
};

IntervalCounts Expected(const Rank& rank, size_t iterations) {
  const TimeNs cut = iterations < rank.steps.size() ? rank.steps[iterations].start : kMaxTimeNs;
  const std::vector<std::pair<int64_t, TimeNs>> launches = Launches(rank);
  IntervalCounts counts;
  for (const Timeline& timeline : rank.timelines) {
    for (const Interval& interval : timeline.intervals) {
      if (timeline.kind == TimelineKind::kCpuThread) {
        counts.cpu += interval.start < cut ? 1 : 0;
        continue;
      }
      auto launch = std::find_if(launches.begin(), launches.end(),
                                 [&](const auto& l) { return l.first == interval.correlation; });
      EXPECT_NE(launch, launches.end()) << "a simulated device op without its launch";
      if (launch != launches.end() && launch->second < cut) ++counts.device;
    }
  }
  return counts;
}

IntervalCounts Counted(const Rank& rank) {
  IntervalCounts counts;
  for (const Timeline& timeline : rank.timelines) {
    (timeline.kind == TimelineKind::kCpuThread ? counts.cpu : counts.device) +=
        timeline.intervals.size();
  }
  return counts;
}

// A hand-made rank, times in ns: steps 0 [100, 200) and 1 [200, 300) on thread 1; stream 7 of
// device 0.
Rank HandMadeRank() {
  Rank rank;
  rank.rank = 3;
  rank.pid = 1;
  const NameId launch = rank.names.Intern("cudaLaunchKernel");
  const NameId kernel = rank.names.Intern("gemm");
  const NameId op = rank.names.Intern("aten::mm");
  Timeline cpu{.kind = TimelineKind::kCpuThread, .device = -1, .pid = 1, .id = 1, .intervals = {}};
  cpu.intervals = {
      {.start = 50, .end = 55, .correlation = 1, .name = launch, .kind = IntervalKind::kRuntime},
      {.start = 190, .end = 195, .correlation = 2, .name = launch, .kind = IntervalKind::kRuntime},
      {.start = 250, .end = 260, .name = op, .kind = IntervalKind::kCpuOp},
      {.start = 350, .end = 360, .name = op, .kind = IntervalKind::kCpuOp},  // after the last step
  };
  Timeline gpu{.kind = TimelineKind::kGpuStream, .device = 0, .pid = 0, .id = 7, .intervals = {}};
  gpu.intervals = {
      {.start = 60, .end = 90, .correlation = 1, .name = kernel},    // setup, before step 0
      {.start = 210, .end = 250, .correlation = 2, .name = kernel},  // launched in step 0
      {.start = 260, .end = 270, .correlation = 9, .name = kernel},  // no launch recorded
  };
  rank.timelines = {cpu, gpu};
  rank.steps = {{.number = 0, .start = 100, .end = 200}, {.number = 1, .start = 200, .end = 300}};
  const NameId range = rank.names.Intern("PP:0F1");
  rank.annotations = {
      {.start = 150,
       .end = 160,
       .name = range,
       .scope = AnnotationScope::kCpu,
       .thread_or_stream = 1},
      // On stream 7 around the kernel launched in step 0.
      {.start = 205,
       .end = 255,
       .name = range,
       .scope = AnnotationScope::kGpu,
       .device = 0,
       .thread_or_stream = 7},
  };
  rank.memory = {{.time = 20, .allocated_bytes = 1}, {.time = 205, .allocated_bytes = 2}};
  return rank;
}

std::vector<TimeNs> Starts(const Timeline& timeline) {
  std::vector<TimeNs> starts;
  for (const Interval& interval : timeline.intervals) starts.push_back(interval.start);
  return starts;
}

TEST(SliceByStepTest, EachEventGoesWithTheStepThatHandsItOver) {
  const Rank rank = HandMadeRank();
  const std::vector<Rank> slices = SliceByStep(rank);
  ASSERT_EQ(slices.size(), 2u);
  // Slice 0: the setup launch and kernel, the launch at 190 and its kernel though it runs in step
  // 1, the CPU range, the GPU range around that kernel, the setup memory sample.
  EXPECT_EQ(Starts(slices[0].timelines[0]), (std::vector<TimeNs>{50, 190}));
  EXPECT_EQ(Starts(slices[0].timelines[1]), (std::vector<TimeNs>{60, 210}));
  ASSERT_EQ(slices[0].annotations.size(), 2u);
  EXPECT_EQ(slices[0].annotations[1].scope, AnnotationScope::kGpu);
  ASSERT_EQ(slices[0].memory.size(), 1u);
  EXPECT_EQ(slices[0].memory[0].time, 20);
  EXPECT_EQ(StepNumbers(slices[0]), (std::vector<int64_t>{0}));
  // Slice 1: the op in step 1 and the one after the last step, the kernel no launch names (by
  // its own start), the memory sample at 205.
  EXPECT_EQ(Starts(slices[1].timelines[0]), (std::vector<TimeNs>{250, 350}));
  EXPECT_EQ(Starts(slices[1].timelines[1]), (std::vector<TimeNs>{260}));
  EXPECT_TRUE(slices[1].annotations.empty());
  ASSERT_EQ(slices[1].memory.size(), 1u);
  EXPECT_EQ(slices[1].memory[0].time, 205);
  EXPECT_EQ(StepNumbers(slices[1]), (std::vector<int64_t>{1}));
  // Every slice keeps the rank's identity and its names, so its ids still read.
  for (const Rank& slice : slices) {
    EXPECT_EQ(slice.rank, 3);
    EXPECT_EQ(slice.name(slice.timelines[1].intervals[0].name), "gemm");
  }
}

TEST(SliceByStepTest, ARankWithoutStepsIsOneSlice) {
  Rank rank = HandMadeRank();
  rank.steps.clear();
  const std::vector<Rank> slices = SliceByStep(rank);
  ASSERT_EQ(slices.size(), 1u);
  EXPECT_EQ(Counted(slices[0]), Counted(rank));
  EXPECT_EQ(slices[0].annotations.size(), 2u);
  EXPECT_EQ(slices[0].memory.size(), 2u);
}

TEST(LiveSetTest, GrowingArrayFilesHoldTheIterationsWrittenSoFar) {
  const Config config = RoundTripConfig(Schedule::k1F1B, AnnotationStyle::kPpGpu);
  Simulation simulation = MakeJob(config);
  const Trace& simulated = simulation.trace;  // the writer changes only each rank's source_path
  const size_t iterations = simulated.ranks[0].steps.size();
  ASSERT_EQ(iterations, 2u);
  TempDir dir;
  FakeClock clock;
  size_t looked = 0;
  clock.on_sleep = [&](size_t written) {
    ++looked;
    absl::StatusOr<Trace> loaded = Load({dir.path()});
    ASSERT_TRUE(loaded.ok()) << loaded.status();
    ASSERT_EQ(loaded->ranks.size(), simulated.ranks.size());
    for (size_t r = 0; r < simulated.ranks.size(); ++r) {
      const Rank& rank = loaded->ranks[r];
      SCOPED_TRACE("rank " + std::to_string(r));
      EXPECT_EQ(StepNumbers(rank), FirstSteps(written));
      EXPECT_EQ(Counted(rank), Expected(simulated.ranks[r], written));
      // Between two writes the file ends after a whole event: legal without its ']'.
      EXPECT_EQ(rank.stats.count(ImportCounter::kUnterminatedArray), 1u);
      EXPECT_EQ(rank.stats.count(ImportCounter::kTruncated), 0u);
    }
    // A reader that comes in the middle of a write reads the file as cut short, up to its last
    // complete event.
    TempDir cut_dir;
    const std::string whole = ReadFile(dir.path() + "/rank1.pt.trace.json");
    const std::string cut = cut_dir.path() + "/rank1.pt.trace.json";
    WriteFile(cut, std::string_view(whole).substr(0, whole.size() - 20));
    absl::StatusOr<Trace> cut_trace = Load({cut});
    ASSERT_TRUE(cut_trace.ok()) << cut_trace.status();
    EXPECT_EQ(cut_trace->ranks[0].stats.count(ImportCounter::kTruncated), 1u);
  };
  SetWriteOptions options;
  options.kineto.layout = KinetoLayout::kBareArray;
  absl::StatusOr<std::vector<std::string>> written =
      WriteSimulationSetLive(config, simulation, dir.path(), options,
                             LiveWriteOptions{.interval_ns = 1'000'000, .clock = clock.Clock()});
  ASSERT_TRUE(written.ok()) << written.status();
  EXPECT_EQ(looked, iterations - 1);
  EXPECT_EQ(*written, (std::vector<std::string>{
                          dir.path() + "/rank0.pt.trace.json", dir.path() + "/rank1.pt.trace.json",
                          dir.path() + "/rank2.pt.trace.json", dir.path() + "/truth.json"}));
  // Closed at the end as the collector closes its file.
  EXPECT_TRUE(ReadFile(written->front()).ends_with("}\n]\n"));
  EXPECT_TRUE(ReadFile(written->front()).starts_with("[\n{"));

  // The finished files are the simulated ranks, event for event, and read whole.
  absl::StatusOr<Trace> loaded = Load({dir.path()});
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  ASSERT_EQ(loaded->ranks.size(), simulated.ranks.size());
  for (size_t r = 0; r < loaded->ranks.size(); ++r) {
    ExpectSameRank(loaded->ranks[r], simulation.trace.ranks[r], /*distributed_info=*/false);
    EXPECT_EQ(loaded->ranks[r].stats.count(ImportCounter::kUnterminatedArray), 0u);
    EXPECT_EQ(loaded->ranks[r].stats.count(ImportCounter::kTruncated), 0u);
  }
}

// A device op of each loaded rank whose launch is not in the same file.
size_t KernelsWithoutTheirLaunch(const Rank& rank) {
  const std::vector<std::pair<int64_t, TimeNs>> launches = Launches(rank);
  size_t orphans = 0;
  for (const Timeline& timeline : rank.timelines) {
    if (timeline.kind != TimelineKind::kGpuStream) continue;
    for (const Interval& interval : timeline.intervals) {
      orphans += std::none_of(launches.begin(), launches.end(),
                              [&](const auto& l) { return l.first == interval.correlation; });
    }
  }
  return orphans;
}

TEST(LiveSetTest, CycleFilesAreOneDocumentPerRankPerIteration) {
  Config config = RoundTripConfig(Schedule::k1F1B, AnnotationStyle::kPpGpu);
  config.iterations = 3;
  config.ranks_per_host = 0;  // no host named: the worker name is "sim-host_<pid>"
  Simulation simulation = MakeJob(config);
  const Trace& simulated = simulation.trace;  // the writer changes only each rank's source_path
  TempDir dir;
  FakeClock clock;
  constexpr int64_t kInterval = 250'000'000;  // --live 0.25
  clock.on_sleep = [&](size_t written) {
    // One file per rank for each iteration written so far, nothing more.
    size_t files = 0;
    for (const auto& entry : fs::directory_iterator(dir.path())) {
      files += entry.path().string().ends_with(".pt.trace.json") ? 1 : 0;
    }
    EXPECT_EQ(files, written * simulated.ranks.size());
    EXPECT_FALSE(fs::exists(dir.path() + "/truth.json"));
  };
  SetWriteOptions options;  // the new layout
  absl::StatusOr<std::vector<std::string>> written =
      WriteSimulationSetLive(config, simulation, dir.path(), options,
                             LiveWriteOptions{.interval_ns = kInterval, .clock = clock.Clock()});
  ASSERT_TRUE(written.ok()) << written.status();
  // Each iteration's files stamped with the clock when written: the start, then a write every
  // 0.25 s after it.
  EXPECT_EQ(clock.sleeps(), (std::vector<int64_t>{kStartNs + kInterval, kStartNs + 2 * kInterval}));
  ASSERT_EQ(written->size(), 3u * 3u + 1u);
  EXPECT_EQ((*written)[0], dir.path() + "/sim-host_10000.1800000000000000000.pt.trace.json");
  EXPECT_EQ((*written)[2], dir.path() + "/sim-host_10002.1800000000000000000.pt.trace.json");
  EXPECT_EQ((*written)[3], dir.path() + "/sim-host_10000.1800000000250000000.pt.trace.json");
  EXPECT_EQ((*written)[8], dir.path() + "/sim-host_10002.1800000000500000000.pt.trace.json");
  EXPECT_EQ(written->back(), dir.path() + "/truth.json");

  // Each file alone: a complete document of one step, its rank named by its distributedInfo.
  for (size_t i = 0; i < 9; ++i) {
    absl::StatusOr<Trace> one = Load({(*written)[i]});
    ASSERT_TRUE(one.ok()) << one.status();
    ASSERT_EQ(one->ranks.size(), 1u);
    const Rank& rank = one->ranks[0];
    EXPECT_EQ(rank.rank, static_cast<int32_t>(i % 3));
    EXPECT_EQ(StepNumbers(rank), (std::vector<int64_t>{static_cast<int64_t>(i / 3)}));
    EXPECT_EQ(rank.stats.count(ImportCounter::kTruncated), 0u);
    EXPECT_EQ(rank.stats.count(ImportCounter::kUnterminatedArray), 0u);
    EXPECT_EQ(KernelsWithoutTheirLaunch(rank), 0u);
  }

  // The folder: three cycles, the newest read by default, each by its number; together they
  // hold every simulated event once.
  absl::StatusOr<Trace> newest = Load({dir.path()});
  ASSERT_TRUE(newest.ok()) << newest.status();
  ASSERT_EQ(newest->profiler_cycles.found.size(), 3u);
  EXPECT_EQ(newest->profiler_cycles.chosen, 3);
  for (const ProfilerCycle& cycle : newest->profiler_cycles.found) {
    EXPECT_TRUE(cycle.complete);
    EXPECT_EQ(cycle.files, 3);
  }
  std::vector<IntervalCounts> total(3);
  for (int32_t cycle = 1; cycle <= 3; ++cycle) {
    absl::StatusOr<Trace> loaded = Load({dir.path()}, cycle);
    ASSERT_TRUE(loaded.ok()) << loaded.status();
    ASSERT_EQ(loaded->ranks.size(), 3u);
    for (size_t r = 0; r < 3; ++r) {
      EXPECT_EQ(StepNumbers(loaded->ranks[r]), (std::vector<int64_t>{cycle - 1}));
      total[r].cpu += Counted(loaded->ranks[r]).cpu;
      total[r].device += Counted(loaded->ranks[r]).device;
    }
  }
  for (size_t r = 0; r < 3; ++r) EXPECT_EQ(total[r], Counted(simulated.ranks[r]));
}

TEST(LiveSetTest, AClockThatDoesNotMoveStillNamesEachCycleApart) {
  Config config = RoundTripConfig(Schedule::k1F1B, AnnotationStyle::kNone);
  config.iterations = 3;
  Simulation simulation = MakeJob(config);
  TempDir dir;
  LiveClock frozen{.now_ns = [] { return int64_t{77}; }, .sleep_until_ns = [](int64_t) {}};
  SetWriteOptions options;
  options.kineto.layout = KinetoLayout::kAbsoluteMicros;
  options.gzip = true;  // torch's use_gzip: each cycle file is whole, so it may be compressed
  absl::StatusOr<std::vector<std::string>> written = WriteSimulationSetLive(
      config, simulation, dir.path(), options, LiveWriteOptions{.interval_ns = 0, .clock = frozen});
  ASSERT_TRUE(written.ok()) << written.status();
  // Three hosts of one rank each (RoundTripConfig), each named in its worker name.
  EXPECT_EQ((*written)[0], dir.path() + "/sim-host-0_10000.77.pt.trace.json.gz");
  EXPECT_EQ((*written)[4], dir.path() + "/sim-host-1_10001.78.pt.trace.json.gz");
  EXPECT_EQ((*written)[8], dir.path() + "/sim-host-2_10002.79.pt.trace.json.gz");
  absl::StatusOr<Trace> loaded = Load({dir.path()});
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->profiler_cycles.found.size(), 3u);
}

TEST(LiveSetTest, AnEarlierSetIsInTheWayUnlessReplaced) {
  const Config config = RoundTripConfig(Schedule::k1F1B, AnnotationStyle::kNone);
  TempDir dir;
  const LiveClock frozen{.now_ns = [] { return int64_t{5}; }, .sleep_until_ns = [](int64_t) {}};
  {
    Simulation simulation = MakeJob(config);
    ASSERT_TRUE(WriteSimulationSetLive(config, simulation, dir.path(), SetWriteOptions{},
                                       LiveWriteOptions{.clock = frozen})
                    .ok());
  }
  const std::string theirs = dir.Write("node7_123.456.pt.trace.json", "{}");
  Simulation simulation = MakeJob(config);
  absl::StatusOr<std::vector<std::string>> refused = WriteSimulationSetLive(
      config, simulation, dir.path(), SetWriteOptions{}, LiveWriteOptions{.clock = frozen});
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kAlreadyExists) << refused.status();
  // Replaced: the earlier run's cycle files go (this run grows array files), a profiler's
  // own file stays.
  SetWriteOptions overwrite;
  overwrite.kineto.layout = KinetoLayout::kBareArray;
  overwrite.overwrite = true;
  absl::StatusOr<std::vector<std::string>> replaced = WriteSimulationSetLive(
      config, simulation, dir.path(), overwrite, LiveWriteOptions{.clock = frozen});
  ASSERT_TRUE(replaced.ok()) << replaced.status();
  std::set<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir.path())) {
    names.insert(entry.path().filename().string());
  }
  EXPECT_EQ(names,
            (std::set<std::string>{"node7_123.456.pt.trace.json", "rank0.pt.trace.json",
                                   "rank1.pt.trace.json", "rank2.pt.trace.json", "truth.json"}));
}

TEST(LiveSetTest, WhatCannotBeReadWhileWrittenIsRefusedBeforeAnyWrite) {
  const Config config = RoundTripConfig(Schedule::k1F1B, AnnotationStyle::kNone);
  Simulation simulation = MakeJob(config);
  TempDir dir;
  const std::string target = dir.path() + "/set";
  SetWriteOptions nsys;
  nsys.nsys = NsysWriteOptions{};
  absl::StatusOr<std::vector<std::string>> written =
      WriteSimulationSetLive(config, simulation, target, nsys, LiveWriteOptions{});
  EXPECT_EQ(written.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(written.status().message(),
            "an Nsight Systems export is made after its run ends: it cannot be written live");
  SetWriteOptions gzip_array;
  gzip_array.kineto.layout = KinetoLayout::kBareArray;
  gzip_array.gzip = true;
  written = WriteSimulationSetLive(config, simulation, target, gzip_array, LiveWriteOptions{});
  EXPECT_EQ(written.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_FALSE(fs::exists(target));
}

}  // namespace
}  // namespace bubblescope::sim
