// The process runtime: the single "disabled" line, the line and metadata when another profiler
// holds CUPTI, the step windows and the recording caps, and a forked child that must leave the
// parent's trace alone.
#include "collector_runtime.h"

#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <future>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "collector_test_util.h"
#include "gtest/gtest.h"
#include "support/test_files.h"

namespace bubblescope::collector::testing {
namespace {

using bubblescope::testing::ReadFile;
using bubblescope::testing::TempDir;

// Hooks on the fake clock that note every recording switch in `*switches`.
RuntimeHooks SwitchRecordingHooks(std::vector<bool>* switches) {
  RuntimeHooks hooks;
  hooks.clock = FakeClock;
  hooks.set_recording = [switches](bool on) { switches->push_back(on); };
  return hooks;
}

// Stands in for cuptiActivityFlushAll: counts the flushes the runtime asks for, lets a test wait
// for the n-th, and can hold a flush inside the hook (as a slow CUPTI would) until released.
class FlushProbe {
 public:
  RuntimeHooks Hooks() {
    RuntimeHooks hooks;
    hooks.clock = FakeClock;
    hooks.flush_activity = [this](bool) {
      std::unique_lock<std::mutex> lock(mutex_);
      ++flushes_;
      changed_.notify_all();
      changed_.wait(lock, [this] { return !holding_; });
    };
    return hooks;
  }
  // Whether `count` flushes began within `timeout`.
  bool WaitForFlushes(int count, std::chrono::milliseconds timeout) {
    std::unique_lock<std::mutex> lock(mutex_);
    return changed_.wait_for(lock, timeout, [&] { return flushes_ >= count; });
  }
  int flushes() {
    std::lock_guard<std::mutex> lock(mutex_);
    return flushes_;
  }
  void Hold(bool hold) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      holding_ = hold;
    }
    changed_.notify_all();
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  int flushes_ = 0;
  bool holding_ = false;
};

// A flush timer of a day: any flush a test sees within seconds was not the timer's.
constexpr char kNeverMs[] = "86400000";
constexpr auto kPrompt = std::chrono::seconds(10);  // generous: the machine may be loaded
// How long a test waits to see that nothing happens.
constexpr auto kQuiet = std::chrono::milliseconds(300);

// Whether `path` holds `text` within `timeout` (the flush thread writes after the hook returns).
bool FileSoonHolds(const std::string& path, const std::string& text,
                   std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (ReadFile(path).find(text) == std::string::npos) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

// Without BUBBLESCOPE_FLUSH_ON_STEP, a step range asks for nothing: the file waits for the
// timer, and the metadata does not mention step flushes. With BUBBLESCOPE_FLUSH_ON_STEP=1
// (`record --live`), with the whole job recorded (no step window): a ProfilerStep#N range opening
// makes the flush thread flush and write the file at once, long before its timer; other ranges
// do not.
TEST(CollectorRuntimeTest, FlushOnStepWritesTheFileWhenAStepBegins) {
  TempDir dir;
  CollectorRuntime& runtime = CollectorRuntime::Instance();
  {
    FlushProbe probe;
    ASSERT_TRUE(runtime.Start(
        Env({{"BUBBLESCOPE_OUTPUT_DIR", dir.path()}, {"BUBBLESCOPE_FLUSH_MS", kNeverMs}}),
        probe.Hooks()));
    const std::string path = runtime.trace_path();
    runtime.sink()->Append(",\n{\"ph\":\"M\",\"name\":\"kernel\",\"pid\":1,\"tid\":1}");
    const std::string before = ReadFile(path);
    EXPECT_EQ(before.find("flush_on_step"), std::string::npos) << before;
    runtime.OnRangeStart("ProfilerStep#7");
    std::this_thread::sleep_for(kQuiet);
    EXPECT_EQ(probe.flushes(), 0);
    EXPECT_EQ(ReadFile(path), before);
    runtime.Shutdown();
  }
  TempDir live_dir;  // the same pid: a file of its own
  FlushProbe probe;
  ASSERT_TRUE(runtime.Start(Env({{"BUBBLESCOPE_OUTPUT_DIR", live_dir.path()},
                                 {"BUBBLESCOPE_FLUSH_MS", kNeverMs},
                                 {"BUBBLESCOPE_FLUSH_ON_STEP", "1"}}),
                            probe.Hooks()));
  const std::string path = runtime.trace_path();
  EXPECT_NE(ReadFile(path).find(",\"max_recording_ms\":0,\"buffer_cap_bytes\":67108864,"
                                "\"flush_on_step\":true}"),
            std::string::npos)
      << ReadFile(path);
  const std::string event = "{\"ph\":\"M\",\"name\":\"step_six_kernel\",\"pid\":1,\"tid\":1}";
  runtime.sink()->Append(",\n" + event);
  const std::string before = ReadFile(path);
  for (const char* name : {"forward", "ProfilerStep#", "ProfilerStep#x", "PP:fwd ProfilerStep#7"}) {
    runtime.OnRangeStart(name);
  }
  std::this_thread::sleep_for(kQuiet);
  EXPECT_EQ(probe.flushes(), 0);
  EXPECT_EQ(ReadFile(path), before);  // still in memory
  runtime.OnRangeStart("ProfilerStep#7");
  EXPECT_TRUE(probe.WaitForFlushes(1, kPrompt));
  EXPECT_TRUE(FileSoonHolds(path, event, kPrompt)) << ReadFile(path);
  std::this_thread::sleep_for(kQuiet);
  EXPECT_EQ(probe.flushes(), 1);  // one step, one flush
  runtime.Shutdown();
  EXPECT_EQ(probe.flushes(), 2);  // and the final one
}

// The NVTX callback runs on the job's training thread: a step range opening while a flush is
// under way (CUPTI slow to hand its buffers over) returns at once instead of waiting for it, and
// the steps opened meanwhile are written by one more flush once that one ends.
TEST(CollectorRuntimeTest, AStepRangeNeverWaitsForAFlush) {
  TempDir dir;
  FlushProbe probe;
  CollectorRuntime& runtime = CollectorRuntime::Instance();
  ASSERT_TRUE(runtime.Start(Env({{"BUBBLESCOPE_OUTPUT_DIR", dir.path()},
                                 {"BUBBLESCOPE_FLUSH_MS", kNeverMs},
                                 {"BUBBLESCOPE_FLUSH_ON_STEP", "1"}}),
                            probe.Hooks()));
  probe.Hold(true);
  runtime.OnRangeStart("ProfilerStep#1");
  EXPECT_TRUE(probe.WaitForFlushes(1, kPrompt));  // the flush thread is now held inside CUPTI
  std::future<void> training_thread = std::async(std::launch::async, [&runtime] {
    runtime.OnRangeStart("ProfilerStep#2");
    runtime.OnRangeStart("ProfilerStep#3");
  });
  EXPECT_EQ(training_thread.wait_for(kPrompt), std::future_status::ready);
  EXPECT_EQ(probe.flushes(), 1);
  probe.Hold(false);
  training_thread.wait();
  EXPECT_TRUE(probe.WaitForFlushes(2, kPrompt));
  std::this_thread::sleep_for(kQuiet);
  EXPECT_EQ(probe.flushes(), 2);  // #2 and #3 asked while #1's flush ran: one flush for both
  runtime.Shutdown();
}

TEST(CollectorRuntimeTest, ARefusalPrintsOneLineAndStaysOff) {
  TempDir dir;
  CollectorRuntime& runtime = CollectorRuntime::Instance();
  ::testing::internal::CaptureStderr();
  EXPECT_FALSE(
      runtime.Start(Env({{"BUBBLESCOPE_OUTPUT_DIR", dir.path()}, {"BUBBLESCOPE_FLUSH_MS", "soon"}}),
                    RuntimeHooks()));
  EXPECT_FALSE(
      runtime.Start(Env({{"BUBBLESCOPE_OUTPUT_DIR", dir.Write("file", "x")}}), RuntimeHooks()));
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
  const RuntimeHooks hooks = SwitchRecordingHooks(&switches);
  CollectorRuntime& runtime = CollectorRuntime::Instance();
  ASSERT_TRUE(runtime.Start(
      Env({{"BUBBLESCOPE_OUTPUT_DIR", dir.path()}, {"BUBBLESCOPE_START", "steps:1:2"}}), hooks));
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
  EXPECT_NE(
      text.find("\"name\":\"bubblescope_cupti_handed_off\",\"pid\":" + std::to_string(getpid()) +
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
  ASSERT_TRUE(runtime.Start(
      Env({{"BUBBLESCOPE_OUTPUT_DIR", dir.path()}, {"BUBBLESCOPE_START", "steps:5:6"}}), hooks));
  runtime.OnRangeStart("ProfilerStep#0");
  ::testing::internal::CaptureStderr();
  runtime.Shutdown();
  EXPECT_EQ(::testing::internal::GetCapturedStderr(),
            "bubblescope collector: no ProfilerStep#5 to #6 range was opened in this process: "
            "nothing recorded (BUBBLESCOPE_START=steps:5:6)\n");
}

// The default window of `record` (steps:+2:+3 here): recording from the start, off at the first
// step range (#40, so +0), on for #42 and #43, off at #44; no "nothing recorded" at exit, and
// the window is in the process metadata.
TEST(CollectorRuntimeTest, RelativeStepWindowRecordsFromTheStart) {
  TempDir dir;
  std::vector<bool> switches;
  const RuntimeHooks hooks = SwitchRecordingHooks(&switches);
  CollectorRuntime& runtime = CollectorRuntime::Instance();
  ASSERT_TRUE(runtime.Start(Env({{"BUBBLESCOPE_OUTPUT_DIR", dir.path()},
                                 {"BUBBLESCOPE_START", "steps:+2:+3"},
                                 {"BUBBLESCOPE_LIMIT", "256:600"}}),
                            hooks));
  EXPECT_EQ(switches, (std::vector<bool>{true}));
  EXPECT_TRUE(runtime.RecordingTransfers());
  runtime.OnRangeStart("ProfilerStep#40");
  EXPECT_FALSE(runtime.RecordingTransfers());  // NCCL transfers follow the window
  for (const char* name : {"ProfilerStep#41", "ProfilerStep#42", "forward", "ProfilerStep#43",
                           "ProfilerStep#44", "ProfilerStep#45"}) {
    runtime.OnRangeStart(name);
  }
  EXPECT_EQ(switches, (std::vector<bool>{true, false, true, false}));
  const std::string path = runtime.trace_path();
  ::testing::internal::CaptureStderr();
  runtime.Shutdown();
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
  EXPECT_NE(ReadFile(path).find("\"start\":\"steps\",\"first_step\":2,\"last_step\":3,"
                                "\"steps_from\":\"first_seen\",\"max_bytes\":268435456,"
                                "\"max_recording_ms\":600000,"),
            std::string::npos)
      << ReadFile(path);
}

// BUBBLESCOPE_LIMIT=1:0: once the file holds 1 MiB, recording stops for good (a later step
// range does not restart it), the trace says why and the one line says so.
TEST(CollectorRuntimeTest, TheByteCapStopsRecordingForGood) {
  TempDir dir;
  std::vector<bool> switches;
  const RuntimeHooks hooks = SwitchRecordingHooks(&switches);
  CollectorRuntime& runtime = CollectorRuntime::Instance();
  ASSERT_TRUE(runtime.Start(Env({{"BUBBLESCOPE_OUTPUT_DIR", dir.path()},
                                 {"BUBBLESCOPE_START", "steps:+0:+5"},
                                 {"BUBBLESCOPE_LIMIT", "1:0"},
                                 {"BUBBLESCOPE_FLUSH_MS", "86400000"}}),
                            hooks));
  const auto now = std::chrono::steady_clock::now();
  const std::string event = ",\n{\"ph\":\"M\",\"name\":\"filler\",\"pid\":1,\"tid\":1}";
  for (size_t bytes = 0; bytes < (size_t{1} << 20) - 4096; bytes += event.size()) {
    runtime.sink()->Append(event);
  }
  runtime.Flush(false);
  runtime.EnforceLimit(now);  // not quite 1 MiB yet
  EXPECT_EQ(switches, (std::vector<bool>{true}));
  for (size_t bytes = 0; bytes < 8192; bytes += event.size()) runtime.sink()->Append(event);
  runtime.Flush(false);
  ::testing::internal::CaptureStderr();
  runtime.EnforceLimit(now);
  runtime.EnforceLimit(now);  // said once
  EXPECT_EQ(::testing::internal::GetCapturedStderr(),
            "bubblescope collector: recording stopped: the trace reached 1 MiB "
            "(BUBBLESCOPE_LIMIT=1:0); the rest of this process's run is not recorded\n");
  EXPECT_EQ(switches, (std::vector<bool>{true, false}));
  runtime.OnRangeStart("ProfilerStep#0");
  runtime.OnRangeStart("ProfilerStep#1");
  EXPECT_EQ(switches, (std::vector<bool>{true, false}));
  EXPECT_FALSE(runtime.RecordingTransfers());
  const std::string path = runtime.trace_path();
  runtime.Shutdown();
  const std::string text = ReadFile(path);
  EXPECT_NE(text.find("{\"ph\":\"M\",\"name\":\"bubblescope_window\",\"pid\":" +
                      std::to_string(getpid()) +
                      ",\"tid\":0,\"args\":{\"stopped_at\":\"max_bytes\",\"max_bytes\":1048576,"
                      "\"max_recording_ms\":0,\"written_bytes\":"),
            std::string::npos);
}

// BUBBLESCOPE_LIMIT=0:5 with recording from a cudaProfilerStart: the 5 s count from that call.
TEST(CollectorRuntimeTest, TheTimeCapCountsFromWhenRecordingBegan) {
  TempDir dir;
  std::vector<bool> switches;
  const RuntimeHooks hooks = SwitchRecordingHooks(&switches);
  CollectorRuntime& runtime = CollectorRuntime::Instance();
  ASSERT_TRUE(runtime.Start(Env({{"BUBBLESCOPE_OUTPUT_DIR", dir.path()},
                                 {"BUBBLESCOPE_START", "profiler-api"},
                                 {"BUBBLESCOPE_LIMIT", "0:5"},
                                 {"RANK", "3"}}),
                            hooks));
  const auto start = std::chrono::steady_clock::now();
  runtime.EnforceLimit(start + std::chrono::hours(1));  // not recording yet: nothing counts
  EXPECT_TRUE(switches.empty());
  runtime.OnProfilerApi(true);
  const auto began = std::chrono::steady_clock::now();
  runtime.EnforceLimit(began + std::chrono::seconds(4));
  EXPECT_EQ(switches, (std::vector<bool>{true}));
  ::testing::internal::CaptureStderr();
  runtime.EnforceLimit(began + std::chrono::seconds(5));
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");  // rank 3: only rank 0 says it
  EXPECT_EQ(switches, (std::vector<bool>{true, false}));
  runtime.OnProfilerApi(true);
  EXPECT_EQ(switches, (std::vector<bool>{true, false}));
  const std::string path = runtime.trace_path();
  runtime.Shutdown();
  EXPECT_NE(ReadFile(path).find("\"stopped_at\":\"max_recording_ms\",\"max_bytes\":0,"
                                "\"max_recording_ms\":5000,"),
            std::string::npos);
  EXPECT_EQ(LimitReachedNotice(RecordingLimit{.max_bytes = 0, .max_recording_ms = 5000}, false),
            "bubblescope collector: recording stopped: it ran for 5 s (BUBBLESCOPE_LIMIT=0:5); "
            "the rest of this process's run is not recorded");
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
