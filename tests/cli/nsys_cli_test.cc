// `bubblescope analyze` on Nsight Systems exports, end to end (docs/nsight-systems.md): a
// directory of them as `simulate --format nsys` writes it; reports exported through an nsys on
// PATH (a stand-in) into the cache, or without one the export command; a database of something
// else and a damaged one: each error one line naming the file, exit 2.
#include <sqlite3.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "support/scoped_env.h"
#include "support/subprocess.h"
#include "support/test_files.h"

namespace bubblescope {
namespace {

using ::bubblescope::testing::CommandResult;
using ::bubblescope::testing::ReadFile;
using ::bubblescope::testing::RunCommand;
using ::bubblescope::testing::ScopedEnv;
using ::bubblescope::testing::TempDir;
using ::bubblescope::testing::WriteFile;
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::MatchesRegex;

CommandResult Bubblescope(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {BUBBLESCOPE_BINARY};
  argv.insert(argv.end(), args.begin(), args.end());
  return RunCommand(argv);
}

TEST(NsysCliTest, AnalyzesADirectoryOfExports) {
  TempDir dir;
  CommandResult simulated = Bubblescope({"simulate", "-p", "4", "-m", "8", "--schedule", "1f1b",
                                         "--format", "nsys", "-o", dir.path()});
  ASSERT_EQ(simulated.exit_status, 0) << simulated.err;
  // The simulator's own figure for this job, as it printed it.
  ASSERT_THAT(simulated.out, HasSubstr("bubble fraction 0.3920"));
  CommandResult run = Bubblescope({"analyze", dir.path()});
  EXPECT_EQ(run.exit_status, 0) << run.err;
  EXPECT_THAT(run.out, HasSubstr("4 ranks (4 gpu, 0 cpu)"));
  EXPECT_THAT(run.out, HasSubstr("p=4 m=8 v=1 1f1b"));
  EXPECT_THAT(run.out, HasSubstr("bubble 39.2%"));
  // What the ranks' ids and times rest on: torchrun's RANK, which the writer puts in each
  // export's META_DATA_CAPTURE, and times counted from each session's start.
  EXPECT_THAT(run.out, HasSubstr("\nnsys exports: rank ids by environment:RANK; times by "
                                 "session_start (each rank's time_evidence is in the JSON "
                                 "report)\n"));
}

TEST(NsysCliTest, AReportWithoutNsysNamesTheExportCommand) {
  TempDir dir;
  const ScopedEnv path("PATH", dir.path() + "/no-nsys-here");
  const std::string report = dir.Write("rank0.nsys-rep", std::string("\x01\x02qdstrm", 8));
  CommandResult run = Bubblescope({"analyze", report});
  EXPECT_EQ(run.exit_status, 2);
  EXPECT_EQ(run.err, "bubblescope: " + report +
                         ": an Nsight Systems report, and no nsys on PATH to export it; "
                         "bubblescope reads its SQLite export: nsys export --type sqlite "
                         "--include-blobs=true --output " +
                         dir.path() + "/rank0.sqlite " + report + "\n");
}

// A stand-in for nsys: counts its calls, refuses any command but an export with the flags
// bubblescope must give (nsys's own spelling), and writes the export of the report named last as
// the SQLite file of the same name in $FAKE_NSYS_EXPORTS, or fails as nsys does when
// $FAKE_NSYS_FAIL is set (progress first, the error last).
constexpr std::string_view kFakeNsys = R"(#!/bin/sh
echo "$*" >>"$FAKE_NSYS_CALLS"
[ "$1" = export ] || { echo "fake nsys: not an export: $*" >&2; exit 3; }
shift
out= type= blobs= force=
while [ $# -gt 1 ]; do
  case "$1" in
    --type) type=$2; shift ;;
    --output) out=$2; shift ;;
    --include-blobs=true) blobs=1 ;;
    --force-overwrite=true) force=1 ;;
    *) echo "fake nsys: unknown flag $1" >&2; exit 3 ;;
  esac
  shift
done
if [ "$type" != sqlite ] || [ -z "$blobs" ] || [ -z "$force" ] || [ -z "$out" ]; then
  echo "fake nsys: flags missing" >&2; exit 3
fi
if [ -n "${FAKE_NSYS_FAIL:-}" ]; then
  echo "Processing [====100%]" >&2; echo "$FAKE_NSYS_FAIL" >&2; echo >&2; exit 1
fi
cp "$FAKE_NSYS_EXPORTS/$(basename "$1" .nsys-rep).sqlite" "$out"
)";

// A folder of reports as `nsys profile` leaves them, exports of the same job made beforehand, a
// fake nsys on PATH and a cache of the test's own.
class FakeNsys {
 public:
  FakeNsys()
      : path_("PATH", dir_.path() + "/bin:/usr/bin:/bin"),
        cache_("XDG_CACHE_HOME", dir_.path() + "/cache"),
        calls_("FAKE_NSYS_CALLS", dir_.path() + "/calls"),
        exports_("FAKE_NSYS_EXPORTS", dir_.path() + "/exports") {
    const std::string nsys = dir_.Write("bin/nsys", kFakeNsys);
    chmod(nsys.c_str(), 0755);
    std::filesystem::create_directories(reports());
  }
  const std::string& dir() const { return dir_.path(); }
  std::string reports() const { return dir_.path() + "/reports"; }
  std::string cache() const { return dir_.path() + "/cache/bubblescope/nsys"; }
  // How many times nsys ran.
  size_t Calls() const {
    if (!std::filesystem::exists(dir_.path() + "/calls")) return 0;
    const std::string calls = ReadFile(dir_.path() + "/calls");
    return static_cast<size_t>(std::count(calls.begin(), calls.end(), '\n'));
  }
  // Every file under `folder`, relative to it, sorted.
  static std::vector<std::string> FilesUnder(const std::string& folder) {
    std::vector<std::string> files;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(folder)) {
      if (entry.is_regular_file()) {
        files.push_back(std::filesystem::relative(entry.path(), folder).string());
      }
    }
    std::sort(files.begin(), files.end());
    return files;
  }

 private:
  TempDir dir_;
  ScopedEnv path_;
  ScopedEnv cache_;
  ScopedEnv calls_;
  ScopedEnv exports_;
};

