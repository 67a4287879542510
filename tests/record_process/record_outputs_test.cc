// The collector's file names as record reads them back, which files a run wrote and which ranks
// wrote none.
#include "record_process/record_outputs.h"

#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "support/test_files.h"

namespace bubblescope {
namespace {

namespace fs = std::filesystem;
using ::bubblescope::testing::TempDir;
using ::testing::ElementsAre;

constexpr char kRunId[] = "20261125-132801-a1b2";

TEST(CollectorFileNameTest, RankAndWorldFromTheName) {
  auto id = ParseCollectorFileName("bubblescope-rank3-world8-node-a-1234.json");
  ASSERT_TRUE(id.has_value());
  EXPECT_EQ(id->rank, 3);
  EXPECT_EQ(id->world_size, 8);
  id = ParseCollectorFileName("bubblescope-rank12-gpu7-99.json.gz");
  ASSERT_TRUE(id.has_value());
  EXPECT_EQ(id->rank, 12);
  EXPECT_EQ(id->world_size, -1);
  id = ParseCollectorFileName("bubblescope-norank-h-5.json");
  ASSERT_TRUE(id.has_value());
  EXPECT_EQ(id->rank, -1);
  EXPECT_EQ(id->world_size, -1);
  EXPECT_EQ(id->run_id, "");
}

TEST(CollectorFileNameTest, RunIdBeforeTheRank) {
  auto id = ParseCollectorFileName("bubblescope-20261125-132801-a1b2-rank3-world8-rankhost-1.json");
  ASSERT_TRUE(id.has_value());
  EXPECT_EQ(id->run_id, "20261125-132801-a1b2");
  EXPECT_EQ(id->rank, 3);
  EXPECT_EQ(id->world_size, 8);
  id = ParseCollectorFileName("bubblescope-x-no-norank-h-5.json");
  ASSERT_TRUE(id.has_value());
  EXPECT_EQ(id->run_id, "x-no");
  EXPECT_EQ(id->rank, -1);
  id = ParseCollectorFileName("bubblescope-no-rank2-h-5.json.gz");
  ASSERT_TRUE(id.has_value());
  EXPECT_EQ(id->run_id, "no");
  EXPECT_EQ(id->rank, 2);
}

TEST(CollectorFileNameTest, OtherNamesAreNotCollectorFiles) {
  for (const char* name :
       {"rank3.json", "bubblescope-rank3-world8-host.json", "bubblescope-rank-3-h-1.json",
        "bubblescope-rank3-world0-h-1.json", "bubblescope-rank3-h-12x.json",
        "bubblescope-rank3-h-1.txt", "bubblescope-rank3--1.json", "bubblescope-.json",
        "bubblescope-rankX-h-1.json", "bubblescope-rank3-world99999999999-h-1.json",
        "bubblescope--rank3-h-1.json", "bubblescope-a b-rank3-h-1.json",
        "bubblescope-run_rank3-h-1.json", "bubblescope-_x-rank3-h-1.json"}) {
    EXPECT_FALSE(ParseCollectorFileName(name).has_value()) << name;
  }
}

TEST(WrittenBetweenTest, ThisRunsFilesAndNewOrChangedFilesWithoutARunId) {
  const std::string mine = absl::StrCat("bubblescope-", kRunId, "-rank0-world2-h-5.json");
  TraceFileStamps before = {{"bubblescope-rank0-world2-h-1.json", FileStamp{10, 100, 7}},
                            {"bubblescope-rank1-world2-h-2.json", FileStamp{10, 100, 8}},
                            {"bubblescope-rank0-world2-h-3.json", FileStamp{10, 100, 9}},
                            {"bubblescope-older-rank1-world2-h-6.json", FileStamp{4, 90, 12}}};
  TraceFileStamps after = before;
  after["bubblescope-rank1-world2-h-2.json"].modified_ns = 101;  // rewritten, same size
  after["bubblescope-rank0-world2-h-3.json"].inode = 10;         // replaced by another file
  after["bubblescope-norank-h-4.json"] = FileStamp{3, 50, 11};   // new
  after[mine] = FileStamp{6, 120, 13};                           // new, named with this run
  after["bubblescope-other-rank0-world2-h-7.json"] = FileStamp{5, 130, 14};  // another run's
  std::vector<RecordedFile> written = WrittenBetween(before, after, kRunId);
  ASSERT_EQ(written.size(), 4u);
  EXPECT_EQ(written[0].name, mine);
  EXPECT_EQ(written[0].size, 6u);
  EXPECT_EQ(written[0].id.run_id, kRunId);
  EXPECT_EQ(written[1].name, "bubblescope-norank-h-4.json");
  EXPECT_EQ(written[1].size, 3u);
  EXPECT_EQ(written[1].id.rank, -1);
  EXPECT_EQ(written[2].name, "bubblescope-rank0-world2-h-3.json");
  EXPECT_EQ(written[3].name, "bubblescope-rank1-world2-h-2.json");
  EXPECT_EQ(written[3].id.rank, 1);
  EXPECT_EQ(written[3].id.world_size, 2);
}

TEST(MissingRanksTest, FromTheLargestWorldSize) {
  auto file = [](int32_t rank, int32_t world) {
    return RecordedFile{"f", 1, CollectorFileName{rank, world, ""}};
  };
  MissingRanks missing = FindMissingRanks({file(0, 4), file(2, 4), file(-1, -1)});
  EXPECT_EQ(missing.world_size, 4);
  EXPECT_THAT(missing.ranks, ElementsAre(1, 3));
  missing = FindMissingRanks({file(0, 2), file(1, 2), file(1, 2)});
  EXPECT_EQ(missing.world_size, 2);
  EXPECT_THAT(missing.ranks, ElementsAre());
  missing = FindMissingRanks({file(0, -1), file(5, -1)});  // world size unknown
  EXPECT_EQ(missing.world_size, 0);
  EXPECT_THAT(missing.ranks, ElementsAre());
  missing = FindMissingRanks({file(0, 2), file(3, 4)});
  EXPECT_EQ(missing.world_size, 4);
  EXPECT_THAT(missing.ranks, ElementsAre(1, 2));
  EXPECT_THAT(FindMissingRanks({}).ranks, ElementsAre());
}

TEST(HumanBytesTest, BinaryUnitsOneDecimal) {
  EXPECT_EQ(HumanBytes(0), "0 B");
  EXPECT_EQ(HumanBytes(1023), "1023 B");
  EXPECT_EQ(HumanBytes(1024), "1.0 KiB");
  EXPECT_EQ(HumanBytes(1536), "1.5 KiB");
  EXPECT_EQ(HumanBytes(5u << 20), "5.0 MiB");
  EXPECT_EQ(HumanBytes(uint64_t{3} << 30), "3.0 GiB");
}

TEST(StampCollectorFilesTest, OnlyCollectorFilesAndAMissingDirectory) {
  TempDir dir;
  dir.Write("bubblescope-rank0-world1-h-1.json", "12345");
  dir.Write("rank0.json", "x");
  dir.Write("notes.txt", "x");
  fs::create_directories(fs::path(dir.path()) / "bubblescope-rank1-world1-h-2.json");
  absl::StatusOr<TraceFileStamps> stamps = StampCollectorFiles(dir.path());
  ASSERT_TRUE(stamps.ok()) << stamps.status();
  ASSERT_EQ(stamps->size(), 1u);
  EXPECT_EQ(stamps->begin()->first, "bubblescope-rank0-world1-h-1.json");
  EXPECT_EQ(stamps->begin()->second.size, 5u);
  EXPECT_FALSE(StampCollectorFiles(dir.path() + "/missing").ok());
}

}  // namespace
}  // namespace bubblescope
