#include "loader/trace_paths.h"

#include <sys/stat.h>

#include <filesystem>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "support/scoped_env.h"
#include "support/test_files.h"

namespace bubblescope {
namespace {

using ::testing::ElementsAre;

std::vector<std::string> Paths(const absl::StatusOr<std::vector<TraceFile>>& files) {
  std::vector<std::string> paths;
  for (const TraceFile& file : *files) paths.push_back(file.path);
  return paths;
}
using ::bubblescope::testing::ScopedEnv;
using ::bubblescope::testing::TempDir;

TEST(TracePathsTest, TraceFileNames) {
  EXPECT_TRUE(IsTraceFileName("a.json"));
  EXPECT_TRUE(IsTraceFileName("a.json.gz"));
  EXPECT_TRUE(IsTraceFileName("host_1.123.pt.trace.json"));
  EXPECT_TRUE(IsTraceFileName("host_1.123.pt.trace.json.gz"));
  EXPECT_TRUE(IsTraceFileName("A.JSON.GZ"));
  EXPECT_FALSE(IsTraceFileName("a.json.bak"));
  EXPECT_FALSE(IsTraceFileName("a.gz"));
  EXPECT_FALSE(IsTraceFileName("a.jsonl"));
  EXPECT_FALSE(IsTraceFileName("README.md"));
  EXPECT_TRUE(IsTraceFileName("rank0.sqlite"));  // nsys export --type sqlite
  EXPECT_TRUE(IsTraceFileName("RANK0.SQLITE"));
  EXPECT_FALSE(IsTraceFileName("rank0.nsys-rep"));
  EXPECT_TRUE(IsNsightReportName("rank0.nsys-rep"));
  EXPECT_TRUE(IsNsightReportName("old/rank0.QDREP"));
  EXPECT_FALSE(IsNsightReportName("rank0.sqlite"));
}

// Only nsys reads its reports: without it on PATH, one given, or a directory of them, is one line
// naming the export that bubblescope reads and the command that writes it beside the report.
TEST(TracePathsTest, AnNsightReportWithoutNsysAsksForItsSqliteExport) {
  std::vector<SkippedFile> skipped;
  TempDir dir;
  const ScopedEnv path("PATH", dir.path() + "/no-nsys-here");
  const std::string report = dir.Write("prof_rank3.nsys-rep", "x");
  absl::Status status = ExpandTracePaths({report}, &skipped).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(),
            report +
                ": an Nsight Systems report, and no nsys on PATH to export it; bubblescope "
                "reads its SQLite export: nsys export --type sqlite --include-blobs=true "
                "--output " +
                dir.path() + "/prof_rank3.sqlite " + report);
  dir.Write("prof_rank2.nsys-rep", "x");
  status = ExpandTracePaths({dir.path()}, &skipped).status();
  EXPECT_EQ(status.message(),
            dir.path() +
                "/prof_rank2.nsys-rep: an Nsight Systems report, and no nsys on PATH "
                "to export it; bubblescope reads its SQLite export: nsys export --type "
                "sqlite --include-blobs=true --output " +
                dir.path() + "/prof_rank2.sqlite " + dir.path() + "/prof_rank2.nsys-rep");
  // Beside their exports, reports are passed over.
  dir.Write("prof_rank2.sqlite", "x");
  absl::StatusOr<std::vector<TraceFile>> files = ExpandTracePaths({dir.path()}, &skipped);
  ASSERT_TRUE(files.ok()) << files.status();
  EXPECT_THAT(Paths(files), ElementsAre(dir.path() + "/prof_rank2.sqlite"));
}

TEST(TracePathsTest, DirectoryContributesItsTraceFilesSortedByName) {
  std::vector<SkippedFile> skipped;
  TempDir dir;
  dir.Write("rank1.json.gz", "x");
  dir.Write("rank0.json", "x");
  dir.Write("notes.txt", "x");
  dir.Write("rank2.pt.trace.json", "x");
  dir.Write("sub/rank3.json", "x");  // not recursive
  absl::StatusOr<std::vector<TraceFile>> files = ExpandTracePaths({dir.path()}, &skipped);
  ASSERT_TRUE(files.ok()) << files.status();
  EXPECT_THAT(Paths(files), ElementsAre(dir.path() + "/rank0.json", dir.path() + "/rank1.json.gz",
                                        dir.path() + "/rank2.pt.trace.json"));
  for (const TraceFile& file : *files) EXPECT_TRUE(file.from_directory);
}

TEST(TracePathsTest, TrailingSlashOnDirectory) {
  std::vector<SkippedFile> skipped;
  TempDir dir;
  dir.Write("a.json", "x");
  absl::StatusOr<std::vector<TraceFile>> files = ExpandTracePaths({dir.path() + "/"}, &skipped);
  ASSERT_TRUE(files.ok()) << files.status();
  EXPECT_THAT(Paths(files), ElementsAre(dir.path() + "/a.json"));
}

TEST(TracePathsTest, FilesKeptAsGivenAndInOrder) {
  std::vector<SkippedFile> skipped;
  TempDir dir;
  const std::string b = dir.Write("b.json", "x");
  const std::string other =
      dir.Write("other.txt", "x");  // named explicitly: taken whatever its name
  TempDir traces;
  traces.Write("t.json", "x");
  absl::StatusOr<std::vector<TraceFile>> files =
      ExpandTracePaths({b, traces.path(), other, "missing.json"}, &skipped);
  ASSERT_TRUE(files.ok()) << files.status();
  EXPECT_THAT(Paths(files), ElementsAre(b, traces.path() + "/t.json", other, "missing.json"));
  EXPECT_FALSE((*files)[0].from_directory);
  EXPECT_TRUE((*files)[1].from_directory);
  EXPECT_FALSE((*files)[2].from_directory);
}

TEST(TracePathsTest, DirectoryWithoutTraceFilesIsAnError) {
  std::vector<SkippedFile> skipped;
  TempDir dir;
  dir.Write("notes.txt", "x");
  dir.Write("sub/notes.txt", "x");
  absl::Status status = ExpandTracePaths({dir.path()}, &skipped).status();
  EXPECT_FALSE(status.ok());
  EXPECT_EQ(status.message(),
            dir.path() + ": no trace files (*.json, *.json.gz, *.bsdigest, *.sqlite)");
}

// A folder of trace sets (one subfolder per job) is not read recursively; the error names the
// sets, sorted, and the command that reads the first, before anything else.
TEST(TracePathsTest, AFolderOfTraceSetsNamesThemInTheError) {
  std::vector<SkippedFile> skipped;
  TempDir dir;
  dir.Write("README.md", "x");
  dir.Write("run_b/rank0.json.gz", "x");
  dir.Write("run_a/rank0.json", "x");
  dir.Write("run_c/prof.nsys-rep", "x");
  dir.Write("docs/notes.txt", "x");  // no trace: not a set
  absl::Status status = ExpandTracePaths({dir.path()}, &skipped).status();
  EXPECT_EQ(status.message(),
            dir.path() +
                " holds 3 trace sets in subfolders (run_a, run_b, run_c); name one: "
                "bubblescope analyze " +
                dir.path() +
                "/run_a; no trace files (*.json, *.json.gz, *.bsdigest, *.sqlite) beside them");
}

// Beside a file that may be no trace (a provenance.json), the sets are kept for the loader,
// which names them when that file turns out to be none; the listing itself succeeds.
TEST(TracePathsTest, TraceSetsBesideOtherJsonAreKeptForTheLoader) {
  std::vector<SkippedFile> skipped;
  std::string sets;
  TempDir dir;
  dir.Write("provenance.json", "{}");
  for (int i = 0; i < 8; ++i) dir.Write("set" + std::to_string(i) + "/rank0.json", "x");
  absl::StatusOr<std::vector<TraceFile>> files = ExpandTracePaths({dir.path()}, &skipped, &sets);
  ASSERT_TRUE(files.ok()) << files.status();
  EXPECT_THAT(Paths(files), ElementsAre(dir.path() + "/provenance.json"));
  EXPECT_EQ(sets, dir.path() +
                      " holds 8 trace sets in subfolders (set0, set1, set2, set3, set4, "
                      "set5 and 2 more); name one: bubblescope analyze " +
                      dir.path() + "/set0");
}

TEST(TracePathsTest, NoPathsIsAnError) {
  std::vector<SkippedFile> skipped;
  EXPECT_EQ(ExpandTracePaths({}, &skipped).status().code(), absl::StatusCode::kInvalidArgument);
}

// A FIFO, a directory and a dangling symlink with trace names are passed over, each with a note
// saying what it is (a FIFO would block the read forever).
TEST(TracePathsTest, SpecialEntriesWithTraceNamesArePassedOverWithANote) {
  std::vector<SkippedFile> skipped;
  TempDir dir;
  dir.Write("rank0.json", "x");
  const std::string fifo = dir.path() + "/rank1.json";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const std::string directory = dir.path() + "/rank2.json";
  std::filesystem::create_directory(directory);
  const std::string dangling = dir.path() + "/rank3.json.gz";
  std::filesystem::create_symlink(dir.path() + "/nowhere", dangling);
  absl::StatusOr<std::vector<TraceFile>> files = ExpandTracePaths({dir.path()}, &skipped);
  ASSERT_TRUE(files.ok()) << files.status();
  EXPECT_THAT(Paths(files), ElementsAre(dir.path() + "/rank0.json"));
  ASSERT_EQ(skipped.size(), 3u);
  EXPECT_EQ(skipped[0].path, fifo);
  EXPECT_EQ(skipped[0].reason, "a FIFO, not a file");
  EXPECT_EQ(skipped[1].path, directory);
  EXPECT_EQ(skipped[1].reason, "a directory");
  EXPECT_EQ(skipped[2].path, dangling);
  EXPECT_EQ(skipped[2].reason, "a symbolic link to nothing");
}

}  // namespace
}  // namespace bubblescope
