// Shared by the collector tests: an environment from a map, a controllable clock, CUPTI activity
// buffers filled by hand as CUPTI fills them (the walker over them is record_layout.h's), and
// reading a written trace back through bubblescope's loader.
#pragma once

#include <atomic>
#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "activity_buffer.h"
#include "bubblescope/trace.h"
#include "collector_config.h"
#include "cupti_records.h"
#include "gtest/gtest.h"
#include "loader/trace_loader.h"
#include "record_layout.h"

namespace bubblescope::collector::testing {

inline EnvLookup Env(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](const char* name) -> const char* {
    const auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  };
}

// A clock the test sets; every collector hook reads it.
inline std::atomic<int64_t>& FakeNow() {
  static std::atomic<int64_t> now{0};
  return now;
}
inline int64_t FakeClock() { return FakeNow().load(); }

// Lays records out one after another at 8-byte boundaries, as CUPTI does in its buffers.
class ActivityBufferFiller {
 public:
  ActivityBufferFiller(uint8_t* buffer, size_t capacity) : buffer_(buffer), capacity_(capacity) {}

  template <typename Record>
  void Add(const Record& record) {
    ASSERT_EQ(RecordSize(reinterpret_cast<const CUpti_Activity&>(record).kind), sizeof(Record));
    ASSERT_LE(used_ + sizeof(Record), capacity_);
    std::memcpy(buffer_ + used_, &record, sizeof(Record));
    offsets_.push_back(used_);
    used_ = AlignUp(used_ + sizeof(Record));
  }
  size_t used() const { return used_; }
  // Where each added record starts, in order.
  const std::vector<size_t>& offsets() const { return offsets_; }

 private:
  uint8_t* buffer_;
  size_t capacity_;
  size_t used_ = 0;
  std::vector<size_t> offsets_;
};

// The one rank LoadTrace reads from `path`.
inline Rank LoadOneRank(const std::string& path) {
  LoadOptions options;
  options.jobs = 1;
  absl::StatusOr<Trace> trace = LoadTrace({path}, options);
  EXPECT_TRUE(trace.ok()) << trace.status();
  if (!trace.ok() || trace->ranks.size() != 1) {
    ADD_FAILURE() << "expected one rank from " << path;
    return Rank();
  }
  return std::move(trace->ranks[0]);
}

inline std::vector<const Interval*> IntervalsOf(const Rank& rank, IntervalKind kind) {
  std::vector<const Interval*> out;
  for (const Timeline& timeline : rank.timelines) {
    for (const Interval& interval : timeline.intervals) {
      if (interval.kind == kind) out.push_back(&interval);
    }
  }
  return out;
}

}  // namespace bubblescope::collector::testing
