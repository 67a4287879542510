// Every file bubblescope writes goes through WriteOutputFile: regular files are replaced whole and
// atomically, everything else is written through and never replaced, and inputs are never
// overwritten.
#include "common/output_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "support/test_files.h"

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

mode_t FileType(const fs::path& path) {
  struct stat info {};
  EXPECT_EQ(::lstat(path.c_str(), &info), 0);
  return info.st_mode & S_IFMT;
}

size_t EntryCount(const fs::path& dir) {
  size_t count = 0;
  for ([[maybe_unused]] const fs::directory_entry& entry : fs::directory_iterator(dir)) ++count;
  return count;
}

TEST(OutputFileTest, CreatesANewFileWithUmaskPermissions) {
  TempDir dir;
  const fs::path path = fs::path(dir.path()) / "new.txt";
  const mode_t mask = ::umask(022);
  const absl::Status status = WriteOutputFile(path.string(), "hello\n");
  ::umask(mask);
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_EQ(ReadFile(path), "hello\n");
  EXPECT_EQ(PermissionBits(path), 0644u);
  EXPECT_EQ(EntryCount(dir.path()), 1u);  // no temporary file left behind
}

TEST(OutputFileTest, ReplacesAnExistingFileAndKeepsItsPermissions) {
  TempDir dir;
  const fs::path path = fs::path(dir.path()) / "existing.txt";
  WriteFile(path, "a much longer old content that must disappear entirely");
  ASSERT_EQ(::chmod(path.c_str(), 0600), 0);
  ASSERT_TRUE(WriteOutputFile(path.string(), "new").ok());
  EXPECT_EQ(ReadFile(path), "new");
  EXPECT_EQ(PermissionBits(path), 0600u);
  EXPECT_EQ(EntryCount(dir.path()), 1u);
}

TEST(OutputFileTest, ASymlinkStaysAndItsTargetIsReplaced) {
  TempDir dir;
  const fs::path target = fs::path(dir.path()) / "target.txt";
  const fs::path link = fs::path(dir.path()) / "link.txt";
  const fs::path link_to_link = fs::path(dir.path()) / "link2.txt";
  WriteFile(target, "old");
  fs::create_symlink(target, link);
  fs::create_symlink(link, link_to_link);
  ASSERT_TRUE(WriteOutputFile(link_to_link.string(), "new").ok());
  EXPECT_TRUE(fs::is_symlink(link));
  EXPECT_TRUE(fs::is_symlink(link_to_link));
  EXPECT_EQ(ReadFile(target), "new");
  EXPECT_EQ(EntryCount(dir.path()), 3u);
}

TEST(OutputFileTest, MissingDirectoryIsAnErrorThatNamesThePath) {
  TempDir dir;
  const fs::path path = fs::path(dir.path()) / "missing" / "out.txt";
  const absl::Status status = WriteOutputFile(path.string(), "x");
  ASSERT_FALSE(status.ok());
  EXPECT_THAT(std::string(status.message()), StartsWith("cannot write " + path.string() + ": "));
  EXPECT_EQ(EntryCount(dir.path()), 0u);
}

TEST(OutputFileTest, ADirectoryOrADanglingSymlinkIsRefusedAndNothingIsWritten) {
  TempDir dir;
  const fs::path taken = fs::path(dir.path()) / "taken";
  fs::create_directory(taken);
  absl::Status status = WriteOutputFile(taken.string(), "x");
  EXPECT_THAT(std::string(status.message()), HasSubstr("it is a directory"));
  const fs::path dangling = fs::path(dir.path()) / "dangling";
  fs::create_symlink(fs::path(dir.path()) / "nowhere", dangling);
  status = WriteOutputFile(dangling.string(), "x");
  EXPECT_THAT(std::string(status.message()), HasSubstr("symbolic link to nothing"));
  EXPECT_TRUE(fs::is_symlink(dangling));
  EXPECT_EQ(EntryCount(dir.path()), 2u);
}

// A FIFO is written into, never replaced by a regular file: whoever reads it gets the bytes. The
// read end is opened first without blocking, so the bytes wait in the pipe.
TEST(OutputFileTest, AFifoIsWrittenThroughNotReplaced) {
  TempDir dir;
  const fs::path fifo = fs::path(dir.path()) / "pipe";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const int read_end = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
  ASSERT_GE(read_end, 0);
  const absl::Status status = WriteOutputFile(fifo.string(), "report\n");
  std::string received(64, '\0');
  const ssize_t got = ::read(read_end, received.data(), received.size());
  ::close(read_end);
  received.resize(got > 0 ? static_cast<size_t>(got) : 0);
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_EQ(received, "report\n");
  EXPECT_EQ(FileType(fifo), static_cast<mode_t>(S_IFIFO));
}

// /dev/null must stay the null device. Tested on a device node of its own (the same major and
// minor numbers), which only root may make, so a failure cannot touch the machine's /dev/null.
TEST(OutputFileTest, ACharacterDeviceIsWrittenThroughNotReplaced) {
  if (::geteuid() != 0) GTEST_SKIP() << "only root can make a device node";
  TempDir dir;
  const fs::path device = fs::path(dir.path()) / "null";
  ASSERT_EQ(::mknod(device.c_str(), S_IFCHR | 0666, makedev(1, 3)), 0);
  const absl::Status status = WriteOutputFile(device.string(), "report\n");
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_EQ(FileType(device), static_cast<mode_t>(S_IFCHR));
  EXPECT_EQ(EntryCount(dir.path()), 1u);
}

TEST(OutputFileTest, AnInputIsNeverOverwrittenWhateverItIsCalled) {
  TempDir dir;
  const fs::path input = fs::path(dir.path()) / "rank0.json";
  WriteFile(input, "{\"traceEvents\": []}");
  const fs::path link = fs::path(dir.path()) / "link.json";
  fs::create_symlink(input, link);
  const fs::path hard = fs::path(dir.path()) / "hard.json";
  fs::create_hard_link(input, hard);
  const OutputFileOptions options{.protected_files = {input.string()}};
  for (const fs::path& name : {input, link, hard, fs::path(dir.path()) / "." / "rank0.json"}) {
    SCOPED_TRACE(name.string());
    const absl::Status status = WriteOutputFile(name.string(), "report", options);
    ASSERT_FALSE(status.ok());
    EXPECT_THAT(std::string(status.message()), HasSubstr("never overwritten"));
  }
  EXPECT_EQ(ReadFile(input), "{\"traceEvents\": []}");
  // Any other file is fine.
  EXPECT_TRUE(WriteOutputFile((fs::path(dir.path()) / "out.json").string(), "r", options).ok());
}

}  // namespace
}  // namespace bubblescope