// With nsys on PATH, reports are exported into the cache and read: the same job as its exports,
// nsys run once per report, the exports reused while the reports are unchanged, nothing written
// beside them.
TEST(NsysCliTest, ReportsAreExportedIntoTheCacheAndReused) {
  FakeNsys nsys;
  CommandResult simulated = Bubblescope({"simulate", "-p", "4", "-m", "8", "--schedule", "1f1b",
                                         "--format", "nsys", "-o", nsys.dir() + "/exports"});
  ASSERT_EQ(simulated.exit_status, 0) << simulated.err;
  ASSERT_THAT(simulated.out, HasSubstr("bubble fraction 0.3920"));
  for (int r = 0; r < 4; ++r) {
    WriteFile(absl::StrCat(nsys.reports(), "/rank", r, ".nsys-rep"), "qdstrm report");
  }
  const std::vector<std::string> reports = FakeNsys::FilesUnder(nsys.reports());

  CommandResult first = Bubblescope({"analyze", nsys.reports()});
  EXPECT_EQ(first.exit_status, 0) << first.err;
  EXPECT_THAT(first.out, HasSubstr("4 ranks (4 gpu, 0 cpu)"));
  EXPECT_THAT(first.out, HasSubstr("p=4 m=8 v=1 1f1b"));
  EXPECT_THAT(first.out, HasSubstr("bubble 39.2%"));
  EXPECT_EQ(nsys.Calls(), 4u);
  // One folder per report, the export under the report's name (a rank in it stays readable), no
  // temporary file left.
  const std::vector<std::string> cached = FakeNsys::FilesUnder(nsys.cache());
  ASSERT_EQ(cached.size(), 4u);
  for (int r = 0; r < 4; ++r) {
    EXPECT_THAT(cached, Contains(MatchesRegex(absl::StrCat("[0-9a-f]{16}/rank", r, "\\.sqlite"))));
  }

  CommandResult second = Bubblescope({"analyze", nsys.reports()});
  EXPECT_EQ(second.exit_status, 0) << second.err;
  EXPECT_EQ(second.out, first.out);
  EXPECT_EQ(nsys.Calls(), 4u);  // reused: nsys not run again

  // A report given by name is exported under the same key as when its folder was given.
  CommandResult named = Bubblescope({"analyze", nsys.reports() + "/rank2.nsys-rep"});
  EXPECT_EQ(named.exit_status, 0) << named.err;
  EXPECT_EQ(nsys.Calls(), 4u);

  // A report rewritten (another size) is exported again, the others still reused.
  WriteFile(nsys.reports() + "/rank1.nsys-rep", "qdstrm report, profiled again");
  CommandResult third = Bubblescope({"analyze", nsys.reports()});
  EXPECT_EQ(third.exit_status, 0) << third.err;
  EXPECT_EQ(nsys.Calls(), 5u);
  EXPECT_EQ(FakeNsys::FilesUnder(nsys.cache()).size(), 5u);

  EXPECT_EQ(FakeNsys::FilesUnder(nsys.reports()), reports);  // nothing beside the reports
}

// nsys failing is one line: its exit status and the last line it wrote to stderr; no export is
// kept for it, so the next run tries again.
TEST(NsysCliTest, NsysFailingIsOneLineWithItsLastWords) {
  FakeNsys nsys;
  const ScopedEnv fail("FAKE_NSYS_FAIL", "Importer error status: Importation failed.");
  const std::string report = nsys.reports() + "/rank0.nsys-rep";
  WriteFile(report, "qdstrm report, damaged");
  CommandResult run = Bubblescope({"analyze", report});
  EXPECT_EQ(run.exit_status, 2);
  EXPECT_EQ(run.err, "bubblescope: " + report +
                         ": nsys export failed (exit status 1): Importer error status: "
                         "Importation failed.\n");
  EXPECT_EQ(nsys.Calls(), 1u);
  EXPECT_THAT(FakeNsys::FilesUnder(nsys.cache()), IsEmpty());
  EXPECT_THAT(FakeNsys::FilesUnder(nsys.reports()), ElementsAre("rank0.nsys-rep"));
}

TEST(NsysCliTest, ForeignOrDamagedSqliteIsOneLineExitTwo) {
  TempDir dir;
  const std::string foreign = dir.path() + "/notes.sqlite";
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(foreign.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "CREATE TABLE notes (text TEXT); INSERT INTO notes VALUES ('hi');",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  CommandResult run = Bubblescope({"analyze", foreign});
  EXPECT_EQ(run.exit_status, 2);
  EXPECT_EQ(run.err, "bubblescope: " + foreign +
                         ": an SQLite database, but no Nsight Systems export (no StringIds "
                         "table)\n");

  const std::string damaged =
      dir.Write("cut.sqlite", std::string("SQLite format 3\0", 16) + std::string(200, '\x7f'));
  run = Bubblescope({"analyze", damaged});
  EXPECT_EQ(run.exit_status, 2);
  EXPECT_THAT(run.err, HasSubstr("bubblescope: " + damaged + ": "));
  EXPECT_EQ(run.err.find('\n'), run.err.size() - 1);
}

}  // namespace
}  // namespace bubblescope
