// The trace file: incremental flushes, a writer process killed with SIGKILL at random points, and
// the buffer pool's cap.
#include "trace_writer.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <random>
#include <string>

#include "activity_buffer.h"
#include "chrome_json.h"
#include "collector_test_util.h"
#include "gtest/gtest.h"
#include "support/test_files.h"

namespace bubblescope::collector::testing {
namespace {

using bubblescope::testing::ReadFile;
using bubblescope::testing::TempDir;

std::string KernelEvent(int64_t index) {
  std::string out;
  ChromeEvent(&out, "X", "kernel", "k" + std::to_string(index))
      .Int("pid", 0)
      .Int("tid", 7)
      .Micros("ts", index * 1000)
      .Micros("dur", 500)
      .Args()
      .Int("device", 0)
      .Int("stream", 7)
      .Int("correlation", index + 1)
      .Finish();
  return out;
}

std::string FirstEvent() {
  std::string out;
  ChromeEvent(&out, "M", "", "bubblescope_process").Int("pid", 1).Int("tid", 0).Args().Finish();
  return out;
}

TEST(TraceWriterTest, EventsReachTheFileOnFlushAndCloseAddsTheBracket) {
  TempDir dir;
  std::string error;
  ASSERT_TRUE(MakeDirectories(dir.path() + "/a/b", &error)) << error;
  const std::string path = dir.path() + "/a/b/trace.json";
  auto writer = TraceWriter::Create(path, FirstEvent(), &error);
  ASSERT_NE(writer, nullptr) << error;
  EXPECT_EQ(TraceWriter::Create(path, FirstEvent(), &error), nullptr);  // never overwritten
  EXPECT_NE(error.find("cannot create"), std::string::npos);

  writer->Append(KernelEvent(0) + KernelEvent(1));
  EXPECT_EQ(ReadFile(path), "[\n" + FirstEvent().substr(2));  // appended, not yet written
  ASSERT_TRUE(writer->Flush());
  Rank rank = LoadOneRank(path);
  EXPECT_EQ(IntervalsOf(rank, IntervalKind::kComputeKernel).size(), 2u);
  EXPECT_EQ(rank.stats.count(ImportCounter::kUnterminatedArray), 1u);  // legal, noted

  writer->Append(KernelEvent(2));
  ASSERT_TRUE(writer->Close());
  EXPECT_TRUE(writer->Close());    // a second close does nothing
  writer->Append(KernelEvent(3));  // after close: dropped and counted
  EXPECT_EQ(writer->dropped_bytes(), KernelEvent(3).size());
  rank = LoadOneRank(path);
  EXPECT_EQ(IntervalsOf(rank, IntervalKind::kComputeKernel).size(), 3u);
  EXPECT_EQ(rank.stats.count(ImportCounter::kUnterminatedArray), 0u);
  EXPECT_EQ(rank.stats.count(ImportCounter::kTruncated), 0u);
}

TEST(TraceWriterTest, FailsCleanlyWhereNoFileCanBeMade) {
  TempDir dir;
  std::string error;
  const std::string file = dir.Write("plain", "x");
  EXPECT_FALSE(MakeDirectories(file + "/sub", &error));
  EXPECT_FALSE(error.empty());
  EXPECT_EQ(TraceWriter::Create(dir.path() + "/missing/t.json", FirstEvent(), &error), nullptr);
}

// A child process appends events and flushes every few, reporting each flushed total on a pipe;
// the parent kills it with SIGKILL after a random number of reports (fixed seed). Whatever the
// moment, the file loads with at least the events flushed before the kill.
TEST(TraceWriterTest, SigkillAtRandomPointsLeavesALoadableFile) {
  std::mt19937 random(20261122);
  for (int round = 0; round < 6; ++round) {
    TempDir dir;
    const std::string path = dir.path() + "/trace.json";
    int pipe_fds[2];
    ASSERT_EQ(pipe(pipe_fds), 0);
    const pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      close(pipe_fds[0]);
      std::string error;
      auto writer = TraceWriter::Create(path, FirstEvent(), &error);
      if (writer == nullptr) _exit(2);
      for (int64_t i = 0;; ++i) {
        writer->Append(KernelEvent(i));
        if (i % 7 == 6) {
          writer->Flush();
          const int64_t flushed = i + 1;
          if (write(pipe_fds[1], &flushed, sizeof(flushed)) != sizeof(flushed)) _exit(3);
        }
      }
    }
    close(pipe_fds[1]);
    const int reports = std::uniform_int_distribution<int>(1, 40)(random);
    int64_t flushed = 0;
    for (int i = 0; i < reports; ++i) {
      ASSERT_EQ(read(pipe_fds[0], &flushed, sizeof(flushed)),
                static_cast<ssize_t>(sizeof(flushed)));
    }
    kill(child, SIGKILL);
    int status = 0;
    waitpid(child, &status, 0);
    close(pipe_fds[0]);
    ASSERT_TRUE(WIFSIGNALED(status));
    const Rank rank = LoadOneRank(path);
    EXPECT_GE(IntervalsOf(rank, IntervalKind::kComputeKernel).size(), static_cast<size_t>(flushed))
        << "round " << round;
  }
}

TEST(BufferPoolTest, CapRefusesAndCountsThenReusesReleasedBuffers) {
  BufferPool pool(1000, 3000);  // buffers round up to 1000 bytes (8-aligned); three fit
  EXPECT_EQ(pool.buffer_bytes(), 1000u);
  EXPECT_EQ(pool.max_buffers(), 3u);
  uint8_t* a = pool.Acquire();
  uint8_t* b = pool.Acquire();
  uint8_t* c = pool.Acquire();
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a) % 8, 0u);
  EXPECT_EQ(pool.Acquire(), nullptr);
  EXPECT_EQ(pool.Acquire(), nullptr);
  EXPECT_EQ(pool.refused(), 2u);
  EXPECT_EQ(pool.in_use(), 3u);
  pool.Release(b);
  EXPECT_EQ(pool.in_use(), 2u);
  EXPECT_EQ(pool.Acquire(), b);  // reused, not a fourth allocation
  EXPECT_EQ(pool.refused(), 2u);
  BufferPool odd(1001, 100);  // a cap below one buffer still allows one
  EXPECT_EQ(odd.buffer_bytes(), 1008u);
  EXPECT_EQ(odd.max_buffers(), 1u);
}

}  // namespace
}  // namespace bubblescope::collector::testing
