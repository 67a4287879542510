#include "record_process/job_watchdog.h"

#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

namespace bubblescope {
namespace {

constexpr char kReleaseByte = 'q';

// Reads exactly `size` bytes; false on end of file or an error.
bool ReadExactly(int fd, void* data, size_t size) {
  auto* bytes = static_cast<char*>(data);
  while (size > 0) {
    const ssize_t n = read(fd, bytes, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    bytes += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

bool GroupAlive(pid_t group) { return killpg(group, 0) == 0 || errno == EPERM; }

// The watchdog process itself: waits for the job's group, then for record to release it or to
// die (the socket closes without the release byte). Never returns.
[[noreturn]] void WatchdogMain(int fd, int64_t grace_ms) {
  setsid();
  pid_t group = 0;
  if (!ReadExactly(fd, &group, sizeof group) || group <= 1) _exit(0);
  char byte = 0;
  if (ReadExactly(fd, &byte, 1) && byte == kReleaseByte) _exit(0);
  if (!GroupAlive(group)) _exit(0);
  std::fprintf(stderr,
               "bubblescope: record was killed before its job ended: sending SIGTERM to the "
               "job (process group %d), SIGKILL in %lld ms if it is still running\n",
               static_cast<int>(group), static_cast<long long>(grace_ms));
  killpg(group, SIGTERM);
  constexpr int64_t kPollMs = 50;
  for (int64_t waited = 0; waited < grace_ms && GroupAlive(group); waited += kPollMs) {
    const timespec pause{0, kPollMs * 1'000'000};
    nanosleep(&pause, nullptr);
  }
  if (GroupAlive(group)) killpg(group, SIGKILL);
  _exit(0);
}

}  // namespace

JobWatchdog::JobWatchdog(int64_t grace_ms) {
  // A socket rather than a pipe: writing to it after the watchdog has gone must be an error
  // (MSG_NOSIGNAL), not a SIGPIPE that would kill record.
  int fds[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) return;
  const pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return;
  }
  if (pid == 0) {
    close(fds[1]);
    WatchdogMain(fds[0], grace_ms);
  }
  close(fds[0]);
  pid_ = pid;
  socket_ = fds[1];
}

JobWatchdog::~JobWatchdog() { Release(); }

void JobWatchdog::Watch(pid_t job_group) {
  if (socket_ < 0) return;
  // A write of a few bytes to a local socket and the watchdog reads at once: this never blocks.
  if (send(socket_, &job_group, sizeof job_group, MSG_NOSIGNAL) != sizeof job_group) Release();
}

void JobWatchdog::Release() {
  if (socket_ >= 0) {
    const char byte = kReleaseByte;
    if (send(socket_, &byte, 1, MSG_NOSIGNAL) != 1) {
      // The watchdog is gone already; closing the socket below changes nothing for it.
    }
    close(socket_);
    socket_ = -1;
  }
  if (pid_ > 0) {
    while (waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {
    }
    pid_ = -1;
  }
}

}  // namespace bubblescope
