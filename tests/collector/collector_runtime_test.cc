// The process runtime: the single "disabled" line, the line and metadata when another profiler
// holds CUPTI, and a forked child that must leave the parent's trace alone.
#include "collector_runtime.h"

#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <vector>

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

// Another CUPTI client (Nsight Systems here) holds CUPTI: the trace is still written, with who
// holds it and what is missing, the NCCL side still records, and the one line says the same.
TEST(CollectorRuntimeTest, CuptiHeldByAnotherProfilerIsSaidOnceAndInTheTrace) {
  TempDir dir;
  RuntimeHooks hooks;
  hooks.clock = FakeClock;
  hooks.cupti_held_by = "CUPTI for Nsight Systems";
  CollectorRuntime& runtime = CollectorRuntime::Instance();
  ::testing::internal::CaptureStderr();
  ASSERT_TRUE(runtime.Start(Env({{"BUBBLESCOPE_OUTPUT_DIR", dir.path()},
                                 {"BUBBLESCOPE_KINDS", "kernel,nvtx,nccl"},
                                 {"RANK", "2"}}),
                            hooks));
  EXPECT_EQ(::testing::internal::GetCapturedStderr(),
            "bubblescope collector: CUPTI is held by another profiler (CUPTI for Nsight Systems): "
            "not recording kernel,nvtx in this process; NCCL transfers still recorded\n");
  EXPECT_NE(runtime.nccl(), nullptr);
  const std::string path = runtime.trace_path();
  runtime.Shutdown();
  const std::string text = ReadFile(path);
  EXPECT_NE(text.find("{\"ph\":\"M\",\"name\":\"bubblescope_cupti_unavailable\",\"pid\":" +
                      std::to_string(getpid()) +
                      ",\"tid\":0,\"args\":{\"held_by\":\"CUPTI for Nsight Systems\","
                      "\"not_recorded\":\"kernel,nvtx\",\"recorded\":\"nccl\"}}"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.rfind("[\n{\"ph\":\"M\",\"name\":\"bubblescope_process\"", 0), 0u) << text;
  EXPECT_EQ(text.substr(text.size() - 3), "\n]\n");
}

TEST(CollectorRuntimeTest, CuptiHeldNoticeWithoutAHolderNameOrNccl) {
  EXPECT_EQ(CuptiHeldNotice("", kKindKernel | kKindMemcpy),
            "bubblescope collector: CUPTI is held by another profiler: not recording "
            "kernel,memcpy in this process");
}

// BUBBLESCOPE_START=steps:1:2: recording turns on once at ProfilerStep#1 and off once at #3,
// whatever other ranges open in between.
TEST(CollectorRuntimeTest, StepWindowTurnsRecordingOnAndOffOnce) {
  TempDir dir;
  std::vector<bool> switches;
  RuntimeHooks hooks;
  hooks.clock = FakeClock;
  hooks.set_recording = [&switches](bool on) { switches.push_back(on); };
  CollectorRuntime& runtime = CollectorRuntime::Instance();
  ASSERT_TRUE(runtime.Start(Env({{"BUBBLESCOPE_OUTPUT_DIR", dir.path()},
                                 {"BUBBLESCOPE_START", "steps:1:2"}}),
                            hooks));
  EXPECT_TRUE(switches.empty());  // not recording until the window opens
  for (const char* name : {"ProfilerStep#0", "forward", "ProfilerStep#1", "backward",
                           "ProfilerStep#2", "ProfilerStep#3", "ProfilerStep#4"}) {
    runtime.OnRangeStart(name);
  }
  EXPECT_EQ(switches, (std::vector<bool>{true, false}));
  ::testing::internal::CaptureStderr();
  runtime.Shutdown();
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
}

// torch.profiler starts inside a recorded job and asks for CUPTI: the collector hands CUPTI's
// last buffers to its trace, releases CUPTI once, never turns recording back on (a later step
// range, a periodic or final flush), says so in one line and in the trace, and keeps NCCL.
TEST(CollectorRuntimeTest, HandingCuptiToTheUsersProfilerIsFinalAndSaid) {
  TempDir dir;
  std::vector<std::string> calls;
  RuntimeHooks hooks;
  hooks.clock = FakeClock;
  hooks.set_recording = [&calls](bool on) { calls.push_back(on ? "on" : "off"); };
  hooks.flush_activity = [&calls](bool forced) { calls.push_back(forced ? "flush!" : "flush"); };
  hooks.release_cupti = [&calls] { calls.push_back("release"); };
  CollectorRuntime& runtime = CollectorRuntime::Instance();
  ASSERT_TRUE(runtime.Start(Env({{"BUBBLESCOPE_OUTPUT_DIR", dir.path()},
                                 {"BUBBLESCOPE_FLUSH_MS", "100000"},
                                 {"BUBBLESCOPE_KINDS", "kernel,runtime,nccl"},
                                 {"BUBBLESCOPE_START", "steps:0:9"}}),
                            hooks));
  runtime.OnRangeStart("ProfilerStep#0");
  ::testing::internal::CaptureStderr();
  runtime.HandOffCupti("/site-packages/torch/lib/libtorch_cpu.so");
  runtime.HandOffCupti("again");  // once only
  EXPECT_EQ(::testing::internal::GetCapturedStderr(),
            "bubblescope collector: another profiler asked for CUPTI "
            "(/site-packages/torch/lib/libtorch_cpu.so): handed over; kernel,runtime from here on "
            "are in its trace, not bubblescope's; NCCL transfers still recorded\n");
  runtime.OnRangeStart("ProfilerStep#10");  // would turn recording off: CUPTI is not ours
  runtime.OnRangeStart("ProfilerStep#1");
  EXPECT_NE(runtime.nccl(), nullptr);
  const std::string path = runtime.trace_path();
  runtime.Shutdown();
  EXPECT_EQ(calls, (std::vector<std::string>{"on", "flush!", "release"}));
  const std::string text = ReadFile(path);
  EXPECT_NE(text.find("\"name\":\"bubblescope_cupti_handed_off\",\"pid\":" +
                      std::to_string(getpid()) +
                      ",\"tid\":0,\"args\":{\"to\":\"/site-packages/torch/lib/libtorch_cpu.so\","
                      "\"at_ns\":"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("\"not_recorded_after\":\"kernel,runtime\",\"recorded\":\"nccl\"}}"),
            std::string::npos)
      << text;
}

TEST(CollectorRuntimeTest, AStepWindowNeverOpenedIsSaidAtExit) {
  TempDir dir;
  RuntimeHooks hooks;
  hooks.clock = FakeClock;
  hooks.set_recording = [](bool) {};
  CollectorRuntime& runtime = CollectorRuntime::Instance();
  ASSERT_TRUE(runtime.Start(Env({{"BUBBLESCOPE_OUTPUT_DIR", dir.path()},
                                 {"BUBBLESCOPE_START", "steps:5:6"}}),
                            hooks));
  runtime.OnRangeStart("ProfilerStep#0");
  ::testing::internal::CaptureStderr();
  runtime.Shutdown();
  EXPECT_EQ(::testing::internal::GetCapturedStderr(),
            "bubblescope collector: no ProfilerStep#5 to #6 range was opened in this process: "
            "nothing recorded (BUBBLESCOPE_START=steps:5:6)\n");
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
