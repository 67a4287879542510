// The per-process trace file: Chrome-trace JSON in its array form, appended to as records arrive
// and written to the file on every Flush with plain write(2) calls (no stdio buffer), so a process
// killed at any moment leaves every event flushed before the kill on disk, complete. Close() adds
// the closing bracket; a file without it is still a legal Chrome trace.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>

namespace bubblescope::collector {

// Where translated events go (the trace file, or a string in tests).
class EventSink {
 public:
  virtual ~EventSink() = default;
  // `events` is zero or more ChromeEvent events, each starting with its ",\n" separator.
  virtual void Append(std::string_view events) = 0;
};

// Creates `path` and its missing parents (mode 0755); false with a message on failure.
bool MakeDirectories(const std::string& path, std::string* error);

class TraceWriter : public EventSink {
 public:
  // Events held in memory beyond this are written at once, without waiting for a Flush.
  static constexpr size_t kEarlyWriteBytes = size_t{4} << 20;

  // Creates the file (it must not exist) and writes "[\n" and `first_event` (ChromeEvent text; its
  // leading separator is dropped), then flushes. nullptr with a message on failure.
  static std::unique_ptr<TraceWriter> Create(const std::string& path, std::string_view first_event,
                                             std::string* error);
  ~TraceWriter() override;
  TraceWriter(const TraceWriter&) = delete;
  TraceWriter& operator=(const TraceWriter&) = delete;

  // Thread-safe. After a failed write, events are dropped and counted instead.
  void Append(std::string_view events) override;
  // Writes everything appended so far. Thread-safe; false once any write failed.
  bool Flush();
  // Flushes, writes the closing "\n]\n" and closes the file; later calls do nothing.
  bool Close();

  const std::string& path() const { return path_; }
  uint64_t written_bytes() const;
  // Event text dropped because the file could not be written.
  uint64_t dropped_bytes() const;
  // The first write error, empty if none.
  std::string error() const;

 private:
  TraceWriter(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}
  bool WriteLocked(std::string_view bytes);

  const std::string path_;
  mutable std::mutex mutex_;
  int fd_;
  std::string pending_;
  uint64_t written_bytes_ = 0;
  uint64_t dropped_bytes_ = 0;
  std::string error_;
};

}  // namespace bubblescope::collector
