// Walking a completed CUPTI activity buffer, and the pool those buffers come from.
//
// The "next record" step is CUPTI's (cuptiActivityGetNextRecord) on a GPU machine and a test's own
// walker over a hand-filled buffer on the CPU; both sit behind RecordCursor, so the same
// ConsumeActivityBuffer runs in the buffer-completed callback and in the tests.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "activity_translator.h"
#include "cupti_records.h"
#include "trace_writer.h"

namespace bubblescope::collector {

enum class NextRecord : uint8_t {
  kRecord,  // *record points at the next record
  kEnd,     // no more records (CUPTI_ERROR_MAX_LIMIT_REACHED)
  kError,   // the buffer cannot be walked further (any other CUPTI result)
};

class RecordCursor {
 public:
  virtual ~RecordCursor() = default;
  // As cuptiActivityGetNextRecord: *record is nullptr on the first call and the previous record
  // on later ones; `valid_bytes` is how much of `buffer` CUPTI filled.
  virtual NextRecord Next(uint8_t* buffer, size_t valid_bytes, CUpti_Activity** record) = 0;
};

struct BufferWalk {
  uint64_t records = 0;
  bool walk_error = false;  // stopped by NextRecord::kError before the end
};

// Translates every record of `buffer` and appends the events to `sink` in one piece.
BufferWalk ConsumeActivityBuffer(uint8_t* buffer, size_t valid_bytes, RecordCursor& cursor,
                                 ActivityTranslator& translator, EventSink& sink);

// Fixed-size, 8-byte-aligned buffers handed to CUPTI, at most `cap_bytes` of them in flight.
// When the cap is reached a request gets no buffer and CUPTI drops the records it would have
// held (it counts them; the caller adds them to the trace's dropped counts).
class BufferPool {
 public:
  BufferPool(size_t buffer_bytes, int64_t cap_bytes);

  // A free buffer, or nullptr (counted in refused()) when the cap is reached. Thread-safe.
  uint8_t* Acquire();
  // Gives back a buffer from Acquire. Thread-safe.
  void Release(uint8_t* buffer);

  size_t buffer_bytes() const { return buffer_bytes_; }
  size_t max_buffers() const { return max_buffers_; }
  uint64_t refused() const;
  size_t in_use() const;

 private:
  struct FreeDeleter {
    void operator()(uint8_t* p) const;
  };

  const size_t buffer_bytes_;
  const size_t max_buffers_;
  mutable std::mutex mutex_;
  std::vector<std::unique_ptr<uint8_t, FreeDeleter>> owned_;
  std::vector<uint8_t*> free_;
  uint64_t refused_ = 0;
};

}  // namespace bubblescope::collector
