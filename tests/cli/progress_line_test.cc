// The progress line of a long load: when it is drawn, what it says, and that it is cleared.
#include "cli/progress_line.h"

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <iostream>
#include <sstream>
#include <string>

#include "gtest/gtest.h"

namespace bubblescope {
namespace {

using std::chrono::milliseconds;
using TimePoint = std::chrono::steady_clock::time_point;

constexpr char kErase[] = "\r\033[K";

LoadProgress Done(size_t files, int64_t bytes) {
  return LoadProgress{
      .files_done = files, .files_total = 4, .bytes_done = bytes, .bytes_total = 400'000'000};
}

TEST(ProgressTextTest, FilesBytesAndRate) {
  // 150 MB in 2.5 s: 60 MB/s.
  EXPECT_EQ(ProgressText(Done(1, 150'000'000), 2.5),
            "reading traces: 1 of 4 files, 150.0 of 400.0 MB, 60.0 MB/s");
  EXPECT_EQ(ProgressText(Done(0, 0), 0), "reading traces: 0 of 4 files, 0.0 of 400.0 MB, 0.0 MB/s");
}

class ProgressLineTest : public ::testing::Test {
 protected:
  TimePoint now_{};
  std::ostringstream out_;
  ProgressLine::Clock clock_ = [this] { return now_; };
};

TEST_F(ProgressLineTest, NothingInTheFirstSecondsThenOneLineRewrittenAndCleared) {
  {
    ProgressLine line(out_, clock_);
    now_ += milliseconds(1999);
    line.Update(Done(1, 100'000'000));
    EXPECT_EQ(out_.str(), "");  // a load this short never shows a line
    now_ += milliseconds(1);    // 2 s: 100 MB read so far, 50 MB/s
    line.Update(Done(2, 100'000'000));
    EXPECT_EQ(out_.str(), std::string(kErase) +
                              "reading traces: 2 of 4 files, 100.0 of 400.0 MB, "
                              "50.0 MB/s");
    out_.str("");
    now_ += milliseconds(100);  // too soon to redraw
    line.Update(Done(3, 300'000'000));
    EXPECT_EQ(out_.str(), "");
    now_ += milliseconds(100);  // 2.2 s
    line.Update(Done(3, 330'000'000));
    EXPECT_EQ(out_.str(), std::string(kErase) +
                              "reading traces: 3 of 4 files, 330.0 of 400.0 MB, "
                              "150.0 MB/s");
    out_.str("");
    now_ += milliseconds(1);  // the last file is drawn however soon it comes
    line.Update(Done(4, 400'000'000));
    EXPECT_NE(out_.str().find("4 of 4 files"), std::string::npos) << out_.str();
    out_.str("");
  }
  EXPECT_EQ(out_.str(), kErase);  // cleared when the load is over
}

TEST(ProgressTextTest, AnalysisStageAndCount) {
  EXPECT_EQ(ProgressText(job::Progress{.stage = "analysing pipelines", .done = 37, .total = 128}),
            "analysing pipelines: 37 of 128");
}

// The reading, then the analysis, on one line: the analysis's first item redraws it at once
// when the line was cleared in between, and each stage's last item is always drawn.
TEST_F(ProgressLineTest, TheAnalysisGoesOnTheSameLineAfterTheLoad) {
  ProgressLine line(out_, clock_);
  now_ += milliseconds(2500);
  line.Update(Done(4, 400'000'000));
  line.Clear();
  out_.str("");
  now_ += milliseconds(10);
  line.Update(job::Progress{.stage = "indexing ranks", .done = 1, .total = 8});
  EXPECT_EQ(out_.str(), std::string(kErase) + "indexing ranks: 1 of 8");
  out_.str("");
  now_ += milliseconds(10);
  line.Update(job::Progress{.stage = "indexing ranks", .done = 2, .total = 8});
  EXPECT_EQ(out_.str(), "");  // too soon
  line.Update(job::Progress{.stage = "indexing ranks", .done = 8, .total = 8});
  EXPECT_EQ(out_.str(), std::string(kErase) + "indexing ranks: 8 of 8");
  out_.str("");
  now_ += milliseconds(200);
  line.Update(job::Progress{.stage = "analysing pipelines", .done = 1, .total = 2});
  EXPECT_EQ(out_.str(), std::string(kErase) + "analysing pipelines: 1 of 2");
}

TEST_F(ProgressLineTest, ALineNeverDrawnIsNeverCleared) {
  { ProgressLine line(out_, clock_); }
  EXPECT_EQ(out_.str(), "");
}

TEST(ProgressLineForTest, OnlyOnThisProcessesTerminalAndNotWithQuiet) {
  std::ostringstream not_stderr;
  EXPECT_EQ(ProgressLineFor(not_stderr, false), nullptr);

  // stderr on a pseudo-terminal for the length of the test, as a user's shell gives it.
  const int terminal = posix_openpt(O_RDWR | O_NOCTTY);
  ASSERT_GE(terminal, 0);
  ASSERT_EQ(grantpt(terminal), 0);
  ASSERT_EQ(unlockpt(terminal), 0);
  const int secondary = open(ptsname(terminal), O_RDWR | O_NOCTTY);
  ASSERT_GE(secondary, 0);
  std::cerr.flush();
  const int saved = dup(STDERR_FILENO);
  ASSERT_GE(saved, 0);
  ASSERT_EQ(dup2(secondary, STDERR_FILENO), STDERR_FILENO);
  const bool on_terminal = IsTerminalStderr(std::cerr);
  const bool line = ProgressLineFor(std::cerr, false) != nullptr;
  const bool quiet_line = ProgressLineFor(std::cerr, true) != nullptr;
  const bool other_stream = IsTerminalStderr(not_stderr);
  dup2(saved, STDERR_FILENO);
  close(saved);
  close(secondary);
  close(terminal);
  EXPECT_TRUE(on_terminal);
  EXPECT_TRUE(line);
  EXPECT_FALSE(quiet_line);
  EXPECT_FALSE(other_stream);
}

}  // namespace
}  // namespace bubblescope
