// CUPTI activity buffers as CUPTI lays them out, without CUPTI: each record's size by kind, the
// 8-byte alignment between records, and a cursor that walks such a buffer as
// cuptiActivityGetNextRecord does. No gtest, so the collector fuzz target shares it with the
// collector tests.
#pragma once

#include <cstddef>
#include <cstdint>

#include "activity_buffer.h"
#include "cupti_records.h"

namespace bubblescope::collector::testing {

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

}  // namespace bubblescope::collector::testing
