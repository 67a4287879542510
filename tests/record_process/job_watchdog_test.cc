// The watchdog in process: a stand-in for record (a forked process) starts it and a job that
// ignores SIGTERM, then dies with or without releasing it.
#include "record_process/job_watchdog.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>

#include "gtest/gtest.h"
#include "support/process_state.h"
#include "support/test_files.h"

namespace bubblescope {
namespace {

using ::bubblescope::testing::PidWrittenTo;
using ::bubblescope::testing::ProcessEnded;
using ::bubblescope::testing::ProcessEndsWithin;
using ::bubblescope::testing::TempDir;
using namespace std::chrono_literals;

constexpr int64_t kGraceMs = 300;

// Forks the stand-in for record: it starts the watchdog and, in a process group of its own, a
// job that ignores SIGTERM and writes its pid to `ready`; then it exits at once (as if killed
// outright) or after releasing the watchdog. Returns the job's pid (0 if it never started).
pid_t RunOwner(const std::string& ready, bool release) {
  const pid_t owner = fork();
  if (owner == 0) {
    JobWatchdog watchdog(kGraceMs);
    const pid_t job = fork();
    if (job == 0) {
      setpgid(0, 0);
      execl("/bin/sh", "sh", "-c", "trap '' TERM; echo $$ > \"$0\"; while :; do sleep 0.05; done",
            ready.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    setpgid(job, job);
    watchdog.Watch(job);
    if (PidWrittenTo(ready, 60s) == 0) _exit(1);
    if (release) watchdog.Release();
    _exit(0);  // no destructors: the watchdog sees its owner vanish, as after a SIGKILL
  }
  int status = 0;
  waitpid(owner, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return 0;
  return PidWrittenTo(ready, 1s);
}

TEST(JobWatchdogTest, KillsTheJobsGroupWhenItsOwnerDies) {
  TempDir dir;
  const auto started = std::chrono::steady_clock::now();
  const pid_t job = RunOwner(dir.path() + "/ready", /*release=*/false);
  ASSERT_NE(job, 0);
  // SIGTERM is ignored, so only the SIGKILL after the grace period ends it.
  EXPECT_TRUE(ProcessEndsWithin(job, 30s));
  EXPECT_GE(std::chrono::steady_clock::now() - started, std::chrono::milliseconds(kGraceMs));
}

TEST(JobWatchdogTest, ReleasedWatchdogLeavesTheJobAlone) {
  TempDir dir;
  const pid_t job = RunOwner(dir.path() + "/ready", /*release=*/true);
  ASSERT_NE(job, 0);
  EXPECT_FALSE(ProcessEndsWithin(job, std::chrono::milliseconds(4 * kGraceMs)));
  kill(job, SIGKILL);
  EXPECT_TRUE(ProcessEndsWithin(job, 30s));
}

}  // namespace
}  // namespace bubblescope
