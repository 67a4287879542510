// The job run as a shell runs a foreground job: exit statuses, signals passed on, a second
// ending signal, the job's own process group.
#include "record_process/child_process.h"

#include <signal.h>

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "support/test_files.h"

namespace bubblescope {
namespace {

using ::bubblescope::testing::TempDir;
using ::testing::HasSubstr;
using ::testing::StartsWith;

TEST(RunChildProcessTest, ShellExitStatuses) {
  ChildProcessOptions options;
  options.argv = {"sh", "-c", "exit 7"};
  EXPECT_EQ(RunChildProcess(options)->exit_status, 7);
  options.argv = {"sh", "-c", "kill -USR1 $$"};
  absl::StatusOr<ChildExit> killed = RunChildProcess(options);
  ASSERT_TRUE(killed.ok()) << killed.status();
  EXPECT_EQ(killed->signal, SIGUSR1);
  EXPECT_EQ(killed->exit_status, 128 + SIGUSR1);
  options.argv = {"bubblescope-no-such-command"};
  absl::StatusOr<ChildExit> missing = RunChildProcess(options);
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(missing.status().message(), "bubblescope-no-such-command: command not found");
  EXPECT_EQ(ExitStatusForStartError(missing.status()), 127);
  TempDir dir;
  options.argv = {dir.Write("not-executable", "#!/bin/sh\n")};
  absl::StatusOr<ChildExit> refused = RunChildProcess(options);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(ExitStatusForStartError(refused.status()), 126);
}

TEST(RunChildProcessTest, SecondEndingSignalKillsTheGroupAndSaysSo) {
  // The job sends its parent (this process) SIGTERM twice while ignoring it itself; each is
  // passed back to the job, and the second kills the job's group.
  ChildProcessOptions options;
  options.argv = {"sh", "-c",
                  "trap '' TERM; kill -TERM $PPID; sleep 1.2; kill -TERM $PPID; "
                  "sleep 60"};
  options.forwarded_signals = {SIGTERM, SIGUSR1};
  options.ending_signals = {SIGTERM};
  std::vector<std::string> notices;
  options.notice = [&notices](const std::string& line) { notices.push_back(line); };
  absl::StatusOr<ChildExit> exit = RunChildProcess(options);
  ASSERT_TRUE(exit.ok()) << exit.status();
  EXPECT_EQ(exit->signal, SIGKILL);
  EXPECT_EQ(exit->exit_status, 128 + SIGKILL);
  EXPECT_TRUE(exit->killed_here);
  ASSERT_EQ(notices.size(), 2u);
  EXPECT_THAT(notices[0], StartsWith("passed SIGTERM on to the job (pid "));
  EXPECT_THAT(notices[0], HasSubstr("); a second signal kills it"));
  EXPECT_THAT(notices[1], StartsWith("second request to end the job (SIGTERM): killing the "
                                     "job's process group ("));
}

TEST(RunChildProcessTest, TheSameSignalTwiceAtOnceIsOneRequest) {
  // As `timeout` delivers it: to this process, then to its process group, back to back.
  ChildProcessOptions options;
  options.argv = {"sh", "-c",
                  "trap '' TERM; kill -TERM $PPID; kill -TERM $PPID; sleep 0.3; exit 3"};
  options.forwarded_signals = {SIGTERM};
  options.ending_signals = {SIGTERM};
  std::vector<std::string> notices;
  options.notice = [&notices](const std::string& line) { notices.push_back(line); };
  absl::StatusOr<ChildExit> exit = RunChildProcess(options);
  ASSERT_TRUE(exit.ok()) << exit.status();
  EXPECT_EQ(exit->exit_status, 3);
  EXPECT_FALSE(exit->killed_here);
  ASSERT_EQ(notices.size(), 1u);
  EXPECT_THAT(notices[0], StartsWith("passed SIGTERM on to the job"));
}

TEST(RunChildProcessTest, JobRunsInAProcessGroupOfItsOwn) {
  ChildProcessOptions options;
  // Field 5 of /proc/PID/stat is the process group (the command name "(sh)" has no spaces).
  options.argv = {"sh", "-c", "set -- $(cat /proc/$$/stat); [ \"$5\" = \"$$\" ]"};
  absl::StatusOr<ChildExit> exit = RunChildProcess(options);
  ASSERT_TRUE(exit.ok()) << exit.status();
  EXPECT_EQ(exit->exit_status, 0);
  EXPECT_FALSE(exit->killed_here);
}

}  // namespace
}  // namespace bubblescope
