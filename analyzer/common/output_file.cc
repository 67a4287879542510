#include "common/output_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <system_error>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "common/output_temp.h"

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

// What an output path is, worked out once for the check of a command's outputs and the write.
struct Destination {
  enum class Kind : uint8_t { kNew, kReplace, kWriteThrough };
  Kind kind = Kind::kNew;
  // kNew: the path as it will be created, its directory resolved (so two spellings of one new
  // file compare equal). kReplace: the regular file at the end of any symlinks.
  std::string file;
  struct stat existing {};  // kReplace and kWriteThrough
  mode_t mode = 0;          // kNew: 0666 minus the umask; kReplace: the file's own bits
};

absl::StatusOr<Destination> Resolve(const std::string& path, const OutputFileOptions& options) {
  if (path.empty()) return WriteError(path, "no file name");
  Destination destination;
  struct stat link {};
  if (::lstat(path.c_str(), &link) != 0) {
    if (errno != ENOENT) return WriteErrno(path, errno);
    destination.kind = Destination::Kind::kNew;
    std::error_code ignored;
    const std::filesystem::path canonical = std::filesystem::weakly_canonical(path, ignored);
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
    destination.kind = Destination::Kind::kWriteThrough;
    destination.file = path;
    return destination;
  }
  for (const std::string& input : options.protected_files) {
    struct stat protected_file {};
    if (::stat(input.c_str(), &protected_file) == 0 &&
        SameFile(protected_file, destination.existing)) {
      return WriteError(path, absl::StrCat("it is the input ", input,
                                           ", which is never overwritten"));
    }
  }
  // As a shell's `>` would: a file this user may not write is not replaced, even where the
  // directory would let a rename through. (Root may write anything, as with `>`.)
  if (::faccessat(AT_FDCWD, path.c_str(), W_OK, AT_EACCESS) != 0) {
    return WriteError(path, absl::StrCat("you may not write it (",
                                         std::error_code(errno, std::generic_category()).message(),
                                         ")"));
  }
  // The file the bytes land in: the end of any chain of symlinks, which stay as they are.
  std::vector<char> resolved(PATH_MAX + 1, '\0');
  if (::realpath(path.c_str(), resolved.data()) == nullptr) return WriteErrno(path, errno);
  destination.kind = Destination::Kind::kReplace;
  destination.file = resolved.data();
  destination.mode = destination.existing.st_mode & 07777;
  return destination;
}

// Writes `contents` beside `destination.file` and renames it over it (a regular file or none).
absl::Status ReplaceAtomically(const std::string& path, const Destination& destination,
                               std::string_view contents) {
  absl::StatusOr<TempFile> temp = CreateTempFile(destination.file);
  if (!temp.ok()) return WriteError(path, temp.status().message());
  const TempFileGuard removed_on_signal(temp->path);
  absl::Status status = WriteAll(temp->fd, contents, path);
  if (status.ok() && ::fchmod(temp->fd, destination.mode) != 0) status = WriteErrno(path, errno);
  if (status.ok() && ::fsync(temp->fd) != 0) status = WriteErrno(path, errno);
  if (::close(temp->fd) != 0 && status.ok()) status = WriteErrno(path, errno);
  if (status.ok() && ::rename(temp->path.c_str(), destination.file.c_str()) != 0) {
    status = WriteErrno(path, errno);
  }
  if (!status.ok()) ::unlink(temp->path.c_str());
  return status;
}

// Writes into what `path` already is (a device, a FIFO, a socket): no file is created or replaced.
absl::Status WriteThrough(const std::string& path, std::string_view contents) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) return WriteErrno(path, errno);
  absl::Status status = WriteAll(fd, contents, path);
  if (::close(fd) != 0 && status.ok()) status = WriteErrno(path, errno);
  return status;
}

// Whether two destinations are one file: the same inode, or the same new path.
bool SameDestination(const Destination& a, const Destination& b) {
  if (a.kind == Destination::Kind::kReplace && b.kind == Destination::Kind::kReplace) {
    return SameFile(a.existing, b.existing);
  }
  return a.kind == Destination::Kind::kNew && b.kind == Destination::Kind::kNew &&
         a.file == b.file;
}

}  // namespace

absl::Status CheckOutputs(const std::vector<NamedOutput>& outputs,
                          const OutputFileOptions& options) {
  std::vector<std::pair<const NamedOutput*, Destination>> resolved;
  for (const NamedOutput& output : outputs) {
    if (output.path.empty()) continue;  // an output not asked for
    absl::StatusOr<Destination> destination = Resolve(output.path, options);
    if (!destination.ok()) {
      return absl::Status(destination.status().code(),
                          absl::StrCat(output.flag, ": ", destination.status().message()));
    }
    // Devices and FIFOs are written through: /dev/null may take several outputs.
    if (destination->kind == Destination::Kind::kWriteThrough) continue;
    for (const auto& [earlier, other] : resolved) {
      if (SameDestination(*destination, other)) {
        return absl::InvalidArgumentError(absl::StrCat(
            output.flag, " names the same file as ", earlier->flag, " (", output.path,
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
  absl::StatusOr<Destination> destination = Resolve(path, options);
  if (!destination.ok()) return destination.status();
  if (destination->kind == Destination::Kind::kWriteThrough) return WriteThrough(path, contents);
  return ReplaceAtomically(path, *destination, contents);
}

}  // namespace bubblescope
