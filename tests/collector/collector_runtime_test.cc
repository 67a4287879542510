// The process runtime: the single "disabled" line, and a forked child that must leave the parent's
// trace alone.
#include "collector_runtime.h"

#include <sys/wait.h>
#include <unistd.h>

#include <string>

#include "collector_test_util.h"
#include "gtest/gtest.h"
#include "support/test_files.h"

namespace bubblescope::collector::testing {
namespace {

using bubblescope::testing::ReadFile;
using bubblescope::testing::TempDir;

TEST(CollectorRuntimeTest, ARefusalPrintsOneLineAndStaysOff) {
  TempDir dir;
  CollectorRuntime& runtime = CollectorRuntime::Instance();
  ::testing::internal::CaptureStderr();
  EXPECT_FALSE(runtime.Start(Env({{"BUBBLESCOPE_OUTPUT_DIR", dir.path()},
                                  {"BUBBLESCOPE_FLUSH_MS", "soon"}}),
                             RuntimeHooks()));
  EXPECT_FALSE(runtime.Start(Env({{"BUBBLESCOPE_OUTPUT_DIR", dir.Write("file", "x")}}),
                             RuntimeHooks()));
  EXPECT_FALSE(runtime.EnsureStarted());  // refused once: stays off
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(err,
            "bubblescope collector: disabled: BUBBLESCOPE_FLUSH_MS: 'soon' is not a positive "
            "integer\n");
  EXPECT_FALSE(runtime.running());
  EXPECT_EQ(runtime.nccl(), nullptr);
}

TEST(CollectorRuntimeTest, AForkedChildLeavesTheParentsTraceAlone) {
  TempDir dir;
  RuntimeHooks hooks;
  hooks.clock = FakeClock;
  CollectorRuntime& runtime = CollectorRuntime::Instance();
  ASSERT_TRUE(runtime.Start(Env({{"BUBBLESCOPE_OUTPUT_DIR", dir.path()}}), hooks));
  const std::string path = runtime.trace_path();
  const std::string before = ReadFile(path);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    alarm(20);  // a child stuck joining the parent's flush thread dies instead of hanging
    runtime.Flush(true);
    runtime.Shutdown();  // what its atexit handler would do
    _exit(runtime.nccl() == nullptr ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status)) << "child killed by signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_EQ(ReadFile(path), before);  // no closing bracket, no counts from the child
  EXPECT_TRUE(runtime.running());
  runtime.Shutdown();
  EXPECT_EQ(ReadFile(path), before + "\n]\n");
}

}  // namespace
}  // namespace bubblescope::collector::testing
