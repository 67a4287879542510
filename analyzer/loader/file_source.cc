#include "loader/file_source.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <limits>
#include <new>
#include <string>
#include <string_view>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "bubblescope/trace.h"  // SaturatingMul
#include "common/out_of_memory.h"
#include "common/status_macros.h"
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
  // Hands the descriptor over, no longer closing it.
  int release() { return std::exchange(fd_, -1); }

 private:
  int fd_;
};

absl::Status ErrnoError(const std::string& path, int error_number) {
  return absl::ErrnoToStatus(error_number, path);
}

absl::Status OutOfMemory(const std::string& path, int64_t max_bytes) {
  return OutOfMemoryReading(path, max_bytes == std::numeric_limits<int64_t>::max() ? 0 : max_bytes);
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

// Asks the kernel for 2 MiB pages where the buffer spans them: a large buffer is then touched in
// one page fault per 2 MiB instead of one per 4 KiB (where transparent huge pages are set to
// "madvise", as Debian and Ubuntu set them; elsewhere the advice changes nothing).
void AdviseHugePages(char* bytes, size_t size) {
  constexpr uintptr_t kHugePage = uintptr_t{2} << 20;
  const uintptr_t start = reinterpret_cast<uintptr_t>(bytes);
  const uintptr_t first = (start + kHugePage - 1) & ~(kHugePage - 1);
  const uintptr_t last = (start + size) & ~(kHugePage - 1);
  if (last > first) {
    [[maybe_unused]] const int ignored =
        madvise(reinterpret_cast<void*>(first), last - first, MADV_HUGEPAGE);
  }
}

// Text read into memory of its own.
FileContents Owning(simdjson::padded_string text) {
  FileContents contents;
  contents.owned = std::move(text);
  contents.text = contents.owned;
  return contents;
}

// A regular file: read straight into place, in `buffer` when there is one, else in memory of the
// size stat reports.
absl::StatusOr<FileContents> ReadRegularFile(const std::string& path, int fd, size_t size,
                                             int64_t max_bytes, ReadBuffer* buffer) {
  if (buffer != nullptr) {
    char* bytes = buffer->Reserve(size);
    if (bytes == nullptr) return OutOfMemory(path, max_bytes);
    const ssize_t got = ReadUpTo(fd, bytes, size);
    if (got < 0) return ErrnoError(path, errno);
    // Padding as simdjson::padded_string writes it (the bytes of an earlier file stand there).
    std::memset(bytes + got, 0, simdjson::SIMDJSON_PADDING);
    FileContents contents;
    contents.text = simdjson::padded_string_view(
        bytes, static_cast<size_t>(got), static_cast<size_t>(got) + simdjson::SIMDJSON_PADDING);
    return contents;
  }
  // simdjson reports a failed allocation as a null buffer, not by throwing.
  simdjson::padded_string bytes(size);
  if (bytes.data() == nullptr) return OutOfMemory(path, max_bytes);
  const ssize_t got = ReadUpTo(fd, bytes.data(), size);
  if (got < 0) return ErrnoError(path, errno);
  if (static_cast<size_t>(got) == size) return Owning(std::move(bytes));
  // The file shrank since stat: keep what is there.
  return Owning(simdjson::padded_string(bytes.data(), static_cast<size_t>(got)));
}

// A pipe or other stream of unknown length (e.g. a shell's <(zcat ...)), read until its end or
// until it passes `max_bytes` (/dev/zero and `yes` never end).
absl::StatusOr<FileContents> ReadStream(const std::string& path, int fd, int64_t max_bytes) {
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
  if (padded.data() == nullptr) return OutOfMemory(path, max_bytes);
  return Owning(std::move(padded));
}

// Opens `path` for reading and fills `info`: the errors every read of a file says first (missing,
// unreadable, a directory, which open() accepts and only reading refuses).
absl::StatusOr<int> OpenForReading(const std::string& path, struct stat* info) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoError(path, errno);
  FileDescriptor file(fd);
  if (fstat(fd, info) != 0) return ErrnoError(path, errno);
  if (S_ISDIR(info->st_mode)) return ErrnoError(path, EISDIR);
  return file.release();
}

absl::StatusOr<FileContents> ReadWithinBudget(const std::string& path, int64_t max_bytes,
                                              ReadBuffer* buffer) {
  struct stat info {};
  BUBBLESCOPE_ASSIGN_OR_RETURN(int opened, OpenForReading(path, &info));
  const int fd = opened;
  FileDescriptor file(fd);

  // gzip only ever makes a trace smaller, so a regular file already over the budget is refused
  // before a byte of it is read.
  if (S_ISREG(info.st_mode) && info.st_size > max_bytes) {
    return OverReadingBudget(path, max_bytes, max_bytes);
  }
  absl::StatusOr<FileContents> contents =
      S_ISREG(info.st_mode)
          ? ReadRegularFile(path, fd, static_cast<size_t>(info.st_size), max_bytes, buffer)
          : ReadStream(path, fd, max_bytes);
  if (!contents.ok() || !LooksLikeGzip(contents->text)) return contents;
  absl::StatusOr<InflatedText> inflated = InflateGzip(path, contents->text, max_bytes);
  *contents = FileContents();  // the compressed bytes are not needed any more
  BUBBLESCOPE_RETURN_IF_ERROR(inflated.status());
  if (inflated->truncated && inflated->text.size() == 0) {
    // The gzip magic bytes and no more are no empty trace: the file was cut short.
    return absl::DataLossError(absl::StrCat(path, ": byte ", inflated->truncated_at_compressed_byte,
                                            ": gzip data cut short before any of its text"));
  }
  *contents = Owning(std::move(inflated->text));
  contents->gzip = true;
  contents->truncated = inflated->truncated;
  contents->truncated_at_compressed_byte = inflated->truncated_at_compressed_byte;
  contents->trailing_at_compressed_byte = inflated->trailing_at_compressed_byte;
  return contents;
}

