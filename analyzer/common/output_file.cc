#include "common/output_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <filesystem>
#include <system_error>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

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

// Writes `contents` beside `target` and renames it over `target` (a regular file or nothing).
absl::Status ReplaceAtomically(const std::string& path, const std::filesystem::path& target,
                               mode_t mode, std::string_view contents) {
  std::filesystem::path directory = target.parent_path();
  if (directory.empty()) directory = ".";
  // Same directory, so the final rename never crosses a file system.
  const std::string temp_name =
      (directory / absl::StrCat(".", target.filename().string(), ".tmp.XXXXXX")).string();
  std::vector<char> temp(temp_name.begin(), temp_name.end());
  temp.push_back('\0');
  const int fd = ::mkstemp(temp.data());
  if (fd < 0) return WriteErrno(path, errno);
  absl::Status status = WriteAll(fd, contents, path);
  if (status.ok() && ::fchmod(fd, mode) != 0) status = WriteErrno(path, errno);
  if (status.ok() && ::fsync(fd) != 0) status = WriteErrno(path, errno);
  if (::close(fd) != 0 && status.ok()) status = WriteErrno(path, errno);
  if (status.ok() && ::rename(temp.data(), target.c_str()) != 0) status = WriteErrno(path, errno);
  if (!status.ok()) ::unlink(temp.data());
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

bool SameFile(const struct stat& a, const struct stat& b) {
  return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

}  // namespace

absl::Status WriteOutputFile(const std::string& path, std::string_view contents,
                             const OutputFileOptions& options) {
  if (path.empty()) return WriteError(path, "no file name");
  struct stat link {};
  if (::lstat(path.c_str(), &link) != 0) {
    if (errno != ENOENT) return WriteErrno(path, errno);
    return ReplaceAtomically(path, path, NewFileMode(), contents);  // a new file
  }
  struct stat target {};
  if (::stat(path.c_str(), &target) != 0) {
    if (errno == ENOENT) return WriteError(path, "it is a symbolic link to nothing");
    return WriteErrno(path, errno);
  }
  if (S_ISDIR(target.st_mode)) return WriteError(path, "it is a directory");
  if (!S_ISREG(target.st_mode)) return WriteThrough(path, contents);
  for (const std::string& input : options.protected_files) {
    struct stat protected_file {};
    if (::stat(input.c_str(), &protected_file) == 0 && SameFile(protected_file, target)) {
      return WriteError(path, absl::StrCat("it is the input ", input,
                                           ", which is never overwritten"));
    }
  }
  // The file the bytes land in: the end of any chain of symlinks, which stay as they are.
  std::vector<char> resolved(PATH_MAX + 1, '\0');
  if (::realpath(path.c_str(), resolved.data()) == nullptr) return WriteErrno(path, errno);
  return ReplaceAtomically(path, std::filesystem::path(resolved.data()), target.st_mode & 07777,
                           contents);
}

}  // namespace bubblescope
