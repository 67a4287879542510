// The loader and merged traces (readers/merged_trace.h): one file gives every rank it names, with
// the rank ids it gives them; those ids clash with other files' like any other, and --rank
// cannot renumber them.
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

// Ranks 0 and 1, each one CPU op; rank 1's clock runs 2 µs ahead of the file's.
const char kMerged[] =
    R"({"bubblescope_merged":{"version":1,"ranks":[)"
    R"({"rank":0,"clock_offset_ns":0,"processes":[{"pid":1,"original_pid":100}]},)"
    R"({"rank":1,"clock_offset_ns":2000,"processes":[{"pid":2,"original_pid":100}]}]},)"
    R"("traceEvents":[)"
    R"({"pid":1,"tid":5,"ph":"X","cat":"cpu_op","name":"aten::mm","ts":10,"dur":1},)"
    R"({"pid":2,"tid":5,"ph":"X","cat":"cpu_op","name":"aten::mm","ts":10,"dur":1}]})";

const char kRankOne[] =
    R"({"distributedInfo":{"rank":1,"world_size":2},"traceEvents":[)"
    R"({"pid":100,"tid":5,"ph":"X","cat":"cpu_op","name":"aten::mm","ts":10,"dur":1}]})";

TEST(MergedLoadTest, OneFileGivesEveryRankItNames) {
  TempDir dir;
  const std::string merged = dir.Write("merged.json.gz", Gzip(kMerged));
  absl::StatusOr<Trace> trace = LoadTrace({merged}, LoadOptions{});
  ASSERT_TRUE(trace.ok()) << trace.status();
  ASSERT_EQ(trace->ranks.size(), 2u);
  for (int32_t r = 0; r < 2; ++r) {
    const Rank& rank = trace->ranks[static_cast<size_t>(r)];
    EXPECT_EQ(rank.rank, r);
    EXPECT_EQ(rank.source_path, merged);
    EXPECT_EQ(rank.pid, 100);
    ASSERT_EQ(rank.timelines.size(), 1u);
    // 10 µs on the file's clock; rank 1's own clock is 2 µs ahead.
    EXPECT_EQ(rank.timelines[0].intervals[0].start, r == 0 ? 10000 : 12000);
  }
}

TEST(MergedLoadTest, ItsRankIdsClashWithOtherFiles) {
  TempDir dir;
  const std::string merged = dir.Write("merged.json", kMerged);
  const std::string other = dir.Write("other.json", kRankOne);
  absl::StatusOr<Trace> trace = LoadTrace({merged, other}, LoadOptions{});
  ASSERT_FALSE(trace.ok());
  EXPECT_EQ(trace.status().message(),
            absl::StrCat("rank 1 claimed by both ", merged, " and ", other));
}

// analyze --perfetto -o saved into the trace folder: the next analyze of the folder reads the
// ranks' own files and passes the merged one over, by its content (whatever its name).
TEST(MergedLoadTest, InTheFolderOfItsRanksItIsPassedOver) {
  TempDir dir;
  const std::string merged = dir.Write("pipeline.json.gz", Gzip(kMerged));
  const std::string rank1 = dir.Write("rank1.json", kRankOne);
  const std::string rank0 = dir.Write(
      "rank0.json", std::string(kRankOne).replace(std::string(kRankOne).find("1,"), 1, "0"));
  absl::StatusOr<Trace> trace = LoadTrace({dir.path()}, LoadOptions{});
  ASSERT_TRUE(trace.ok()) << trace.status();
  ASSERT_EQ(trace->ranks.size(), 2u);
  EXPECT_EQ(trace->ranks[0].source_path, rank0);
  EXPECT_EQ(trace->ranks[1].source_path, rank1);
  ASSERT_EQ(trace->skipped_files.size(), 1u);
  EXPECT_EQ(trace->skipped_files[0].path, merged);
  EXPECT_EQ(trace->skipped_files[0].reason,
            "a merged trace that analyze --perfetto wrote (bubblescope_merged); its ranks are "
            "the folder's other files");
}

// Alone in its folder, it is what there is to read: its ranks.
TEST(MergedLoadTest, AloneInAFolderItIsReadAsItsRanks) {
  TempDir dir;
  dir.Write("pipeline.json", kMerged);
  absl::StatusOr<Trace> trace = LoadTrace({dir.path()}, LoadOptions{});
  ASSERT_TRUE(trace.ok()) << trace.status();
  EXPECT_EQ(trace->ranks.size(), 2u);
  EXPECT_TRUE(trace->skipped_files.empty());
}

TEST(MergedLoadTest, RankOverridesCannotRenumberIt) {
  TempDir dir;
  const std::string merged = dir.Write("merged.json", kMerged);
  LoadOptions options;
  options.rank_overrides.push_back({.path = merged, .rank = 4});
  absl::StatusOr<Trace> trace = LoadTrace({merged}, options);
  ASSERT_FALSE(trace.ok());
  EXPECT_EQ(trace.status().message(),
            absl::StrCat(merged,
                         ": a merged trace names its ranks itself; --rank cannot "
                         "renumber them"));
}

TEST(MergedLoadTest, ADamagedLayoutIsAOneLineErrorWithItsByte) {
  TempDir dir;
  std::string damaged = kMerged;
  damaged.replace(damaged.find("\"original_pid\":100}]}]"), 18, "\"original_pid\":{}");
  const std::string path = dir.Write("merged.json", damaged);
  absl::StatusOr<Trace> trace = LoadTrace({path}, LoadOptions{});
  ASSERT_FALSE(trace.ok());
  EXPECT_EQ(trace.status().message(),
            absl::StrCat(path, ": byte ", damaged.find("{}}]}]"),
                         ": bubblescope_merged: an original pid is not an integer, string or "
                         "null"));
}

}  // namespace
}  // namespace bubblescope
