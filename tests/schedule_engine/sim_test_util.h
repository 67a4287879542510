// Shared helpers of the simulator tests.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "bubblescope/trace.h"
#include "gtest/gtest.h"
#include "schedule_engine/config.h"
#include "schedule_engine/program.h"

namespace bubblescope::sim::testing {

// A job with free links (zero latency, infinite bandwidth), no launch gap, no optimizer, no
// jitter, one iteration and the same costs on every stage: the textbook pipeline.
inline Config IdealConfig(Schedule schedule, int32_t p, int32_t m, TimeNs forward, TimeNs backward,
                          int32_t v = 1) {
  Config config;
  config.schedule = schedule;
  config.stages = p;
  config.microbatches = m;
  config.virtual_stages = v;
  config.iterations = 1;
  config.costs.assign(static_cast<size_t>(p), StageCost{forward, backward, 0});
  config.kernels_per_op = 2;
  config.activation_bytes = 4096;
  config.link = Link{std::numeric_limits<double>::infinity(), 0};
  config.launch_gap_ns = 0;
  config.optimizer_ns = 0;
  config.jitter = 0.0;
  config.start_time_ns = 1'000'000;
  return config;
}

// "F0 F1 B0 ..." (with chunks: "F1:0" = chunk 1, microbatch 0).
inline std::string ProgramText(const std::vector<Op>& program, bool chunks) {
  std::string text;
  for (const Op& op : program) {
    if (!text.empty()) text += ' ';
    text += OpLetter(op.type);
    if (chunks) text += std::to_string(op.chunk) + ":";
    text += std::to_string(op.microbatch);
  }
  return text;
}

// One job of the accuracy grid.
struct GridJob {
  int32_t p = 0;
  int32_t m = 0;
  int32_t v = 0;  // chunks per rank; 0: the test's default for the schedule
};

// The (p, m) grid every accuracy test runs each schedule over, defined once: p in {2, 4, 8} and
// m in {1, 4, 8, 32}, interleaved only where p divides m. Under the sanitizers
// (BUBBLESCOPE_SANITIZED) p in {2, 4} and m in {1, 4, 8}: the whole grid runs in the normal build
// already, and the smaller jobs take every code path the sanitizers check at a tenth of the time.
inline std::vector<GridJob> GridJobs(Schedule schedule) {
#ifdef BUBBLESCOPE_SANITIZED
  constexpr std::array<int32_t, 2> kStages = {2, 4};
  constexpr std::array<int32_t, 3> kMicrobatches = {1, 4, 8};
#else
  constexpr std::array<int32_t, 3> kStages = {2, 4, 8};
  constexpr std::array<int32_t, 4> kMicrobatches = {1, 4, 8, 32};
#endif
  std::vector<GridJob> jobs;
  for (int32_t p : kStages) {
    for (int32_t m : kMicrobatches) {
      if (schedule == Schedule::kInterleaved1F1B && m % p != 0) continue;
      jobs.push_back({p, m});
    }
  }
  return jobs;
}

// The looped GPipe jobs (gpipe with v chunks per rank, torch's ScheduleLoopedBFS) the accuracy
// tests run: v in {2, 3}, p in {2, 4}, m in {4, 8}; m = 4 on p = 4 has stage 0 wait between
// chunks, the others do not.
inline std::vector<GridJob> LoopedGpipeJobs() {
  std::vector<GridJob> jobs;
  for (int32_t v : {2, 3}) {
    for (int32_t p : {2, 4}) {
      for (int32_t m : {4, 8}) jobs.push_back({p, m, v});
    }
  }
  return jobs;
}

// Every schedule family, for tests parameterised over them, and their test names ("zbh1").
inline constexpr std::array<Schedule, 5> kAllSchedules = {
    Schedule::kGpipe, Schedule::k1F1B, Schedule::kInterleaved1F1B, Schedule::kZeroBubbleH1,
    Schedule::kForwardOnly};
inline std::string ScheduleTestName(const ::testing::TestParamInfo<Schedule>& param) {
  std::string name(ScheduleName(param.param));
  std::erase(name, '-');
  return name;
}

// How a simulated trace marks its iterations, for tests that must find them every way.
enum class Marking {
  kProfilerSteps,  // as simulated: ProfilerStep ranges
  kMarker,         // a `train_step` CPU range per iteration instead of the ProfilerStep ranges
  kUnmarked,       // nothing: the iterations come from the repeating schedule
};
inline constexpr std::array<Marking, 3> kAllMarkings = {Marking::kProfilerSteps, Marking::kMarker,
                                                        Marking::kUnmarked};

inline const char* MarkingName(Marking marking) {
  switch (marking) {
    case Marking::kProfilerSteps:
      return "profiler steps";
    case Marking::kMarker:
      return "marker";
    case Marking::kUnmarked:
      return "unmarked";
  }
  return "?";
}

// Rewrites the simulated trace's iteration marking; returns the iteration marker that finds the
// iterations again (none for profiler steps and for an unmarked trace).
inline std::optional<std::string> Remark(Marking marking, Trace& trace) {
  if (marking == Marking::kProfilerSteps) return std::nullopt;
  for (Rank& rank : trace.ranks) {
    if (marking == Marking::kMarker) {
      const NameId name = rank.names.Intern("train_step");
      for (const ProfilerStep& step : rank.steps) {
        rank.annotations.push_back(Annotation{.start = step.start,
                                              .end = step.end,
                                              .name = name,
                                              .scope = AnnotationScope::kCpu,
                                              .device = -1,
                                              .thread_or_stream = rank.pid});
      }
      std::stable_sort(rank.annotations.begin(), rank.annotations.end(),
                       [](const Annotation& a, const Annotation& b) { return a.start < b.start; });
    }
    rank.steps.clear();
  }
  if (marking == Marking::kMarker) return "^train_step$";
  return std::nullopt;
}

}  // namespace bubblescope::sim::testing
