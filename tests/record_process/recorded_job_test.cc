// One record run without the CLI: the output directory prepared, a stand-in job (a shell script
// that checks the variables it was given and writes collector-named files) run, and what it
// wrote read back against the files another run left there.
#include "record_process/recorded_job.h"

#include <filesystem>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "support/test_files.h"

namespace bubblescope {
namespace {

namespace fs = std::filesystem;
using ::bubblescope::testing::TempDir;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;

constexpr char kRunId[] = "20261126-090000-beef";

RecordSettings Settings(const TempDir& dir) {
  RecordSettings settings;
  settings.collector_path = "/opt/lib/libbubblescope_collector.so";
  settings.output_dir = dir.path() + "/traces/run1";
  settings.kinds = "kernel,nccl";
  settings.flush_ms = 250;
  settings.run_id = kRunId;
  return settings;
}

TEST(CollectorEnvironmentTest, TheContractsVariablesThenTheWindow) {
  TempDir dir;
  RecordSettings settings = Settings(dir);
  settings.window.kind = WindowKind::kWholeJob;
  EXPECT_THAT(CollectorEnvironment(settings),
              ElementsAre(Pair("CUDA_INJECTION64_PATH", settings.collector_path),
                          Pair("NCCL_PROFILER_PLUGIN", settings.collector_path),
                          Pair("BUBBLESCOPE_OUTPUT_DIR", settings.output_dir),
                          Pair("BUBBLESCOPE_KINDS", "kernel,nccl"),
                          Pair("BUBBLESCOPE_FLUSH_MS", "250"), Pair("BUBBLESCOPE_RUN_ID", kRunId)));
  settings.window.kind = WindowKind::kAfterDelay;  // with the default caps
  settings.window.delay_seconds = 30;
  const auto variables = CollectorEnvironment(settings);
  ASSERT_EQ(variables.size(), 8u);
  EXPECT_THAT(variables[6], Pair("BUBBLESCOPE_START", "after:30"));
  EXPECT_THAT(variables[7], Pair("BUBBLESCOPE_LIMIT", "256:0"));
  EXPECT_EQ(DigestDirectory(settings), settings.output_dir + "/digests-" + kRunId);
}

// `record --live`: BUBBLESCOPE_FLUSH_ON_STEP=1 after the flush period, and nothing without it
// (the test above).
TEST(CollectorEnvironmentTest, LiveAddsFlushOnStep) {
  TempDir dir;
  RecordSettings settings = Settings(dir);
  settings.window.kind = WindowKind::kWholeJob;
  settings.flush_on_step = true;
  EXPECT_THAT(
      CollectorEnvironment(settings),
      ElementsAre(Pair("CUDA_INJECTION64_PATH", settings.collector_path),
                  Pair("NCCL_PROFILER_PLUGIN", settings.collector_path),
                  Pair("BUBBLESCOPE_OUTPUT_DIR", settings.output_dir),
                  Pair("BUBBLESCOPE_KINDS", "kernel,nccl"), Pair("BUBBLESCOPE_FLUSH_MS", "250"),
                  Pair("BUBBLESCOPE_RUN_ID", kRunId), Pair("BUBBLESCOPE_FLUSH_ON_STEP", "1")));
}

TEST(RecordedJobTest, TheJobsOwnFilesStatusAndMissingRanks) {
  TempDir dir;
  RecordSettings settings = Settings(dir);
  // Another run's file is there before the job starts.
  dir.Write("traces/run1/bubblescope-older-rank1-world3-h-1.json", "[]");
  absl::StatusOr<TraceFileStamps> before = PrepareOutputDirectory(settings);
  ASSERT_TRUE(before.ok()) << before.status();
  ASSERT_EQ(before->size(), 1u);
  // The job writes ranks 0 and 2 of 3 (8 and 3 bytes) only if it was given the collector's
  // variables, and exits 5.
  settings.command = {
      "sh", "-c",
      "[ \"$CUDA_INJECTION64_PATH\" = /opt/lib/libbubblescope_collector.so ] || exit 9; "
      "[ \"$BUBBLESCOPE_KINDS\" = kernel,nccl ] || exit 9; "
      "cd \"$BUBBLESCOPE_OUTPUT_DIR\" || exit 9; "
      "printf 12345678 > bubblescope-$BUBBLESCOPE_RUN_ID-rank0-world3-h-10.json; "
      "printf abc > bubblescope-$BUBBLESCOPE_RUN_ID-rank2-world3-h-12.json; exit 5"};
  std::vector<std::string> notices;
  absl::StatusOr<RecordedJob> job = RunRecordedJob(
      settings, *before, [&notices](const std::string& line) { notices.push_back(line); });
  ASSERT_TRUE(job.ok()) << job.status();
  EXPECT_EQ(job->exit.exit_status, 5);
  EXPECT_FALSE(job->exit.killed_here);
  EXPECT_TRUE(job->listing.ok());
  ASSERT_EQ(job->written.size(), 2u);
  EXPECT_EQ(job->written[0].name, std::string("bubblescope-") + kRunId + "-rank0-world3-h-10.json");
  EXPECT_EQ(job->written[0].size, 8u);
  EXPECT_EQ(job->written[1].id.rank, 2);
  EXPECT_EQ(job->written[1].size, 3u);
  EXPECT_EQ(job->missing.world_size, 3);
  EXPECT_THAT(job->missing.ranks, ElementsAre(1));
  EXPECT_EQ(job->other_files, 1u);
  EXPECT_TRUE(job->all_named);
  EXPECT_TRUE(notices.empty());
}

TEST(RecordedJobTest, AJobThatCannotStartAndADirectoryThatCannotBeMade) {
  TempDir dir;
  RecordSettings settings = Settings(dir);
  settings.command = {"bubblescope-no-such-command"};
  absl::StatusOr<TraceFileStamps> before = PrepareOutputDirectory(settings);
  ASSERT_TRUE(before.ok()) << before.status();
  absl::StatusOr<RecordedJob> job = RunRecordedJob(settings, *before, nullptr);
  EXPECT_EQ(job.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(ExitStatusForStartError(job.status()), 127);
  // A file where a parent directory would have to be.
  settings.output_dir = dir.Write("plain-file", "x") + "/traces";
  before = PrepareOutputDirectory(settings);
  ASSERT_FALSE(before.ok());
  EXPECT_THAT(before.status().message(), HasSubstr("cannot create " + settings.output_dir));
  EXPECT_FALSE(fs::exists(settings.output_dir));
}

}  // namespace
}  // namespace bubblescope
