// Unit tests of the CLI's helpers: the atomic output file and --rank parsing.
#include <sys/stat.h>

#include <filesystem>
#include <string>

#include "cli/analyze_command.h"
#include "cli/atomic_file.h"
#include "support/subprocess.h"
#include "support/test_files.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace bubblescope {
namespace {

namespace fs = std::filesystem;
using ::bubblescope::testing::ReadFile;
using ::bubblescope::testing::TempDir;
using ::bubblescope::testing::WriteFile;
using ::testing::HasSubstr;
using ::testing::StartsWith;

mode_t PermissionBits(const fs::path& path) {
  struct stat info {};
  EXPECT_EQ(::stat(path.c_str(), &info), 0);
  return info.st_mode & 07777;
}

size_t EntryCount(const fs::path& dir) {
  size_t count = 0;
  for ([[maybe_unused]] const fs::directory_entry& entry : fs::directory_iterator(dir)) ++count;
  return count;
}

TEST(AtomicFileTest, CreatesANewFileWithUmaskPermissions) {
  TempDir dir;
  fs::path path = fs::path(dir.path()) / "new.txt";
  mode_t mask = ::umask(022);
  absl::Status status = WriteFileAtomically(path.string(), "hello\n");
  ::umask(mask);
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_EQ(ReadFile(path), "hello\n");
  EXPECT_EQ(PermissionBits(path), 0644u);
  EXPECT_EQ(EntryCount(dir.path()), 1u);  // no temporary file left behind
}

TEST(AtomicFileTest, ReplacesAnExistingFileAndKeepsItsPermissions) {
  TempDir dir;
  fs::path path = fs::path(dir.path()) / "existing.txt";
  WriteFile(path, "a much longer old content that must disappear entirely");
  ASSERT_EQ(::chmod(path.c_str(), 0600), 0);
  ASSERT_TRUE(WriteFileAtomically(path.string(), "new").ok());
  EXPECT_EQ(ReadFile(path), "new");
  EXPECT_EQ(PermissionBits(path), 0600u);
  EXPECT_EQ(EntryCount(dir.path()), 1u);
}

TEST(AtomicFileTest, WritesThroughASymlink) {
  TempDir dir;
  fs::path target = fs::path(dir.path()) / "target.txt";
  fs::path link = fs::path(dir.path()) / "link.txt";
  WriteFile(target, "old");
  fs::create_symlink(target, link);
  ASSERT_TRUE(WriteFileAtomically(link.string(), "new").ok());
  EXPECT_TRUE(fs::is_symlink(link));
  EXPECT_EQ(ReadFile(target), "new");
}

TEST(AtomicFileTest, MissingDirectoryIsAnErrorThatNamesThePath) {
  TempDir dir;
  fs::path path = fs::path(dir.path()) / "missing" / "out.txt";
  absl::Status status = WriteFileAtomically(path.string(), "x");
  ASSERT_FALSE(status.ok());
  EXPECT_THAT(std::string(status.message()), StartsWith("cannot write " + path.string() + ": "));
  EXPECT_EQ(EntryCount(dir.path()), 0u);
}

TEST(AtomicFileTest, ADirectoryInTheWayIsAnErrorAndLeavesNoTemporaryFile) {
  TempDir dir;
  fs::create_directory(fs::path(dir.path()) / "taken");
  absl::Status status = WriteFileAtomically((fs::path(dir.path()) / "taken").string(), "x");
  EXPECT_FALSE(status.ok());
  EXPECT_EQ(EntryCount(dir.path()), 1u);
}

TEST(ParseRankOverrideTest, SplitsAtTheLastEqualsSign) {
  absl::StatusOr<RankOverride> simple = ParseRankOverride("rank.json=7");
  ASSERT_TRUE(simple.ok());
  EXPECT_EQ(simple->path, "rank.json");
  EXPECT_EQ(simple->rank, 7);
  absl::StatusOr<RankOverride> with_equals = ParseRankOverride("run=2/a.json=0");
  ASSERT_TRUE(with_equals.ok());
  EXPECT_EQ(with_equals->path, "run=2/a.json");
  EXPECT_EQ(with_equals->rank, 0);
  absl::StatusOr<RankOverride> largest = ParseRankOverride("a=2147483647");
  ASSERT_TRUE(largest.ok());
  EXPECT_EQ(largest->rank, 2147483647);
}

TEST(ParseRankOverrideTest, RejectsMalformedArguments) {
  for (const char* bad : {"a", "=3", "a=", "a=-1", "a=1x", "a= 1", "a=2147483648", "a=0x1"}) {
    SCOPED_TRACE(bad);
    absl::StatusOr<RankOverride> parsed = ParseRankOverride(bad);
    ASSERT_FALSE(parsed.ok());
    EXPECT_THAT(std::string(parsed.status().message()), HasSubstr(bad));
  }
}

}  // namespace
}  // namespace bubblescope
