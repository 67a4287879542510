// Member-by-member comparison of two Ranks, for the digest's round-trip tests: a digest must give
// back every member the writer was given (source_path aside, which is the file read).
#pragma once

#include <gtest/gtest.h>

#include "bubblescope/trace.h"

namespace bubblescope::testing {

inline void ExpectSameIntervals(const std::vector<Interval>& a, const std::vector<Interval>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].start, b[i].start) << i;
    EXPECT_EQ(a[i].end, b[i].end) << i;
    EXPECT_EQ(a[i].correlation, b[i].correlation) << i;
    EXPECT_EQ(a[i].name, b[i].name) << i;
    EXPECT_EQ(a[i].comm, b[i].comm) << i;
    EXPECT_EQ(a[i].kind, b[i].kind) << i;
  }
}

inline void ExpectSameRank(const Rank& a, const Rank& b) {
  EXPECT_EQ(a.rank, b.rank);
  EXPECT_EQ(a.world_size, b.world_size);
  EXPECT_EQ(a.host, b.host);
  EXPECT_EQ(a.pid, b.pid);
  EXPECT_EQ(a.backend, b.backend);
  EXPECT_EQ(a.record_run_id, b.record_run_id);
  EXPECT_EQ(a.rank_source, b.rank_source);
  EXPECT_EQ(a.time_base, b.time_base);
  EXPECT_EQ(a.time_evidence, b.time_evidence);
  ASSERT_EQ(a.names.size(), b.names.size());
  for (NameId id = 0; id < a.names.size(); ++id) EXPECT_EQ(a.name(id), b.name(id)) << id;
  ASSERT_EQ(a.devices.size(), b.devices.size());
  for (size_t i = 0; i < a.devices.size(); ++i) {
    EXPECT_EQ(a.devices[i].id, b.devices[i].id);
    EXPECT_EQ(a.devices[i].name, b.devices[i].name);
    EXPECT_EQ(a.devices[i].total_memory_bytes, b.devices[i].total_memory_bytes);
    EXPECT_EQ(a.devices[i].compute_major, b.devices[i].compute_major);
    EXPECT_EQ(a.devices[i].compute_minor, b.devices[i].compute_minor);
    EXPECT_EQ(a.devices[i].multiprocessors, b.devices[i].multiprocessors);
  }
  ASSERT_EQ(a.process_groups.size(), b.process_groups.size());
  for (size_t i = 0; i < a.process_groups.size(); ++i) {
    EXPECT_EQ(a.process_groups[i].name, b.process_groups[i].name);
    EXPECT_EQ(a.process_groups[i].ranks, b.process_groups[i].ranks);
    EXPECT_EQ(a.process_groups[i].description, b.process_groups[i].description);
  }
  ASSERT_EQ(a.comms.size(), b.comms.size());
  for (size_t i = 0; i < a.comms.size(); ++i) {
    EXPECT_EQ(a.comms[i].bytes, b.comms[i].bytes);
    EXPECT_EQ(a.comms[i].peer, b.comms[i].peer);
    EXPECT_EQ(a.comms[i].group_size, b.comms[i].group_size);
    EXPECT_EQ(a.comms[i].process_group, b.comms[i].process_group);
    EXPECT_EQ(a.comms[i].collective, b.comms[i].collective);
    EXPECT_EQ(a.comms[i].dtype, b.comms[i].dtype);
    EXPECT_EQ(a.comms[i].kind, b.comms[i].kind);
    EXPECT_EQ(a.comms[i].seq, b.comms[i].seq);
  }
  ASSERT_EQ(a.timelines.size(), b.timelines.size());
  for (size_t t = 0; t < a.timelines.size(); ++t) {
    EXPECT_EQ(a.timelines[t].kind, b.timelines[t].kind);
    EXPECT_EQ(a.timelines[t].device, b.timelines[t].device);
    EXPECT_EQ(a.timelines[t].pid, b.timelines[t].pid);
    EXPECT_EQ(a.timelines[t].id, b.timelines[t].id);
    ExpectSameIntervals(a.timelines[t].intervals, b.timelines[t].intervals);
  }
  ASSERT_EQ(a.annotations.size(), b.annotations.size());
  for (size_t i = 0; i < a.annotations.size(); ++i) {
    EXPECT_EQ(a.annotations[i].start, b.annotations[i].start);
    EXPECT_EQ(a.annotations[i].end, b.annotations[i].end);
    EXPECT_EQ(a.annotations[i].name, b.annotations[i].name);
    EXPECT_EQ(a.annotations[i].scope, b.annotations[i].scope);
    EXPECT_EQ(a.annotations[i].device, b.annotations[i].device);
    EXPECT_EQ(a.annotations[i].thread_or_stream, b.annotations[i].thread_or_stream);
  }
  ASSERT_EQ(a.steps.size(), b.steps.size());
  for (size_t i = 0; i < a.steps.size(); ++i) {
    EXPECT_EQ(a.steps[i].number, b.steps[i].number);
    EXPECT_EQ(a.steps[i].start, b.steps[i].start);
    EXPECT_EQ(a.steps[i].end, b.steps[i].end);
  }
  ASSERT_EQ(a.memory.size(), b.memory.size());
  for (size_t i = 0; i < a.memory.size(); ++i) {
    EXPECT_EQ(a.memory[i].time, b.memory[i].time);
    EXPECT_EQ(a.memory[i].allocated_bytes, b.memory[i].allocated_bytes);
    EXPECT_EQ(a.memory[i].reserved_bytes, b.memory[i].reserved_bytes);
    EXPECT_EQ(a.memory[i].device, b.memory[i].device);
    EXPECT_EQ(a.memory[i].host, b.memory[i].host);
  }
  for (size_t c = 0; c < kImportCounterCount; ++c) {
    const auto counter = static_cast<ImportCounter>(c);
    EXPECT_EQ(a.stats.count(counter), b.stats.count(counter)) << c;
    EXPECT_EQ(a.stats.first_offset(counter), b.stats.first_offset(counter)) << c;
  }
  EXPECT_EQ(a.stats.truncation_detail(), b.stats.truncation_detail());
}

}  // namespace bubblescope::testing
