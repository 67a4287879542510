#include "common/output_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>
#include <system_error>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "common/output_temp.h"
#include "common/status_macros.h"

namespace bubblescope {
namespace {

absl::Status WriteError(const std::string& path, absl::string_view reason) {
  return absl::UnavailableError(absl::StrCat("cannot write ", path, ": ", reason));
}

absl::Status WriteErrno(const std::string& path, int error) {
  return WriteError(path, std::error_code(error, std::generic_category()).message());
}

absl::Status WriteAll(int fd, std::string_view contents, const std::string& path) {
  while (!contents.empty()) {
    const ssize_t written = ::write(fd, contents.data(), contents.size());
    if (written < 0) {
      if (errno == EINTR) continue;
      return WriteErrno(path, errno);
    }
    contents.remove_prefix(static_cast<size_t>(written));
  }
  return absl::OkStatus();
}

mode_t NewFileMode() {
  // umask can only be read by setting it; bubblescope writes its files from one thread.
  const mode_t mask = ::umask(0);
  ::umask(mask);
  return static_cast<mode_t>(0666 & ~mask);
}

bool SameFile(const struct stat& a, const struct stat& b) {
  return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

}  // namespace

// What an output path is, worked out once for the check of a command's outputs and the write.
// Not in the anonymous namespace: OutputStream::State, declared in the header, holds one.
struct OutputDestination {
  enum class Kind : uint8_t { kNew, kReplace, kWriteThrough };
  Kind kind = Kind::kNew;
  // kNew: the path as it will be created, its directory resolved (so two spellings of one new
  // file compare equal). kReplace: the regular file at the end of any symlinks.
  std::string file;
  struct stat existing {};  // kReplace and kWriteThrough
  mode_t mode = 0;          // kNew: 0666 minus the umask; kReplace: the file's own bits
};

namespace {

absl::StatusOr<OutputDestination> Resolve(const std::string& path,
                                          const OutputFileOptions& options) {
  if (path.empty()) return WriteError(path, "no file name");
  OutputDestination destination;
  struct stat link {};
  if (::lstat(path.c_str(), &link) != 0) {
    if (errno != ENOENT) return WriteErrno(path, errno);
    destination.kind = OutputDestination::Kind::kNew;
    // Made absolute first: weakly_canonical resolves only the leading part of a path that
    // exists, so a relative "r" (nothing of it exists) stayed "r" while "./r", "$PWD/r" or
    // "sub/../r" became "/cwd/r", and two spellings of one new file passed as two files.
    std::error_code ignored;
    std::filesystem::path absolute = std::filesystem::absolute(path, ignored);
    if (ignored) absolute = path;
    const std::filesystem::path canonical = std::filesystem::weakly_canonical(absolute, ignored);
    destination.file = canonical.empty() ? path : canonical.string();
    destination.mode = NewFileMode();
    return destination;
  }
  if (::stat(path.c_str(), &destination.existing) != 0) {
    if (errno == ENOENT) return WriteError(path, "it is a symbolic link to nothing");
    return WriteErrno(path, errno);
  }
  if (S_ISDIR(destination.existing.st_mode)) return WriteError(path, "it is a directory");
  if (!S_ISREG(destination.existing.st_mode)) {
    destination.kind = OutputDestination::Kind::kWriteThrough;
    destination.file = path;
    return destination;
  }
  for (const std::string& input : options.protected_files) {
    struct stat protected_file {};
    if (::stat(input.c_str(), &protected_file) == 0 &&
        SameFile(protected_file, destination.existing)) {
      return WriteError(path,
                        absl::StrCat("it is the input ", input, ", which is never overwritten"));
    }
  }
  // As a shell's `>` would: a file this user may not write is not replaced, even where the
  // directory would let a rename through. (Root may write anything, as with `>`.)
  if (::faccessat(AT_FDCWD, path.c_str(), W_OK, AT_EACCESS) != 0) {
    return WriteError(path,
                      absl::StrCat("you may not write it (",
                                   std::error_code(errno, std::generic_category()).message(), ")"));
  }
  // The file the bytes land in: the end of any chain of symlinks, which stay as they are.
  std::vector<char> resolved(PATH_MAX + 1, '\0');
  if (::realpath(path.c_str(), resolved.data()) == nullptr) return WriteErrno(path, errno);
  destination.kind = OutputDestination::Kind::kReplace;
  destination.file = resolved.data();
  destination.mode = destination.existing.st_mode & 07777;
  return destination;
}

// Whether two destinations are one file: the same inode, or the same new path.
bool SameDestination(const OutputDestination& a, const OutputDestination& b) {
  if (a.kind == OutputDestination::Kind::kReplace && b.kind == OutputDestination::Kind::kReplace) {
    return SameFile(a.existing, b.existing);
  }
  return a.kind == OutputDestination::Kind::kNew && b.kind == OutputDestination::Kind::kNew &&
         a.file == b.file;
}

}  // namespace

absl::Status CheckOutputs(const std::vector<NamedOutput>& outputs,
                          const OutputFileOptions& options) {
  std::vector<std::pair<const NamedOutput*, OutputDestination>> resolved;
  for (const NamedOutput& output : outputs) {
    if (output.path.empty()) continue;  // an output not asked for
    absl::StatusOr<OutputDestination> destination = Resolve(output.path, options);
    if (!destination.ok()) {
      return absl::Status(destination.status().code(),
                          absl::StrCat(output.flag, ": ", destination.status().message()));
    }
    // Devices and FIFOs are written through: /dev/null may take several outputs.
    if (destination->kind == OutputDestination::Kind::kWriteThrough) continue;
    for (const auto& [earlier, other] : resolved) {
      if (SameDestination(*destination, other)) {
        return absl::InvalidArgumentError(
            absl::StrCat(output.flag, " names the same file as ", earlier->flag, " (", output.path,
                         output.path == earlier->path ? "" : absl::StrCat(" and ", earlier->path),
                         "): one would replace the other"));
      }
    }
    resolved.emplace_back(&output, *std::move(destination));
  }
  return absl::OkStatus();
}

absl::Status WriteOutputFile(const std::string& path, std::string_view contents,
                             const OutputFileOptions& options) {
  BUBBLESCOPE_ASSIGN_OR_RETURN(std::unique_ptr<OutputStream> stream,
                               OutputStream::Open(path, options));
  BUBBLESCOPE_RETURN_IF_ERROR(stream->Append(contents));
  return stream->Commit();
}

ScratchFile::~ScratchFile() { ::close(fd_); }

absl::Status ScratchFile::Append(std::string_view bytes) {
  BUBBLESCOPE_RETURN_IF_ERROR(WriteAll(fd_, bytes, output_path_));
  size_ += static_cast<int64_t>(bytes.size());
  return absl::OkStatus();
}

struct OutputStream::State {
  std::string path;  // as the user named it, for errors
  OutputDestination destination;
  int fd = -1;
  std::string temp_path;  // kNew and kReplace: the file renamed over the destination
  std::unique_ptr<TempFileGuard> removed_on_signal;
  bool done = false;  // committed, or failed for good
};

OutputStream::OutputStream(std::unique_ptr<State> state) : state_(std::move(state)) {}

absl::StatusOr<std::unique_ptr<OutputStream>> OutputStream::Open(const std::string& path,
                                                                 const OutputFileOptions& options) {
  BUBBLESCOPE_ASSIGN_OR_RETURN(OutputDestination destination, Resolve(path, options));
  auto state = std::make_unique<State>();
  state->path = path;
  state->destination = std::move(destination);
  if (state->destination.kind == OutputDestination::Kind::kWriteThrough) {
    // Written into what the path already is: no file is created or replaced.
    state->fd = ::open(path.c_str(), O_WRONLY | O_NOCTTY | O_CLOEXEC);
    if (state->fd < 0) return WriteErrno(path, errno);
  } else {
    absl::StatusOr<TempFile> temp = CreateTempFile(state->destination.file);
    if (!temp.ok()) return WriteError(path, temp.status().message());
    state->fd = temp->fd;
    state->temp_path = temp->path;
    state->removed_on_signal = std::make_unique<TempFileGuard>(temp->path);
  }
  return std::unique_ptr<OutputStream>(new OutputStream(std::move(state)));
}

OutputStream::~OutputStream() {
  if (state_->fd >= 0) ::close(state_->fd);
  if (!state_->temp_path.empty()) ::unlink(state_->temp_path.c_str());
}

absl::Status OutputStream::Append(std::string_view bytes) {
  if (state_->done) return WriteError(state_->path, "written already");
  return WriteAll(state_->fd, bytes, state_->path);
}

absl::StatusOr<std::unique_ptr<ScratchFile>> OutputStream::NewScratch() const {
  // Beside the temporary file, so the copy stays on one file system; an output written through
  // (a FIFO, /dev/stdout) has no directory of its own to use.
  const std::string beside =
      state_->destination.kind == OutputDestination::Kind::kWriteThrough
          ? (std::filesystem::temp_directory_path() / "bubblescope-scratch").string()
          : state_->destination.file;
  absl::StatusOr<TempFile> temp = CreateTempFile(beside);
  if (!temp.ok()) return WriteError(state_->path, temp.status().message());
  ::unlink(temp->path.c_str());
  return std::unique_ptr<ScratchFile>(new ScratchFile(temp->fd, state_->path));
}

absl::Status OutputStream::AppendScratch(const ScratchFile& scratch) {
  if (state_->done) return WriteError(state_->path, "written already");
  loff_t from = 0;
  bool by_kernel = true;
  std::vector<char> buffer;
  while (from < scratch.size()) {
    const size_t want = static_cast<size_t>(std::min<int64_t>(scratch.size() - from, 1 << 30));
    if (by_kernel) {
      const ssize_t copied = ::copy_file_range(scratch.fd_, &from, state_->fd, nullptr, want, 0);
      if (copied > 0) continue;
      if (copied < 0 && errno == EINTR) continue;
      // Not on this pair of files (another file system, a FIFO, an old kernel): by hand.
      if (copied < 0 && errno != EXDEV && errno != EINVAL && errno != ENOSYS &&
          errno != EOPNOTSUPP && errno != EBADF) {
        return WriteErrno(state_->path, errno);
      }
      by_kernel = false;
      buffer.resize(1 << 20);
    }
    const ssize_t read = ::pread(scratch.fd_, buffer.data(), std::min(want, buffer.size()), from);
    if (read < 0 && errno == EINTR) continue;
    if (read <= 0) return WriteErrno(state_->path, read < 0 ? errno : EIO);
    if (absl::Status written = Append(std::string_view(buffer.data(), static_cast<size_t>(read)));
        !written.ok()) {
      return written;
    }
    from += read;
  }
  return absl::OkStatus();
}

absl::Status OutputStream::Commit() {
  if (state_->done) return WriteError(state_->path, "written already");
  state_->done = true;
  const std::string& path = state_->path;
  absl::Status status;
  if (state_->destination.kind != OutputDestination::Kind::kWriteThrough) {
    if (::fchmod(state_->fd, state_->destination.mode) != 0) status = WriteErrno(path, errno);
    if (status.ok() && ::fsync(state_->fd) != 0) status = WriteErrno(path, errno);
  }
  if (::close(state_->fd) != 0 && status.ok()) status = WriteErrno(path, errno);
  state_->fd = -1;
  if (status.ok() && !state_->temp_path.empty()) {
    if (::rename(state_->temp_path.c_str(), state_->destination.file.c_str()) != 0) {
      status = WriteErrno(path, errno);
    } else {
      state_->temp_path.clear();  // it is the file now
    }
  }
  return status;
}

}  // namespace bubblescope
