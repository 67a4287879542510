#include "loader/rank_assigner.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace bubblescope {
namespace {

constexpr int32_t kNothingReported = -1;

TEST(RankAssignerTest, ReportedRankBeatsFileName) {
  absl::StatusOr<RankAssigner> assigner =
      RankAssigner::Create({"d/rank5.json", "d/rank6.json"}, {});
  ASSERT_TRUE(assigner.ok()) << assigner.status();
  EXPECT_EQ(assigner->Assign(0, 1).value_or(-100), 1);
  EXPECT_EQ(assigner->Assign(1, kNothingReported).value_or(-100), 6);
}

TEST(RankAssignerTest, OverrideBeatsEverything) {
  absl::StatusOr<RankAssigner> assigner = RankAssigner::Create(
      {"d/rank5.json", "e/rank6.json"}, {{"d/rank5.json", 9}, {"rank6.json", 8}});
  ASSERT_TRUE(assigner.ok()) << assigner.status();
  EXPECT_EQ(assigner->Assign(0, 1).value_or(-100), 9);  // by path as given
  EXPECT_EQ(assigner->Assign(1, 2).value_or(-100), 8);  // by file name
}

TEST(RankAssignerTest, OverridePathIsComparedNormalised) {
  absl::StatusOr<RankAssigner> assigner =
      RankAssigner::Create({"d/x.json", "d/y.json"}, {{"./d//x.json", 4}, {"d/y.json", 3}});
  ASSERT_TRUE(assigner.ok()) << assigner.status();
  EXPECT_EQ(assigner->Assign(0, kNothingReported).value_or(-100), 4);
}

// A full-path match wins over a file-name match, so a/x.json=1 does not also catch b/x.json.
TEST(RankAssignerTest, FullPathOverrideDoesNotSpreadToSameName) {
  absl::StatusOr<RankAssigner> assigner =
      RankAssigner::Create({"a/x.json", "b/x.json"}, {{"a/x.json", 1}});
  ASSERT_TRUE(assigner.ok()) << assigner.status();
  EXPECT_EQ(assigner->Assign(0, kNothingReported).value_or(-100), 1);
  EXPECT_EQ(assigner->Assign(1, 0).value_or(-100), 0);
}

TEST(RankAssignerTest, SingleFileWithoutAnyHintIsRankZero) {
  absl::StatusOr<RankAssigner> assigner = RankAssigner::Create({"trace.json"}, {});
  ASSERT_TRUE(assigner.ok()) << assigner.status();
  EXPECT_EQ(assigner->Assign(0, kNothingReported).value_or(-100), 0);
}

TEST(RankAssignerTest, UnknownRankAmongSeveralIsAnError) {
  absl::StatusOr<RankAssigner> assigner = RankAssigner::Create({"rank0.json", "trace.json"}, {});
  ASSERT_TRUE(assigner.ok()) << assigner.status();
  ASSERT_TRUE(assigner->Assign(0, kNothingReported).ok());
  absl::Status status = assigner->Assign(1, kNothingReported).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(),
            "trace.json: cannot tell which rank this is (no distributedInfo.rank, no rank/worker "
            "number in its name); pass --rank trace.json=N");
}

TEST(RankAssignerTest, DuplicateRankNamesBothFiles) {
  absl::StatusOr<RankAssigner> assigner =
      RankAssigner::Create({"a/rank0.json", "b/worker1.json", "c/trace.json"}, {});
  ASSERT_TRUE(assigner.ok()) << assigner.status();
  ASSERT_TRUE(assigner->Assign(0, kNothingReported).ok());
  ASSERT_TRUE(assigner->Assign(1, kNothingReported).ok());
  absl::Status status = assigner->Assign(2, 1).status();
  EXPECT_EQ(status.message(), "rank 1 claimed by both b/worker1.json and c/trace.json");
}

TEST(RankAssignerTest, BadOverrides) {
  const std::vector<std::string> files = {"a/rank0.json", "b/rank1.json"};
  absl::Status negative = RankAssigner::Create(files, {{"a/rank0.json", -2}}).status();
  EXPECT_EQ(negative.message(), "rank override a/rank0.json=-2: rank must be >= 0");
  absl::Status unmatched = RankAssigner::Create(files, {{"c/rank0.json", 3}}).status();
  EXPECT_EQ(unmatched.message(), "rank override c/rank0.json=3 names no trace file");
  absl::Status conflicting =
      RankAssigner::Create(files, {{"a/rank0.json", 3}, {"rank0.json", 4}}).status();
  EXPECT_EQ(conflicting.message(), "a/rank0.json: conflicting rank overrides 3 and 4");
  EXPECT_TRUE(RankAssigner::Create(files, {{"a/rank0.json", 3}, {"rank0.json", 3}}).ok());
}

}  // namespace
}  // namespace bubblescope
