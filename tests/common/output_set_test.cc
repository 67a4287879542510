// The output writer's guarantees beyond one file (docs/input-errors.md, "Writing files"): all the
// outputs of one command are checked together before any is written, temporary names fit
// NAME_MAX, temporary files go on SIGINT / SIGTERM and a later write sweeps those of a killed
// run, and a file this user may not write is never replaced.
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <climits>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "common/output_file.h"
#include "common/output_temp.h"
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

size_t EntryCount(const fs::path& dir) {
  size_t count = 0;
  for ([[maybe_unused]] const fs::directory_entry& entry : fs::directory_iterator(dir)) ++count;
  return count;
}

// A pid no process has: a child that has exited and been reaped.
pid_t DeadPid() {
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  int status = 0;
  ::waitpid(child, &status, 0);
  return child;
}

TEST(CheckOutputsTest, TwoOutputsNamingOneFileAreRefusedBeforeAnythingIsWritten) {
  TempDir dir;
  const std::string a = (fs::path(dir.path()) / "a").string();
  // The same new name twice, and two spellings of it.
  absl::Status status = CheckOutputs({{"--markdown", a}, {"--junit", a}});
  EXPECT_TRUE(absl::IsInvalidArgument(status));
  EXPECT_EQ(status.message(),
            "--junit names the same file as --markdown (" + a + "): one would replace the other");
  const std::string dotted = (fs::path(dir.path()) / "." / "a").string();
  EXPECT_TRUE(absl::IsInvalidArgument(CheckOutputs({{"-o", a}, {"--html", dotted}})));
  EXPECT_EQ(EntryCount(dir.path()), 0u);

  // An existing file through a symlink and a hard link: the same inode.
  WriteFile(a, "kept");
  const fs::path link = fs::path(dir.path()) / "link-to-a";
  const fs::path hard = fs::path(dir.path()) / "hard-a";
  fs::create_symlink(a, link);
  fs::create_hard_link(a, hard);
  status = CheckOutputs({{"--html", a}, {"--perfetto", link.string()}});
  EXPECT_THAT(std::string(status.message()), HasSubstr("--perfetto names the same file as --html"));
  EXPECT_TRUE(absl::IsInvalidArgument(CheckOutputs({{"-o", hard.string()}, {"--html", a}})));
  EXPECT_EQ(ReadFile(a), "kept");

  // Distinct files, outputs not asked for, and a shared write-through device are fine.
  EXPECT_TRUE(CheckOutputs({{"-o", a},
                            {"--html", (fs::path(dir.path()) / "b").string()},
                            {"--junit", ""},
                            {"--markdown", ""}})
                  .ok());
  EXPECT_TRUE(CheckOutputs({{"--markdown", "/dev/null"}, {"--junit", "/dev/null"}}).ok());
}

// Runs in `dir` for its lifetime, then back where it was: relative spellings are relative to it.
class InDirectory {
 public:
  explicit InDirectory(const std::string& dir) : before_(fs::current_path()) {
    fs::current_path(dir);
  }
  ~InDirectory() { fs::current_path(before_); }
  InDirectory(const InDirectory&) = delete;
  InDirectory& operator=(const InDirectory&) = delete;

 private:
  fs::path before_;
};

// Every spelling of one new file is that file: a relative name nothing of which exists yet was
// compared as written ("r") while "./r" was resolved ("/cwd/r"), so `-o ./r --html r` wrote one
// output over the other.
TEST(CheckOutputsTest, EverySpellingOfOneNewFileIsOneFile) {
  TempDir dir;
  const std::string real = (fs::path(dir.path()) / "real").string();
  fs::create_directory(real);
  fs::create_directory(fs::path(dir.path()) / "sub");
  fs::create_directory_symlink(real, fs::path(dir.path()) / "link");
  const InDirectory here(dir.path());
  const std::string cwd = fs::current_path().string();
  for (const auto& [first, second] :
       std::vector<std::pair<std::string, std::string>>{{"./r", "r"},
                                                        {"r", cwd + "/r"},
                                                        {"sub/../r", "r"},
                                                        {".//r", "r"},
                                                        {"r", "./sub/../r"},
                                                        {"link/x", "real/x"},
                                                        {"link/x", cwd + "/real/./x"}}) {
    const absl::Status status = CheckOutputs({{"-o", first}, {"--html", second}});
    EXPECT_EQ(status.message(), "--html names the same file as -o (" + second + " and " + first +
                                    "): one would replace the other")
        << first << " " << second;
  }
  EXPECT_TRUE(CheckOutputs({{"-o", "r"}, {"--html", "sub/r"}}).ok());
  EXPECT_TRUE(CheckOutputs({{"-o", "link/x"}, {"--html", "x"}}).ok());
  EXPECT_EQ(EntryCount(dir.path()), 3u);  // real, sub, link: nothing written
}