// The limits that apply to this process, in bytes, of the two kinds reading is measured
// against: memory held (physical memory, a container's cgroup limit) and address space
// (`ulimit -v`, and `ulimit -d`, which Linux counts over every private writable mapping).
struct MemoryLimits {
  int64_t resident = std::numeric_limits<int64_t>::max();
  int64_t address_space = std::numeric_limits<int64_t>::max();
};

MemoryLimits MemoryLimitsOfProcess() {
  MemoryLimits limits;
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_size = sysconf(_SC_PAGESIZE);
  if (pages > 0 && page_size > 0) limits.resident = SaturatingMul(pages, page_size);
  for (int resource : {RLIMIT_AS, RLIMIT_DATA}) {
    struct rlimit bound {};
    if (getrlimit(resource, &bound) == 0 && bound.rlim_cur != RLIM_INFINITY &&
        bound.rlim_cur < static_cast<rlim_t>(limits.address_space)) {
      limits.address_space = static_cast<int64_t>(bound.rlim_cur);
    }
  }
  // A container's memory limit (cgroup v2, then v1); "max" or a missing file is no limit.
  for (const char* file :
       {"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"}) {
    std::ifstream in(file);
    int64_t value = 0;
    if (in >> value && value > 0 && value < limits.resident) limits.resident = value;
  }
  return limits;
}

}  // namespace

char* ReadBuffer::Reserve(size_t size) {
  if (size > capacity_ || bytes_ == nullptr) {
    bytes_.reset();  // the old pages go back before the new ones are taken
    capacity_ = 0;
    const size_t wanted = size + size / 8;
    bytes_.reset(new (std::nothrow) char[wanted + simdjson::SIMDJSON_PADDING]);
    if (bytes_ == nullptr) return nullptr;
    capacity_ = wanted;
    AdviseHugePages(bytes_.get(), wanted);
  }
  return bytes_.get();
}

int64_t ReadingBudgetBytes(int workers) {
  // What reading one file takes, measured on generated traces with `analyze -j 1`
  // (docs/input-errors.md, "Memory"): a 35 MB trace peaks at 89 MB resident (2.6x its size)
  // and needs 301 MB of address space, 17 MB of it the process's own before any file (8.1x its
  // size above that; a 17.6 MB one 9.1x): simdjson's index and the vectors that double reserve
  // far more than they touch. The budget is the least of what each limit leaves per file.
  constexpr int64_t kResidentPerByte = 3;
  constexpr int64_t kAddressSpacePerByte = 9;
  constexpr int64_t kProcessAddressSpace = int64_t{32} << 20;
  // A budget below this reads nothing useful; it is kept so that the message names a number.
  constexpr int64_t kMinimum = int64_t{1} << 20;
  const int64_t files = std::max(workers, 1);
  const MemoryLimits limits = MemoryLimitsOfProcess();
  const int64_t by_resident = limits.resident / (kResidentPerByte * files);
  const int64_t by_address_space =
      std::max<int64_t>(0, limits.address_space - kProcessAddressSpace) /
      (kAddressSpacePerByte * files);
  return std::max(kMinimum, std::min(by_resident, by_address_space));
}

absl::StatusOr<FileContents> ReadFileSource(const std::string& path, int64_t max_bytes,
                                            ReadBuffer* buffer) {
  // Memory can run out below the budget (a budget set too high, other files held at once): that
  // is this file's one-line error, never an abort.
  try {
    return ReadWithinBudget(path, max_bytes, buffer);
  } catch (const std::bad_alloc&) {
    return OutOfMemory(path, max_bytes);
  }
}

absl::StatusOr<FileHead> ReadFileHead(const std::string& path, size_t size) {
  struct stat info {};
  BUBBLESCOPE_ASSIGN_OR_RETURN(int opened, OpenForReading(path, &info));
  const int fd = opened;
  FileDescriptor file(fd);
  FileHead head;
  if (!S_ISREG(info.st_mode)) {
    head.regular = false;
    return head;
  }
  // Deflate's stored blocks cost 5 bytes in 64 KiB, so this much gzip data always holds `size`
  // bytes of text when the file has them (headers with long names aside).
  std::string raw(size + size / 4 + 1024, '\0');
  const ssize_t got = ReadUpTo(fd, raw.data(), raw.size());
  if (got < 0) return ErrnoError(path, errno);
  raw.resize(static_cast<size_t>(got));
  if (LooksLikeGzip(raw)) {
    head.bytes = InflateGzipHead(raw, size);
  } else {
    raw.resize(std::min(raw.size(), size));
    head.bytes = std::move(raw);
  }
  return head;
}

}  // namespace bubblescope
