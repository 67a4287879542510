#include "child_process.h"

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace bubblescope::bench {
namespace {

bool WriteAll(int fd, const std::string& text) {
  size_t written = 0;
  while (written < text.size()) {
    ssize_t n = write(fd, text.data() + written, text.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    written += static_cast<size_t>(n);
  }
  return true;
}

}  // namespace

absl::StatusOr<ChildResult> RunInChild(const std::function<absl::StatusOr<std::string>()>& work) {
  int fds[2];
  if (pipe(fds) != 0) return absl::InternalError(absl::StrCat("pipe: ", std::strerror(errno)));
  pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return absl::InternalError(absl::StrCat("fork: ", std::strerror(errno)));
  }
  if (pid == 0) {
    close(fds[0]);
    absl::StatusOr<std::string> report = work();
    // First byte tells the parent whether the rest is a report or an error message.
    std::string message(1, report.ok() ? '+' : '-');
    message.append(report.ok() ? *report : report.status().ToString());
    bool sent = WriteAll(fds[1], message);
    close(fds[1]);
    _exit(sent && report.ok() ? 0 : 1);
  }
  close(fds[1]);
  std::string received;
  char buffer[65536];
  while (true) {
    ssize_t n = read(fds[0], buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    received.append(buffer, static_cast<size_t>(n));
  }
  close(fds[0]);
  int status = 0;
  struct rusage usage {};
  while (wait4(pid, &status, 0, &usage) < 0) {
    if (errno != EINTR) return absl::InternalError(absl::StrCat("wait4: ", std::strerror(errno)));
  }
  if (received.empty() || received[0] != '+') {
    std::string why = received.size() > 1 ? received.substr(1) : "child died";
    if (WIFSIGNALED(status)) absl::StrAppend(&why, " (signal ", WTERMSIG(status), ")");
    return absl::InternalError(why);
  }
  ChildResult result;
  result.output = received.substr(1);
  result.max_rss_bytes = static_cast<int64_t>(usage.ru_maxrss) * 1024;  // Linux reports KiB
  auto seconds = [](const timeval& t) {
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6;
  };
  result.cpu_seconds = seconds(usage.ru_utime) + seconds(usage.ru_stime);
  result.system_seconds = seconds(usage.ru_stime);
  result.minor_faults = usage.ru_minflt;
  result.involuntary_switches = usage.ru_nivcsw;
  return result;
}

}  // namespace bubblescope::bench
