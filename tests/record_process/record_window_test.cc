// What record asks the collector to record, and the line it says so in.
#include "record_process/record_window.h"

#include "gtest/gtest.h"

namespace bubblescope {
namespace {

TEST(RecordWindowTest, TheDefaultIsBoundedAndSaysHowToChooseAnother) {
  const RecordWindow window;
  EXPECT_EQ(CollectorStartValue(window), "steps:+2:+6");
  EXPECT_EQ(CollectorLimitValue(window), "256:0");  // no time cap: init can take minutes
  EXPECT_EQ(DescribeRecordWindow(window),
            "recording a bounded window (the default): training steps +2 to +6 counted from "
            "each process's first ProfilerStep#N NVTX range, or from the start in a job without "
            "such ranges; at most 256 MiB of trace per process; --steps, "
            "--start-after, --profiler-api or --whole-job choose another window");
}

// A window of `kind` with no caps.
RecordWindow Uncapped(WindowKind kind) {
  RecordWindow window;
  window.kind = kind;
  window.max_mib = 0;
  window.max_seconds = 0;
  return window;
}

TEST(RecordWindowTest, EachChosenWindow) {
  RecordWindow steps = Uncapped(WindowKind::kSteps);
  steps.first_step = 10;
  steps.last_step = 12;
  EXPECT_EQ(CollectorStartValue(steps), "steps:10:12");
  EXPECT_EQ(CollectorLimitValue(steps), "");
  EXPECT_EQ(DescribeRecordWindow(steps),
            "recording training steps 10 to 12 (NVTX ranges ProfilerStep#10 to #12)");
  steps.max_mib = 1024;
  EXPECT_EQ(CollectorLimitValue(steps), "1024:0");
  EXPECT_EQ(DescribeRecordWindow(steps),
            "recording training steps 10 to 12 (NVTX ranges ProfilerStep#10 to #12); at most "
            "1024 MiB of trace per process");

  RecordWindow after = Uncapped(WindowKind::kAfterDelay);
  after.delay_seconds = 90;
  after.max_seconds = 120;
  EXPECT_EQ(CollectorStartValue(after), "after:90");
  EXPECT_EQ(CollectorLimitValue(after), "0:120");
  EXPECT_EQ(DescribeRecordWindow(after),
            "recording from 90 s after each process initialises CUDA; at most 120 s of "
            "recording per process");

  const RecordWindow api = Uncapped(WindowKind::kProfilerApi);
  EXPECT_EQ(CollectorStartValue(api), "profiler-api");
  EXPECT_EQ(DescribeRecordWindow(api),
            "recording between the job's cudaProfilerStart and cudaProfilerStop calls");

  // The whole job: the collector's own default (no variable) and never a cap.
  RecordWindow whole;  // the default caps are set, and ignored
  whole.kind = WindowKind::kWholeJob;
  EXPECT_EQ(CollectorStartValue(whole), "");
  EXPECT_EQ(CollectorLimitValue(whole), "");
  EXPECT_EQ(DescribeRecordWindow(whole), "recording the whole job, without a cap (--whole-job)");
}

}  // namespace
}  // namespace bubblescope
