#include "support/subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <stdexcept>

extern char** environ;

namespace bubblescope::testing {
namespace {

void Check(bool ok, const char* what) {
  if (!ok) throw std::runtime_error(std::string("RunCommand: ") + what);
}

}  // namespace

CommandResult RunCommand(const std::vector<std::string>& argv, int timeout_seconds) {
  std::array<int, 2> out_pipe{};
  std::array<int, 2> err_pipe{};
  // Close-on-exec: a command another thread starts meanwhile must not inherit this one's pipes
  // (it would hold them open, and this call would wait for it to end as well). The dup2 onto
  // the child's stdout and stderr clears the flag there.
  Check(pipe2(out_pipe.data(), O_CLOEXEC) == 0 && pipe2(err_pipe.data(), O_CLOEXEC) == 0,
        "pipe failed");

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out_pipe[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, err_pipe[1], STDERR_FILENO);
  for (int fd : {out_pipe[0], out_pipe[1], err_pipe[0], err_pipe[1]}) {
    posix_spawn_file_actions_addclose(&actions, fd);
  }
  std::vector<char*> args;
  for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  int spawn_error = posix_spawn(&pid, argv[0].c_str(), &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(out_pipe[1]);
  close(err_pipe[1]);
  Check(spawn_error == 0, "posix_spawn failed");

  CommandResult result;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_seconds);
  std::array<pollfd, 2> fds = {{{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}}};
  int open_fds = 2;
  bool killed = false;
  while (open_fds > 0) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0 && !killed) {
      kill(pid, SIGKILL);
      killed = true;
    }
    int ready = poll(fds.data(), fds.size(), killed ? 1000 : static_cast<int>(left.count()));
    if (ready <= 0) continue;
    for (size_t i = 0; i < fds.size(); ++i) {
      if (fds[i].fd < 0 || (fds[i].revents & (POLLIN | POLLHUP)) == 0) continue;
      char buffer[65536];
      ssize_t n = read(fds[i].fd, buffer, sizeof(buffer));
      if (n <= 0) {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
        continue;
      }
      (i == 0 ? result.out : result.err).append(buffer, static_cast<size_t>(n));
    }
  }
  int status = 0;
  waitpid(pid, &status, 0);
  if (WIFSIGNALED(status)) {
    result.signaled = true;
    result.exit_status = 128 + WTERMSIG(status);
  } else {
    result.exit_status = WEXITSTATUS(status);
  }
  return result;
}

}  // namespace bubblescope::testing
