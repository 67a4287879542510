// `bubblescope analyze` on Nsight Systems exports, end to end (docs/nsight-systems.md): a
// directory of them as `simulate --format nsys` writes it, a report that was never exported, a
// database of something else and a damaged one: each error one line naming the file, exit 2.
#include <sqlite3.h>

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "support/subprocess.h"
#include "support/test_files.h"

namespace bubblescope {
namespace {

using ::bubblescope::testing::CommandResult;
using ::bubblescope::testing::RunCommand;
using ::bubblescope::testing::TempDir;
using ::testing::HasSubstr;

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
}

TEST(NsysCliTest, AReportNotExportedNamesTheExportCommand) {
  TempDir dir;
  const std::string report = dir.Write("rank0.nsys-rep", std::string("\x01\x02qdstrm", 8));
  CommandResult run = Bubblescope({"analyze", report});
  EXPECT_EQ(run.exit_status, 2);
  EXPECT_THAT(run.err, HasSubstr("bubblescope: " + report + ": an Nsight Systems report"));
  EXPECT_THAT(run.err, HasSubstr("nsys export --type sqlite"));
  EXPECT_EQ(run.err.find('\n'), run.err.size() - 1);
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

  const std::string damaged = dir.Write("cut.sqlite", std::string("SQLite format 3\0", 16) +
                                                          std::string(200, '\x7f'));
  run = Bubblescope({"analyze", damaged});
  EXPECT_EQ(run.exit_status, 2);
  EXPECT_THAT(run.err, HasSubstr("bubblescope: " + damaged + ": "));
  EXPECT_EQ(run.err.find('\n'), run.err.size() - 1);
}

}  // namespace
}  // namespace bubblescope
