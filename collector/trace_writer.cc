#include "trace_writer.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace bubblescope::collector {

bool MakeDirectories(const std::string& path, std::string* error) {
  for (size_t slash = path.find('/', 1);; slash = path.find('/', slash + 1)) {
    const std::string prefix = path.substr(0, slash);
    if (!prefix.empty() && mkdir(prefix.c_str(), 0755) != 0 && errno != EEXIST) {
      *error = "cannot create " + prefix + ": " + std::strerror(errno);
      return false;
    }
    if (slash == std::string::npos) break;
  }
  struct stat info {};
  if (stat(path.c_str(), &info) != 0 || !S_ISDIR(info.st_mode)) {
    *error = path + " is not a directory";
    return false;
  }
  return true;
}

std::unique_ptr<TraceWriter> TraceWriter::Create(const std::string& path,
                                                 std::string_view first_event, std::string* error) {
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) {
    *error = "cannot create " + path + ": " + std::strerror(errno);
    return nullptr;
  }
  std::unique_ptr<TraceWriter> writer(new TraceWriter(path, fd));
  if (first_event.substr(0, 2) == ",\n") first_event.remove_prefix(2);
  writer->pending_ = "[\n";
  writer->pending_.append(first_event);
  if (!writer->Flush()) {
    *error = writer->error();
    return nullptr;
  }
  return writer;
}

TraceWriter::~TraceWriter() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (fd_ >= 0) close(fd_);
}

bool TraceWriter::WriteLocked(std::string_view bytes) {
  while (!bytes.empty() && error_.empty()) {
    const ssize_t n = write(fd_, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      error_ = "cannot write " + path_ + ": " + std::strerror(errno);
      break;
    }
    written_bytes_ += static_cast<uint64_t>(n);
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  dropped_bytes_ += bytes.size();
  return error_.empty();
}

void TraceWriter::Append(std::string_view events) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (fd_ < 0 || !error_.empty()) {
    dropped_bytes_ += events.size();
    return;
  }
  pending_.append(events);
  if (pending_.size() >= kEarlyWriteBytes) {
    WriteLocked(pending_);
    pending_.clear();
  }
}

bool TraceWriter::Flush() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (fd_ < 0) return error_.empty();
  const bool ok = WriteLocked(pending_);
  pending_.clear();
  return ok;
}

bool TraceWriter::Close() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (fd_ < 0) return error_.empty();
  pending_.append("\n]\n");
  WriteLocked(pending_);
  pending_.clear();
  if (close(fd_) != 0 && error_.empty()) {
    error_ = "cannot close " + path_ + ": " + std::strerror(errno);
  }
  fd_ = -1;
  return error_.empty();
}

uint64_t TraceWriter::written_bytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return written_bytes_;
}

uint64_t TraceWriter::dropped_bytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return dropped_bytes_;
}

std::string TraceWriter::error() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return error_;
}

}  // namespace bubblescope::collector
