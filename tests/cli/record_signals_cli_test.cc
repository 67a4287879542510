// `bubblescope record` and the job's life: signals passed on, a job that ignores them killed at a
// second signal or after --kill-after, the job stopped when record itself is killed outright,
// and a job at a terminal getting the terminal (input, Ctrl-C, Ctrl-Z) as a shell's foreground
// job does. The real binary runs small shell jobs; the collector is a stand-in file.
#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "support/process_state.h"
#include "support/test_files.h"

extern char** environ;

namespace bubblescope::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using Clock = std::chrono::steady_clock;

// Generous limits that only keep a broken record from hanging the suite; a working one never
// comes near them.
constexpr auto kPatience = std::chrono::seconds(60);

std::vector<char*> Pointers(std::vector<std::string>& strings) {
  std::vector<char*> pointers;
  for (std::string& text : strings) pointers.push_back(text.data());
  pointers.push_back(nullptr);
  return pointers;
}

// Waits for `pid` to end; false (and nothing reaped) if it is still running at `give_up`.
bool WaitUntil(pid_t pid, Clock::time_point give_up, int* status) {
  while (Clock::now() < give_up) {
    if (waitpid(pid, status, WNOHANG) == pid) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

class RecordSignalsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    collector_ = dir_.Write("fake_collector.so", "not a library");
    output_ = Path("out");
  }
  void TearDown() override {
    // Whatever a failed test left running is stopped here, never left behind.
    for (pid_t pid : started_) kill(pid, SIGKILL);
    if (record_ > 0) {
      kill(record_, SIGKILL);
      waitpid(record_, nullptr, 0);
    }
  }

  std::string Path(const std::string& name) const {
    return (fs::path(dir_.path()) / name).string();
  }

  std::vector<std::string> RecordArgv(const std::string& script,
                                      const std::vector<std::string>& extra = {}) const {
    std::vector<std::string> argv = {BUBBLESCOPE_BINARY, "record",  "-o", output_,
                                     "--collector",      collector_};
    argv.insert(argv.end(), extra.begin(), extra.end());
    argv.insert(argv.end(), {"--", "sh", "-c", script, "sh", dir_.path()});
    return argv;
  }

  // Starts record in the background, stdin from /dev/null and stderr into the file "err".
  void Start(const std::string& script, const std::vector<std::string>& extra = {}) {
    std::vector<std::string> args = RecordArgv(script, extra);
    std::vector<char*> argv = Pointers(args);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    const std::string err = Path("err");
    posix_spawn_file_actions_addopen(&actions, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ASSERT_EQ(posix_spawn(&record_, argv[0], &actions, nullptr, argv.data(), environ), 0);
    posix_spawn_file_actions_destroy(&actions);
  }

  // The pid a job wrote, one line, to `name` in the test directory (0 if it never did).
  pid_t PidFrom(const std::string& name) {
    const pid_t pid = PidWrittenTo(Path(name), kPatience);
    if (pid > 0) started_.push_back(pid);
    return pid;
  }

  // record's wait status, or a test failure if it is still running after kPatience.
  int RecordStatus() {
    int status = 0;
    if (!WaitUntil(record_, Clock::now() + kPatience, &status)) {
      ADD_FAILURE() << "record is still running";
      return -1;
    }
    record_ = 0;
    return status;
  }

  TempDir dir_;
  std::string collector_;
  std::string output_;
  pid_t record_ = 0;
  std::vector<pid_t> started_;
};

// A job that ignores SIGTERM, with a background grandchild: "ready" holds the job's pid,
// "grandchild" the grandchild's, both once the trap is in place.
constexpr char kStubbornJob[] =
    "trap '' TERM; sleep 300 & echo $! > \"$1/grandchild\"; echo $$ > \"$1/ready\"; "
    "while :; do sleep 0.05; done";

TEST_F(RecordSignalsTest, SigtermToRecordReachesTheJob) {
  Start(
      "trap 'echo terminated > \"$1/marker\"; exit 0' TERM; echo $$ > \"$1/ready\"; "
      "while :; do sleep 0.05; done");
  ASSERT_NE(PidFrom("ready"), 0) << "the job never started";
  ASSERT_EQ(kill(record_, SIGTERM), 0);
  const int status = RecordStatus();
  ASSERT_TRUE(WIFEXITED(status)) << "record died of signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_EQ(ReadFile(Path("marker")), "terminated\n");
  EXPECT_THAT(ReadFile(Path("err")), HasSubstr("passed SIGTERM on to the job"));
}

TEST_F(RecordSignalsTest, SecondSignalKillsTheWholeJob) {
  Start(kStubbornJob);
  const pid_t job = PidFrom("ready");
  const pid_t grandchild = PidFrom("grandchild");
  ASSERT_NE(job, 0);
  ASSERT_NE(grandchild, 0);
  ASSERT_EQ(kill(record_, SIGTERM), 0);
  // The job ignores it: record must keep waiting, not give up on its own.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_FALSE(ProcessEnded(job));
  int status = 0;
  EXPECT_EQ(waitpid(record_, &status, WNOHANG), 0) << "record ended after one SIGTERM";
  ASSERT_EQ(kill(record_, SIGINT), 0);  // any mix of ending signals counts
  status = RecordStatus();
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 128 + SIGKILL);
  EXPECT_TRUE(ProcessEndsWithin(job, std::chrono::seconds(10)));
  EXPECT_TRUE(ProcessEndsWithin(grandchild, std::chrono::seconds(10)));
  const std::string err = ReadFile(Path("err"));
  EXPECT_THAT(err, HasSubstr("a second signal kills it"));
  EXPECT_THAT(err, HasSubstr("second request to end the job (SIGINT): killing the job's process "
                             "group (" +
                             std::to_string(job) + ") with SIGKILL"));
}

