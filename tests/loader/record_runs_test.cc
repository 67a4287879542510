#include "loader/record_runs.h"

#include <string>
#include <string_view>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace bubblescope {
namespace {

using ::testing::ElementsAre;

std::string Message(const absl::Status& status) { return std::string(status.message()); }

std::vector<bool> Chosen(const std::vector<std::string_view>& ids, RecordRunChoice choice) {
  absl::StatusOr<std::vector<bool>> keep = ChooseRecordRun(ids, choice);
  EXPECT_TRUE(keep.ok()) << keep.status();
  return keep.ok() ? *keep : std::vector<bool>();
}

TEST(RecordRunsTest, NewestFirstAndFilesWithoutAnIdLast) {
  const std::vector<RecordRun> runs =
      RecordRunsOf({"20261124-090000-0001", "", "20261125-132801-a1b2", "20261124-090000-0001"});
  ASSERT_EQ(runs.size(), 3u);
  EXPECT_EQ(runs[0].id, "20261125-132801-a1b2");
  EXPECT_EQ(runs[0].files, 1u);
  EXPECT_EQ(runs[1].id, "20261124-090000-0001");
  EXPECT_EQ(runs[1].files, 2u);
  EXPECT_EQ(runs[2].id, "");
  EXPECT_EQ(runs[2].files, 1u);
}

TEST(RecordRunsTest, OneRunOrNoIdsNeedNoChoice) {
  EXPECT_THAT(Chosen({"a1", "a1"}, {}), ElementsAre(true, true));
  EXPECT_THAT(Chosen({"", ""}, {}), ElementsAre(true, true));
  EXPECT_THAT(Chosen({}, {}), ElementsAre());
}

TEST(RecordRunsTest, SeveralRunsAreAnErrorThatListsThem) {
  absl::StatusOr<std::vector<bool>> keep =
      ChooseRecordRun({"r2", "r1", "r2", ""}, RecordRunChoice{});
  ASSERT_FALSE(keep.ok());
  EXPECT_EQ(Message(keep.status()),
            "the traces come from 3 different record runs: r2 (2 files), r1 (1 file), 1 file "
            "without a run id; analyze one with --run ID (a unique prefix will do), or all "
            "together with --mix-runs");
}

TEST(RecordRunsTest, LongListsOfRunsAreCut) {
  std::vector<std::string> ids;
  for (int i = 0; i < 9; ++i) ids.push_back("run" + std::to_string(i));
  std::vector<std::string_view> views(ids.begin(), ids.end());
  const std::string message = Message(ChooseRecordRun(views, {}).status());
  EXPECT_THAT(message, ::testing::HasSubstr(
                           "9 different record runs: run8 (1 file), run7 (1 file), run6 (1 file), "
                           "run5 (1 file), run4 (1 file) and 4 more;"));
}

TEST(RecordRunsTest, MixKeepsEverything) {
  EXPECT_THAT(Chosen({"r2", "r1", ""}, {"", true}), ElementsAre(true, true, true));
}

TEST(RecordRunsTest, ExactIdOrUniquePrefix) {
  const std::vector<std::string_view> ids = {"20261125-1328-aa", "20261125-1330-bb",
                                             "20261125-1328-aa", ""};
  EXPECT_THAT(Chosen(ids, {"20261125-1330"}), ElementsAre(false, true, false, false));
  EXPECT_THAT(Chosen(ids, {"20261125-1328-aa"}), ElementsAre(true, false, true, false));
  // An exact id wins over a longer id it is a prefix of.
  EXPECT_THAT(Chosen({"abc", "abcd"}, {"abc"}), ElementsAre(true, false));
}

TEST(RecordRunsTest, ChoicesThatMatchNoneOrSeveralAreErrors) {
  const std::vector<std::string_view> ids = {"20261125-1328-aa", "20261125-1330-bb", ""};
  EXPECT_EQ(Message(ChooseRecordRun(ids, {"2026112"}).status()),
            "--run 2026112: 2 record runs begin so: 20261125-1330-bb (1 file), 20261125-1328-aa "
            "(1 file)");
  EXPECT_EQ(Message(ChooseRecordRun(ids, {"1999"}).status()),
            "--run 1999: no trace of that record run; the traces hold 20261125-1330-bb (1 file), "
            "20261125-1328-aa (1 file), 1 file without a run id");
  EXPECT_EQ(Message(ChooseRecordRun(ids, {"x", true}).status()),
            "--run and --mix-runs exclude each other");
}

}  // namespace
}  // namespace bubblescope
