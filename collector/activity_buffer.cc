#include "activity_buffer.h"

#include <algorithm>
#include <cstdlib>
#include <string>

namespace bubblescope::collector {

BufferWalk ConsumeActivityBuffer(uint8_t* buffer, size_t valid_bytes, RecordCursor& cursor,
                                 ActivityTranslator& translator, EventSink& sink) {
  BufferWalk walk;
  std::string events;
  CUpti_Activity* record = nullptr;
  while (true) {
    const NextRecord next = cursor.Next(buffer, valid_bytes, &record);
    if (next == NextRecord::kEnd) break;
    if (next == NextRecord::kError) {
      walk.walk_error = true;
      break;
    }
    ++walk.records;
    translator.Translate(*record, &events);
  }
  if (!events.empty()) sink.Append(events);
  return walk;
}

void BufferPool::FreeDeleter::operator()(uint8_t* p) const { std::free(p); }

BufferPool::BufferPool(size_t buffer_bytes, int64_t cap_bytes)
    : buffer_bytes_((buffer_bytes + 7) / 8 * 8),
      max_buffers_(std::max<size_t>(1, static_cast<size_t>(std::max<int64_t>(cap_bytes, 0)) /
                                           ((buffer_bytes + 7) / 8 * 8))) {}

uint8_t* BufferPool::Acquire() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!free_.empty()) {
    uint8_t* buffer = free_.back();
    free_.pop_back();
    return buffer;
  }
  if (owned_.size() >= max_buffers_) {
    ++refused_;
    return nullptr;
  }
  auto* buffer = static_cast<uint8_t*>(std::aligned_alloc(8, buffer_bytes_));
  if (buffer == nullptr) {
    ++refused_;
    return nullptr;
  }
  owned_.emplace_back(buffer);
  return buffer;
}

void BufferPool::Release(uint8_t* buffer) {
  if (buffer == nullptr) return;
  std::lock_guard<std::mutex> lock(mutex_);
  free_.push_back(buffer);
}

uint64_t BufferPool::refused() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return refused_;
}

size_t BufferPool::in_use() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return owned_.size() - free_.size();
}

}  // namespace bubblescope::collector