TEST_F(RecordSignalsTest, KillAfterEndsAJobThatIgnoresTheSignal) {
  Start(kStubbornJob, {"--kill-after", "1"});
  const pid_t job = PidFrom("ready");
  ASSERT_NE(job, 0);
  const auto sent = Clock::now();
  ASSERT_EQ(kill(record_, SIGTERM), 0);
  const int status = RecordStatus();
  const auto waited = Clock::now() - sent;
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 128 + SIGKILL);
  EXPECT_GE(waited, std::chrono::milliseconds(1000));
  EXPECT_TRUE(ProcessEndsWithin(job, std::chrono::seconds(10)));
  EXPECT_THAT(ReadFile(Path("err")),
              HasSubstr("the job was still running 1000 ms after it was asked to end"));
}

TEST_F(RecordSignalsTest, UserSignalsArePassedOnWithoutKilling) {
  Start(
      "trap 'echo usr1 >> \"$1/marker\"' USR1; echo $$ > \"$1/ready\"; "
      "while [ ! -s \"$1/marker\" ]; do sleep 0.05; done; exit 4");
  ASSERT_NE(PidFrom("ready"), 0);
  ASSERT_EQ(kill(record_, SIGUSR1), 0);
  const int status = RecordStatus();
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 4);
  EXPECT_EQ(ReadFile(Path("marker")), "usr1\n");
}

TEST_F(RecordSignalsTest, RecordKilledOutrightStopsTheJob) {
  Start("echo $$ > \"$1/ready\"; while :; do sleep 0.05; done");
  const pid_t job = PidFrom("ready");
  ASSERT_NE(job, 0);
  ASSERT_EQ(kill(record_, SIGKILL), 0);
  waitpid(record_, nullptr, 0);
  record_ = 0;
  EXPECT_TRUE(ProcessEndsWithin(job, std::chrono::seconds(20))) << "the job outlived record";
  EXPECT_THAT(ReadFile(Path("err")), HasSubstr("record was killed before its job ended"));
}

// A terminal: record runs as the session leader of a pseudo-terminal, the way a shell's
// foreground job would, and the test types into it.
class RecordAtTerminalTest : public RecordSignalsTest {
 protected:
  void StartAtTerminal(const std::string& script) {
    std::vector<std::string> args = RecordArgv(script);
    std::vector<char*> argv = Pointers(args);
    record_ = forkpty(&master_, nullptr, nullptr, nullptr);
    ASSERT_GE(record_, 0) << "no pseudo-terminal: " << std::strerror(errno);
    if (record_ == 0) {
      execve(argv[0], argv.data(), environ);
      _exit(127);
    }
  }
  void TearDown() override {
    RecordSignalsTest::TearDown();
    if (master_ >= 0) close(master_);
  }

  void Type(const std::string& keys) {
    ASSERT_EQ(write(master_, keys.data(), keys.size()), static_cast<ssize_t>(keys.size()));
  }
  // Reads the terminal until `wanted` has appeared in what it showed; false at kPatience.
  bool ShowsWithin(const std::string& wanted) {
    const auto give_up = Clock::now() + kPatience;
    while (screen_.find(wanted) == std::string::npos && Clock::now() < give_up) {
      pollfd ready{master_, POLLIN, 0};
      if (poll(&ready, 1, 50) <= 0) continue;
      char buffer[256];
      const ssize_t n = read(master_, buffer, sizeof buffer);
      if (n <= 0) break;
      screen_.append(buffer, static_cast<size_t>(n));
    }
    return screen_.find(wanted) != std::string::npos;
  }

  int master_ = -1;
  std::string screen_;
};

TEST_F(RecordAtTerminalTest, JobReadsTheTerminalAndCtrlCReachesItOnce) {
  StartAtTerminal(
      "trap 'echo interrupted >> \"$1/marker\"; exit 5' INT; echo $$ > \"$1/ready\"; "
      "read line; echo \"got $line\"; while :; do sleep 0.05; done");
  ASSERT_NE(PidFrom("ready"), 0);
  Type("hello\n");
  ASSERT_TRUE(ShowsWithin("got hello")) << screen_;
  Type("\x03");  // Ctrl-C
  const int status = RecordStatus();
  ASSERT_TRUE(WIFEXITED(status)) << "record died of signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 5);
  EXPECT_EQ(ReadFile(Path("marker")), "interrupted\n");
}

TEST_F(RecordAtTerminalTest, CtrlZStopsRecordWithTheJobAndContinueResumesBoth) {
  // The job is one process (no shell loop): a shell stopped while it waits in vfork for a child
  // that has not executed yet cannot stop until that child does, which would test dash, not us.
  StartAtTerminal("echo $$ > \"$1/ready\"; exec sleep 300");
  ASSERT_NE(PidFrom("ready"), 0);
  Type("\x1a");  // Ctrl-Z
  int status = 0;
  const auto give_up = Clock::now() + kPatience;
  while (Clock::now() < give_up && waitpid(record_, &status, WNOHANG | WUNTRACED) == 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_TRUE(WIFSTOPPED(status)) << "record did not stop with its job";
  // What a shell's `fg` does: continue record's group, whose terminal it still is. record gives
  // the terminal back to the job and continues it, so Ctrl-C reaches the job again.
  ASSERT_EQ(kill(record_, SIGCONT), 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  Type("\x03");
  status = RecordStatus();
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 128 + SIGINT);
}

}  // namespace
}  // namespace bubblescope::testing
