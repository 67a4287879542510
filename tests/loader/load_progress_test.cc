// LoadOptions::progress: one call per file read, counting up to the totals the files give.
#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "loader/trace_loader.h"
#include "support/test_files.h"

namespace bubblescope {
namespace {

using ::bubblescope::testing::Gzip;
using ::bubblescope::testing::TempDir;

// A one-kernel trace of `rank`, padded with `filler` spaces so the files differ in size.
std::string RankText(int rank, size_t filler) {
  return absl::StrCat(R"({"distributedInfo":{"rank":)", rank, R"(,"world_size":4},)",
                      std::string(filler, ' '), R"("traceEvents":[)",
                      R"({"ph":"X","cat":"kernel","name":"gemm","pid":0,"tid":7,"ts":)", 100 + rank,
                      R"(,"dur":5,"args":{"device":0,"stream":7}}]})");
}

class LoadProgressTest : public ::testing::TestWithParam<int> {};

TEST_P(LoadProgressTest, EachFileIsToldOnceAndTheCountsAddUp) {
  TempDir dir;
  // Sizes on disk, worked out from the files themselves: one of them gzip (its compressed size
  // is what counts), and truth.json, which is read and passed over, counts like any file.
  std::vector<std::string> paths = {
      dir.Write("rank0.json", RankText(0, 10)), dir.Write("rank1.json", RankText(1, 1000)),
      dir.Write("rank2.json.gz", Gzip(RankText(2, 5000))),
      dir.Write("rank3.json", RankText(3, 300)), dir.Write("truth.json", "{\"a\":1}")};
  int64_t total = 0;
  for (const std::string& path : paths) {
    total += static_cast<int64_t>(std::filesystem::file_size(path));
  }
  std::vector<LoadProgress> told;
  LoadOptions options;
  options.jobs = GetParam();
  options.progress = [&told](const LoadProgress& progress) { told.push_back(progress); };
  absl::StatusOr<Trace> trace = LoadTrace({dir.path()}, options);
  ASSERT_TRUE(trace.ok()) << trace.status();
  ASSERT_EQ(trace->ranks.size(), 4u);

  ASSERT_EQ(told.size(), 5u);
  int64_t previous_bytes = 0;
  for (size_t i = 0; i < told.size(); ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(told[i].files_done, i + 1);
    EXPECT_EQ(told[i].files_total, 5u);
    EXPECT_EQ(told[i].bytes_total, total);
    EXPECT_GT(told[i].bytes_done, previous_bytes);  // every file has bytes
    previous_bytes = told[i].bytes_done;
  }
  EXPECT_EQ(told.back().bytes_done, total);
}

INSTANTIATE_TEST_SUITE_P(Jobs, LoadProgressTest, ::testing::Values(1, 3));

TEST(LoadProgressTest, FilesAfterAFailureAreNotTold) {
  TempDir dir;
  const std::string bad = dir.Write("rank0.json", "hello");
  const std::string good = dir.Write("rank1.json", RankText(1, 0));
  std::vector<size_t> told;
  LoadOptions options;
  options.jobs = 1;
  options.progress = [&told](const LoadProgress& progress) { told.push_back(progress.files_done); };
  // The first file cannot be read as a trace at all; one worker then takes no other file.
  absl::StatusOr<Trace> trace = LoadTrace({bad, good, dir.Write("bad.json", "[")}, options);
  ASSERT_FALSE(trace.ok());
  EXPECT_EQ(told, std::vector<size_t>({1}));
}

}  // namespace
}  // namespace bubblescope
