// The metrics file worked by hand for two pipelines of two stages, the families left out without
// samples, the order whatever the input's, and the file replaced whole on every iteration.
#include "report/openmetrics.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include "common/output_file.h"
#include "gtest/gtest.h"
#include "report/iteration_report_fixtures.h"
#include "support/test_files.h"

namespace bubblescope {
namespace {

using testing::Stage;
using watch::IterationReport;
using watch::StageIteration;

// Pipeline 0 with an inferred schedule; pipeline 1 without, its stages listed out of order.
std::vector<IterationReport> TwoPipelines() {
  IterationReport zero;
  zero.pipeline = 0;
  zero.step = 12;
  zero.analysed_unix_ns = 1765138000123456789;
  zero.window_ns = 48'310'000;
  zero.bubble_fraction = 0.314;
  zero.ideal_bubble_fraction = 0.252;
  zero.excess_bubble_fraction = 0.062;
  zero.stages = {Stage(0, 0, 30'000'500, 18'309'500), Stage(1, 1, 31'000'000, 17'310'000)};
  IterationReport one;
  one.pipeline = 1;
  one.step = 11;
  one.analysed_unix_ns = 1765138000000000000;
  one.window_ns = 60'000'000;
  one.bubble_fraction = 0.5;
  one.stages = {Stage(1, 3, 30'000'000, 30'000'000), Stage(0, 2, 30'000'000, 30'000'000)};
  return {one, zero};  // the file orders them
}

constexpr char kTwoPipelines[] =
    "# HELP bubblescope_pipeline_bubble_ratio Bubble of the newest analysed iteration: idle time "
    "over ranks times window\n"
    "# TYPE bubblescope_pipeline_bubble_ratio gauge\n"
    "# UNIT bubblescope_pipeline_bubble_ratio ratio\n"
    "bubblescope_pipeline_bubble_ratio{pipeline=\"0\"} 0.314\n"
    "bubblescope_pipeline_bubble_ratio{pipeline=\"1\"} 0.5\n"
    "# HELP bubblescope_pipeline_excess_bubble_ratio Bubble of the newest iteration above what "
    "the inferred schedule leaves by itself\n"
    "# TYPE bubblescope_pipeline_excess_bubble_ratio gauge\n"
    "# UNIT bubblescope_pipeline_excess_bubble_ratio ratio\n"
    "bubblescope_pipeline_excess_bubble_ratio{pipeline=\"0\"} 0.062\n"
    "# HELP bubblescope_pipeline_ideal_bubble_ratio Bubble the inferred schedule leaves by "
    "itself\n"
    "# TYPE bubblescope_pipeline_ideal_bubble_ratio gauge\n"
    "# UNIT bubblescope_pipeline_ideal_bubble_ratio ratio\n"
    "bubblescope_pipeline_ideal_bubble_ratio{pipeline=\"0\"} 0.252\n"
    "# HELP bubblescope_pipeline_iteration_seconds Latency of the newest iteration: its first to "
    "its last device activity\n"
    "# TYPE bubblescope_pipeline_iteration_seconds gauge\n"
    "# UNIT bubblescope_pipeline_iteration_seconds seconds\n"
    "bubblescope_pipeline_iteration_seconds{pipeline=\"0\"} 0.04831\n"
    "bubblescope_pipeline_iteration_seconds{pipeline=\"1\"} 0.06\n"
    "# HELP bubblescope_pipeline_step Step number of the newest analysed iteration\n"
    "# TYPE bubblescope_pipeline_step gauge\n"
    "bubblescope_pipeline_step{pipeline=\"0\"} 12\n"
    "bubblescope_pipeline_step{pipeline=\"1\"} 11\n"
    "# HELP bubblescope_pipeline_analysed_timestamp_seconds Unix time at which watch analysed "
    "the newest iteration\n"
    "# TYPE bubblescope_pipeline_analysed_timestamp_seconds gauge\n"
    "# UNIT bubblescope_pipeline_analysed_timestamp_seconds seconds\n"
    "bubblescope_pipeline_analysed_timestamp_seconds{pipeline=\"0\"} 1765138000.1234567\n"
    "bubblescope_pipeline_analysed_timestamp_seconds{pipeline=\"1\"} 1765138000\n"
    "# HELP bubblescope_stage_compute_seconds Compute time of the stage in the newest iteration "
    "of its pipeline\n"
    "# TYPE bubblescope_stage_compute_seconds gauge\n"
    "# UNIT bubblescope_stage_compute_seconds seconds\n"
    "bubblescope_stage_compute_seconds{pipeline=\"0\",stage=\"0\",rank=\"0\"} 0.0300005\n"
    "bubblescope_stage_compute_seconds{pipeline=\"0\",stage=\"1\",rank=\"1\"} 0.031\n"
    "bubblescope_stage_compute_seconds{pipeline=\"1\",stage=\"0\",rank=\"2\"} 0.03\n"
    "bubblescope_stage_compute_seconds{pipeline=\"1\",stage=\"1\",rank=\"3\"} 0.03\n"
    "# HELP bubblescope_stage_idle_seconds Idle time of the stage in the newest iteration of its "
    "pipeline\n"
    "# TYPE bubblescope_stage_idle_seconds gauge\n"
    "# UNIT bubblescope_stage_idle_seconds seconds\n"
    "bubblescope_stage_idle_seconds{pipeline=\"0\",stage=\"0\",rank=\"0\"} 0.0183095\n"
    "bubblescope_stage_idle_seconds{pipeline=\"0\",stage=\"1\",rank=\"1\"} 0.01731\n"
    "bubblescope_stage_idle_seconds{pipeline=\"1\",stage=\"0\",rank=\"2\"} 0.03\n"
    "bubblescope_stage_idle_seconds{pipeline=\"1\",stage=\"1\",rank=\"3\"} 0.03\n"
    "# EOF\n";

TEST(OpenMetricsTest, TwoPipelinesOfTwoStages) {
  EXPECT_EQ(OpenMetricsText(TwoPipelines()), kTwoPipelines);
}

TEST(OpenMetricsTest, NoPipelineYetIsAnEmptyExposition) {
  EXPECT_EQ(OpenMetricsText({}), "# EOF\n");
}

TEST(OpenMetricsTest, APipelineGivenTwiceKeepsItsNewestIteration) {
  std::vector<IterationReport> reports = TwoPipelines();
  IterationReport older = reports[1];  // pipeline 0, step 12
  older.step = 9;
  older.bubble_fraction = 0.9;
  reports.push_back(older);
  reports.insert(reports.begin(), older);
  EXPECT_EQ(OpenMetricsText(reports), kTwoPipelines);
}

TEST(OpenMetricsTest, ValuesWithoutADecimalUseTheSpellingsBothFormatsRead) {
  IterationReport report;
  report.bubble_fraction = std::nan("");
  report.excess_bubble_fraction = -std::numeric_limits<double>::infinity();
  const std::string text = OpenMetricsText({report});
  EXPECT_NE(text.find("bubblescope_pipeline_bubble_ratio{pipeline=\"0\"} NaN\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("bubblescope_pipeline_excess_bubble_ratio{pipeline=\"0\"} -Inf\n"),
            std::string::npos)
      << text;
}

ino_t InodeOf(const std::string& path) {
  struct stat info {};
  EXPECT_EQ(stat(path.c_str(), &info), 0) << path;
  return info.st_ino;
}

std::string ReadAll(int fd) {
  std::string text;
  char buffer[4096];
  ssize_t got = 0;
  while ((got = pread(fd, buffer, sizeof(buffer), static_cast<off_t>(text.size()))) > 0)
    text.append(buffer, static_cast<size_t>(got));
  return text;
}

// What watch does on each iteration: the file is written anew with WriteOutputFile, which puts a
// new file in place by rename. A scraper that opened the old file reads it whole to the end, and
// one that opens the path afterwards reads the whole new one; the folder holds nothing else.
TEST(OpenMetricsTest, EachIterationReplacesTheFileWhole) {
  const testing::TempDir dir;
  const std::string path = dir.path() + "/bubblescope.prom";
  std::vector<IterationReport> reports = TwoPipelines();
  const std::string first = OpenMetricsText(reports);
  ASSERT_TRUE(WriteOutputFile(path, first).ok());
  const ino_t first_inode = InodeOf(path);
  const int reader = open(path.c_str(), O_RDONLY);
  ASSERT_GE(reader, 0);

  reports[1].step = 13;
  reports[1].stages.pop_back();  // a shorter file: an overwrite in place would leave a tail
  const std::string second = OpenMetricsText(reports);
  ASSERT_NE(first, second);
  ASSERT_TRUE(WriteOutputFile(path, second).ok());

  EXPECT_NE(InodeOf(path), first_inode);
  EXPECT_EQ(ReadAll(reader), first);
  close(reader);
  const int fresh = open(path.c_str(), O_RDONLY);
  ASSERT_GE(fresh, 0);
  EXPECT_EQ(ReadAll(fresh), second);
  close(fresh);
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(dir.path()))
    names.push_back(entry.path().filename().string());
  EXPECT_EQ(names, std::vector<std::string>{"bubblescope.prom"});
}

}  // namespace
}  // namespace bubblescope
