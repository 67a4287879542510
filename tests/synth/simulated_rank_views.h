// What tests of simulated sets compare a loaded rank by: every field a trace file can carry of
// its intervals, annotations, steps and memory samples, with names and comm metadata resolved;
// and the rich job those tests write (roundtrip_test.cc, live_set_test.cc).
#pragma once

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <string>
#include <tuple>
#include <vector>

#include "bubblescope/trace.h"
#include "gtest/gtest.h"
#include "schedule_engine/config.h"
#include "schedule_engine/sim_test_util.h"

namespace bubblescope::sim {

// Every field of an interval that a file can carry, with names and comm
// metadata resolved.
using IntervalView =
    std::tuple<TimeNs, TimeNs, int64_t, int, std::string, int, int64_t, int32_t, int32_t,
               std::string, std::string, std::string, std::vector<int32_t>>;

inline IntervalView View(const Rank& rank, const Interval& interval) {
  const CommInfo* comm = rank.comm(interval);
  if (comm == nullptr) {
    return {interval.start,
            interval.end,
            interval.correlation,
            static_cast<int>(interval.kind),
            std::string(rank.name(interval.name)),
            -1,
            -1,
            -1,
            -1,
            "",
            "",
            "",
            {}};
  }
  const ProcessGroup* group =
      comm->process_group == kNoIndex ? nullptr : &rank.process_groups[comm->process_group];
  return {interval.start,
          interval.end,
          interval.correlation,
          static_cast<int>(interval.kind),
          std::string(rank.name(interval.name)),
          static_cast<int>(comm->kind),
          comm->bytes,
          comm->peer,
          comm->group_size,
          std::string(rank.name(comm->collective)),
          std::string(rank.name(comm->dtype)),
          group == nullptr ? "" : group->name,
          group == nullptr ? std::vector<int32_t>{} : group->ranks};
}

// A timeline's identity and contents.
using TimelineView = std::tuple<int, int32_t, int64_t, int64_t, std::vector<IntervalView>>;

inline std::vector<TimelineView> Timelines(const Rank& rank) {
  std::vector<TimelineView> views;
  for (const Timeline& timeline : rank.timelines) {
    std::vector<IntervalView> intervals;
    for (const Interval& interval : timeline.intervals) intervals.push_back(View(rank, interval));
    views.emplace_back(static_cast<int>(timeline.kind), timeline.device, timeline.pid, timeline.id,
                       std::move(intervals));
  }
  std::sort(views.begin(), views.end());
  return views;
}

using AnnotationView = std::tuple<TimeNs, TimeNs, std::string, int, int32_t, int64_t>;

// With `steps` true only the ProfilerStep#N annotations, else all others.
inline std::vector<AnnotationView> Annotations(const Rank& rank, bool steps) {
  std::vector<AnnotationView> views;
  for (const Annotation& annotation : rank.annotations) {
    std::string name(rank.name(annotation.name));
    if (name.starts_with("ProfilerStep#") != steps) continue;
    views.emplace_back(annotation.start, annotation.end, name, static_cast<int>(annotation.scope),
                       annotation.device, annotation.thread_or_stream);
  }
  return views;
}

using StepView = std::tuple<int64_t, TimeNs, TimeNs>;
using MemoryView = std::tuple<TimeNs, int64_t, int64_t, int32_t>;

inline void ExpectSameRank(const Rank& loaded, const Rank& simulated, bool distributed_info) {
  SCOPED_TRACE("rank " + std::to_string(simulated.rank));
  EXPECT_EQ(loaded.rank, simulated.rank);
  // The loader keeps the path it read; the writer names the file alone.
  EXPECT_EQ(std::filesystem::path(loaded.source_path).filename().string(), simulated.source_path);
  if (distributed_info) {
    EXPECT_EQ(loaded.world_size, simulated.world_size);
    EXPECT_EQ(loaded.backend, simulated.backend);
    // The trace root's host_name, which only the object layouts have.
    EXPECT_EQ(loaded.host, simulated.host);
  }
  EXPECT_EQ(Timelines(loaded), Timelines(simulated));
  EXPECT_EQ(Annotations(loaded, false), Annotations(simulated, false));
  // The simulator keeps ProfilerStep ranges in `steps` only; the reader records
  // each as a step and as a CPU annotation on the main thread.
  EXPECT_TRUE(Annotations(simulated, true).empty());
  std::vector<StepView> loaded_steps;
  std::vector<StepView> simulated_steps;
  std::vector<AnnotationView> step_annotations;
  for (const ProfilerStep& step : loaded.steps) {
    loaded_steps.emplace_back(step.number, step.start, step.end);
  }
  for (const ProfilerStep& step : simulated.steps) {
    simulated_steps.emplace_back(step.number, step.start, step.end);
    step_annotations.emplace_back(step.start, step.end,
                                  "ProfilerStep#" + std::to_string(step.number),
                                  static_cast<int>(AnnotationScope::kCpu), -1, simulated.pid);
  }
  EXPECT_EQ(loaded_steps, simulated_steps);
  EXPECT_EQ(Annotations(loaded, true), step_annotations);
  std::vector<MemoryView> loaded_memory;
  std::vector<MemoryView> simulated_memory;
  for (const MemorySample& sample : loaded.memory) {
    loaded_memory.emplace_back(sample.time, sample.allocated_bytes, sample.reserved_bytes,
                               sample.device);
  }
  for (const MemorySample& sample : simulated.memory) {
    simulated_memory.emplace_back(sample.time, sample.allocated_bytes, sample.reserved_bytes,
                                  sample.device);
  }
  EXPECT_EQ(loaded_memory, simulated_memory);
}

// Jitter makes kernel times odd numbers of ns, clock offsets give each rank its
// own clock, and a slow link, memory, W ops and GPU annotations exercise every
// part of the model.
inline Config RoundTripConfig(Schedule schedule, AnnotationStyle annotations) {
  int32_t v = schedule == Schedule::kInterleaved1F1B ? 2 : 1;
  Config config = testing::IdealConfig(schedule, 3, 3 * v, 1000'000, 2000'000, v);
  for (StageCost& cost : config.costs) cost.weight_grad = 700'000;
  config.iterations = 2;
  config.launch_gap_ns = 5'000;
  config.optimizer_ns = 300'001;
  config.activation_bytes = int64_t{16} << 20;
  config.link = Link{100.0, 5'000};
  config.link_overrides.push_back({1, 2, Link{25.0, 5'000}});
  config.jitter = 0.05;
  config.seed = 7;
  config.clock_offsets_ns = {0, 1'234'567, -7'654'321};
  config.ranks_per_host = 1;  // three hosts, each its own clock
  config.weights_bytes = {int64_t{512} << 20, int64_t{256} << 20, int64_t{384} << 20};
  config.activation_stash_bytes = int64_t{24} << 20;
  config.annotations = annotations;
  config.start_time_ns = 1'700'000'000'123'456'789;
  return config;
}

}  // namespace bubblescope::sim
