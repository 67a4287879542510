// Shared by the collector tests: an environment from a map, a controllable clock, CUPTI activity
// buffers filled by hand as CUPTI fills them, the walker over such buffers, and reading a written
// trace back through bubblescope's loader.
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

// Bytes CUPTI gives a record of `kind` (the struct of the version built against), 0 if unknown.
inline size_t RecordSize(CUpti_ActivityKind kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
      return sizeof(KernelRecord);
    case CUPTI_ACTIVITY_KIND_MEMCPY:
      return sizeof(MemcpyRecord);
    case CUPTI_ACTIVITY_KIND_MEMSET:
      return sizeof(MemsetRecord);
    case CUPTI_ACTIVITY_KIND_MEMORY2:
      return sizeof(MemoryRecord);
    case CUPTI_ACTIVITY_KIND_MARKER:
      return sizeof(MarkerRecord);
    case CUPTI_ACTIVITY_KIND_MARKER_DATA:
      return sizeof(MarkerDataRecord);
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER:
      return sizeof(ApiRecord);
    case CUPTI_ACTIVITY_KIND_DEVICE:
      return sizeof(DeviceRecord);
    default:
      return 0;
  }
}

inline size_t AlignUp(size_t n) { return (n + 7) / 8 * 8; }

// Lays records out one after another at 8-byte boundaries, as CUPTI does in its buffers.
class ActivityBufferFiller {
 public:
  ActivityBufferFiller(uint8_t* buffer, size_t capacity) : buffer_(buffer), capacity_(capacity) {}

  template <typename Record>
  void Add(const Record& record) {
    ASSERT_EQ(RecordSize(reinterpret_cast<const CUpti_Activity&>(record).kind), sizeof(Record));
    ASSERT_LE(used_ + sizeof(Record), capacity_);
    std::memcpy(buffer_ + used_, &record, sizeof(Record));
    used_ = AlignUp(used_ + sizeof(Record));
  }
  size_t used() const { return used_; }

 private:
  uint8_t* buffer_;
  size_t capacity_;
  size_t used_ = 0;
};

// cuptiActivityGetNextRecord's contract over a filled buffer: the first record for a null
// *record, then the one after it; kEnd past `valid_bytes`; kError for a kind it cannot size.
class PackedRecordCursor : public RecordCursor {
 public:
  NextRecord Next(uint8_t* buffer, size_t valid_bytes, CUpti_Activity** record) override {
    size_t offset = 0;
    if (*record != nullptr) {
      const size_t size = RecordSize((*record)->kind);
      if (size == 0) return NextRecord::kError;
      offset = AlignUp(static_cast<size_t>(reinterpret_cast<uint8_t*>(*record) - buffer) + size);
    }
    if (offset >= valid_bytes) return NextRecord::kEnd;
    auto* next = reinterpret_cast<CUpti_Activity*>(buffer + offset);
    if (RecordSize(next->kind) == 0 || offset + RecordSize(next->kind) > valid_bytes) {
      return NextRecord::kError;
    }
    *record = next;
    return NextRecord::kRecord;
  }
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
