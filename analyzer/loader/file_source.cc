#include "loader/file_source.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "loader/gzip_inflate.h"

namespace bubblescope {
namespace {

class FileDescriptor {
 public:
  explicit FileDescriptor(int fd) : fd_(fd) {}
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  ~FileDescriptor() {
    if (fd_ >= 0) close(fd_);
  }
  int get() const { return fd_; }

 private:
  int fd_;
};

absl::Status ErrnoError(const std::string& path, int error_number) {
  return absl::ErrnoToStatus(error_number, path);
}

absl::Status OutOfMemory(const std::string& path, size_t bytes) {
  return absl::ResourceExhaustedError(
      absl::StrCat(path, ": out of memory reading ", bytes, " bytes"));
}

// Reads up to `size` bytes into `buffer`; returns how many arrived before end of file, or -1
// with errno set.
ssize_t ReadUpTo(int fd, char* buffer, size_t size) {
  size_t done = 0;
  while (done < size) {
    const ssize_t got = read(fd, buffer + done, size - done);
    if (got < 0) {
      if (errno == EINTR) continue;
      return -1;
    }
    if (got == 0) break;
    done += static_cast<size_t>(got);
  }
  return static_cast<ssize_t>(done);
}

// A regular file: one buffer of the size stat reports, read straight into place.
absl::StatusOr<simdjson::padded_string> ReadRegularFile(const std::string& path, int fd,
                                                        size_t size) {
  simdjson::padded_string bytes(size);
  if (bytes.data() == nullptr) return OutOfMemory(path, size);
  const ssize_t got = ReadUpTo(fd, bytes.data(), size);
  if (got < 0) return ErrnoError(path, errno);
  if (static_cast<size_t>(got) == size) return bytes;
  // The file shrank since stat: keep what is there.
  return simdjson::padded_string(bytes.data(), static_cast<size_t>(got));
}

// A pipe or other stream of unknown length (e.g. a shell's <(zcat ...)), read until its end or
// until it passes `max_bytes` (/dev/zero and `yes` never end).
absl::StatusOr<simdjson::padded_string> ReadStream(const std::string& path, int fd,
                                                   int64_t max_bytes) {
  std::string bytes;
  constexpr size_t kChunk = size_t{1} << 20;
  for (;;) {
    const size_t old_size = bytes.size();
    if (static_cast<int64_t>(old_size) > max_bytes) {
      return OverReadingBudget(path, max_bytes, max_bytes);
    }
    bytes.resize(old_size + kChunk);
    const ssize_t got = ReadUpTo(fd, bytes.data() + old_size, kChunk);
    if (got < 0) return ErrnoError(path, errno);
    bytes.resize(old_size + static_cast<size_t>(got));
    if (static_cast<size_t>(got) < kChunk) break;
  }
  if (static_cast<int64_t>(bytes.size()) > max_bytes) {
    return OverReadingBudget(path, max_bytes, max_bytes);
  }
  simdjson::padded_string padded(bytes);
  if (padded.data() == nullptr) return OutOfMemory(path, bytes.size());
  return padded;
}

}  // namespace

absl::Status OverReadingBudget(std::string_view path, int64_t offset, int64_t max_bytes) {
  return absl::ResourceExhaustedError(absl::StrCat(
      std::string(path), ": byte ", offset, ": more than ", max_bytes >> 20,
      " MiB of trace text, the reading budget per file"));
}

absl::StatusOr<FileContents> ReadFileSource(const std::string& path, int64_t max_bytes) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoError(path, errno);
  FileDescriptor file(fd);
  struct stat info {};
  if (fstat(fd, &info) != 0) return ErrnoError(path, errno);
  // open() succeeds on a directory; reading it is what fails, so say so up front.
  if (S_ISDIR(info.st_mode)) return ErrnoError(path, EISDIR);

  // gzip only ever makes a trace smaller, so a regular file already over the budget is refused
  // before a byte of it is read.
  if (S_ISREG(info.st_mode) && info.st_size > max_bytes) {
    return OverReadingBudget(path, max_bytes, max_bytes);
  }
  absl::StatusOr<simdjson::padded_string> raw =
      S_ISREG(info.st_mode) ? ReadRegularFile(path, fd, static_cast<size_t>(info.st_size))
                            : ReadStream(path, fd, max_bytes);
  if (!raw.ok()) return raw.status();

  FileContents contents;
  const std::string_view raw_view(raw->data(), raw->size());
  if (!LooksLikeGzip(raw_view)) {
    contents.text = *std::move(raw);
    return contents;
  }
  absl::StatusOr<InflatedText> inflated = InflateGzip(path, raw_view, max_bytes);
  *raw = simdjson::padded_string();  // the compressed bytes are not needed any more
  if (!inflated.ok()) return inflated.status();
  if (inflated->truncated && inflated->text.size() == 0) {
    // The gzip magic bytes and no more are no empty trace: the file was cut short.
    return absl::DataLossError(absl::StrCat(path, ": byte ", inflated->truncated_at_compressed_byte,
                                            ": gzip data cut short before any of its text"));
  }
  contents.gzip = true;
  contents.text = std::move(inflated->text);
  contents.truncated = inflated->truncated;
  contents.truncated_at_compressed_byte = inflated->truncated_at_compressed_byte;
  return contents;
}

}  // namespace bubblescope
