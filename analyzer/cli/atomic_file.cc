#include "cli/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <system_error>
#include <vector>

#include "absl/strings/str_cat.h"

namespace bubblescope {
namespace {

absl::Status WriteError(const std::string& path, int error) {
  return absl::UnavailableError(absl::StrCat(
      "cannot write ", path, ": ", std::error_code(error, std::generic_category()).message()));
}

// The file the bytes must finally land in: the target of a symlink rather than the link itself.
std::filesystem::path ResolveTarget(const std::string& path) {
  std::error_code error;
  std::filesystem::path target(path);
  if (std::filesystem::is_symlink(target, error)) {
    std::filesystem::path resolved = std::filesystem::weakly_canonical(target, error);
    if (!error) return resolved;
  }
  return target;
}

mode_t ModeFor(const std::filesystem::path& target) {
  struct stat existing {};
  if (::stat(target.c_str(), &existing) == 0) return existing.st_mode & 07777;
  // umask can only be read by setting it; the CLI is single-threaded when it writes its output.
  mode_t mask = ::umask(0);
  ::umask(mask);
  return static_cast<mode_t>(0666 & ~mask);
}

absl::Status WriteAll(int fd, std::string_view contents, const std::string& path) {
  while (!contents.empty()) {
    ssize_t written = ::write(fd, contents.data(), contents.size());
    if (written < 0) {
      if (errno == EINTR) continue;
      return WriteError(path, errno);
    }
    contents.remove_prefix(static_cast<size_t>(written));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status WriteFileAtomically(const std::string& path, std::string_view contents) {
  std::filesystem::path target = ResolveTarget(path);
  std::filesystem::path directory = target.parent_path();
  if (directory.empty()) directory = ".";
  // Same directory, so the final rename never crosses a file system.
  std::string temp_name =
      (directory / absl::StrCat(".", target.filename().string(), ".tmp.XXXXXX")).string();
  std::vector<char> temp(temp_name.begin(), temp_name.end());
  temp.push_back('\0');
  int fd = ::mkstemp(temp.data());
  if (fd < 0) return WriteError(path, errno);

  absl::Status status = WriteAll(fd, contents, path);
  if (status.ok() && ::fchmod(fd, ModeFor(target)) != 0) status = WriteError(path, errno);
  if (status.ok() && ::fsync(fd) != 0) status = WriteError(path, errno);
  if (::close(fd) != 0 && status.ok()) status = WriteError(path, errno);
  if (status.ok() && ::rename(temp.data(), target.c_str()) != 0) status = WriteError(path, errno);
  if (!status.ok()) ::unlink(temp.data());
  return status;
}

}  // namespace bubblescope