TEST(CheckOutputsTest, AnOutputThatCannotBeWrittenIsNamedByItsFlag) {
  TempDir dir;
  const absl::Status status = CheckOutputs({{"-o", dir.path()}});
  EXPECT_FALSE(absl::IsInvalidArgument(status));
  EXPECT_EQ(status.message(), "-o: cannot write " + dir.path() + ": it is a directory");
}

// The temporary name of a 255-byte name (NAME_MAX) still fits NAME_MAX.
TEST(OutputTempTest, TheTemporaryNameOfTheLongestNameFitsNameMax) {
  TempDir dir;
  for (size_t length : {size_t{1}, size_t{200}, size_t{244}, size_t{255}}) {
    SCOPED_TRACE(length);
    const std::string name(length, 'n');
    EXPECT_LE(TempFilePrefix(name).size() + 10 + 1 + 6, static_cast<size_t>(NAME_MAX));
    const fs::path path = fs::path(dir.path()) / name;
    const absl::Status status = WriteOutputFile(path.string(), "report");
    ASSERT_TRUE(status.ok()) << status;
    EXPECT_EQ(ReadFile(path), "report");
    fs::remove(path);
  }
  EXPECT_EQ(EntryCount(dir.path()), 0u);
}

// SIGINT and SIGTERM while a temporary file exists remove it, and the process still dies of the
// signal.
TEST(OutputTempTest, ATerminationSignalRemovesTheTemporaryFile) {
  for (int signal_number : {SIGINT, SIGTERM}) {
    SCOPED_TRACE(signal_number);
    TempDir dir;
    const std::string target = (fs::path(dir.path()) / "pf.json").string();
    const pid_t child = ::fork();
    if (child == 0) {
      absl::StatusOr<TempFile> temp = CreateTempFile(target);
      if (!temp.ok()) ::_exit(3);
      const TempFileGuard guard(temp->path);
      ::raise(signal_number);
      ::_exit(4);  // not reached: the signal kills the process
    }
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFSIGNALED(status)) << status;
    EXPECT_EQ(WTERMSIG(status), signal_number);
    EXPECT_EQ(EntryCount(dir.path()), 0u);
  }
}

// What a SIGKILL leaves (a temporary file of a process that is gone) is swept by the next write
// of the same file; a live process's temporary file and other files are left alone.
TEST(OutputTempTest, ALaterWriteSweepsTheTemporaryFilesOfAKilledRun) {
  TempDir dir;
  const fs::path target = fs::path(dir.path()) / "pf.json";
  const std::string prefix = TempFilePrefix("pf.json");
  const fs::path stale = fs::path(dir.path()) / (prefix + std::to_string(DeadPid()) + ".a1B2c3");
  const fs::path live = fs::path(dir.path()) / (prefix + std::to_string(::getppid()) + ".a1B2c3");
  const fs::path other =
      fs::path(dir.path()) / (TempFilePrefix("other.json") + std::to_string(DeadPid()) + ".a1B2c3");
  for (const fs::path& file : {stale, live, other}) WriteFile(file, "partial");
  ASSERT_TRUE(WriteOutputFile(target.string(), "whole").ok());
  EXPECT_EQ(ReadFile(target), "whole");
  EXPECT_FALSE(fs::exists(stale));
  EXPECT_TRUE(fs::exists(live));
  EXPECT_TRUE(fs::exists(other));
}

// As a shell's `>`: a file this user may not write is not replaced, even in a directory that
// would let a rename through. Run as a user other than root (root may write anything).
TEST(OutputFileTest, AFileTheUserMayNotWriteIsNotReplaced) {
  TempDir dir;
  const fs::path file = fs::path(dir.path()) / "read-only.txt";
  WriteFile(file, "theirs");
  ASSERT_EQ(::chmod(file.c_str(), 0444), 0);
  ASSERT_EQ(::chmod(dir.path().c_str(), 0777), 0);
  const pid_t child = ::fork();
  if (child == 0) {
    // An unprivileged user in the child; the test's own process keeps its ids.
    if (::geteuid() == 0 && (::setgid(65534) != 0 || ::setuid(65534) != 0)) ::_exit(3);
    const absl::Status status = WriteOutputFile(file.string(), "ours");
    const bool refused =
        !status.ok() &&
        std::string(status.message()).find("you may not write it") != std::string::npos;
    ::_exit(refused ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_EQ(ReadFile(file), "theirs");
  EXPECT_EQ(EntryCount(dir.path()), 1u);
}

}  // namespace
}  // namespace bubblescope
