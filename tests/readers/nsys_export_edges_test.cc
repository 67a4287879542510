// The Nsight Systems reader on exports the project's writer makes and SQLite then changes: rows
// committed to a write-ahead log and not checkpointed (read, with the user's files left as they
// were), and cells longer than SQLite may load (the row skipped and counted, the file read).
#include <sqlite3.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "readers/nsys_reader.h"
#include "support/test_files.h"
#include "writers/nsys_writer.h"

namespace bubblescope {
namespace {

constexpr int64_t kPid = 4242;
constexpr int64_t kTid = 77;
constexpr int kKernels = 4;

// One process: a launch and a GEMM per step, kKernels of them 10 µs apart, each under a
// "PP:F<i>" range.
Rank MakeRank() {
  Rank rank;
  rank.rank = 0;
  rank.world_size = 1;
  rank.pid = kPid;
  rank.host = "node-a";
  Timeline cpu{TimelineKind::kCpuThread, -1, kPid, kTid, {}};
  Timeline stream{TimelineKind::kGpuStream, 0, 0, 7, {}};
  for (int i = 0; i < kKernels; ++i) {
    const TimeNs at = 10'000 * (i + 1);
    cpu.intervals.push_back(Interval{.start = at,
                                     .end = at + 100,
                                     .correlation = i + 1,
                                     .name = rank.names.Intern("cudaLaunchKernel"),
                                     .kind = IntervalKind::kRuntime});
    stream.intervals.push_back(Interval{.start = at + 1000,
                                        .end = at + 5000,
                                        .correlation = i + 1,
                                        .name = rank.names.Intern("ampere_gemm"),
                                        .kind = IntervalKind::kComputeKernel});
    rank.annotations.push_back(Annotation{.start = at - 100,
                                          .end = at + 6000,
                                          .name = rank.names.Intern(absl::StrCat("PP:F", i)),
                                          .thread_or_stream = kTid});
  }
  rank.timelines = {cpu, stream};
  return rank;
}

std::string WriteExport(const testing::TempDir& dir, const std::string& name) {
  const std::string path = dir.path() + "/" + name;
  const absl::Status written = WriteNsysSqlite(MakeRank(), NsysWriteOptions{}, path);
  EXPECT_TRUE(written.ok()) << written;
  return path;
}

void Exec(sqlite3* db, const std::string& sql) {
  char* error = nullptr;
  EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &error), SQLITE_OK)
      << (error != nullptr ? error : "") << " in " << sql;
  sqlite3_free(error);
}

// The one integer `sql` answers on `path`.
int64_t QueryInt(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  sqlite3_stmt* statement = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db, sql.c_str(), -1, &statement, nullptr), SQLITE_OK) << sql;
  int64_t value = -1;
  if (sqlite3_step(statement) == SQLITE_ROW) value = sqlite3_column_int64(statement, 0);
  sqlite3_finalize(statement);
  sqlite3_close(db);
  return value;
}

size_t KernelCount(const Rank& rank) {
  size_t count = 0;
  for (const Timeline& timeline : rank.timelines) {
    for (const Interval& interval : timeline.intervals) {
      count += interval.kind == IntervalKind::kComputeKernel ? 1 : 0;
    }
  }
  return count;
}

// Every file of `folder` with its bytes.
std::map<std::string, std::string> Snapshot(const std::string& folder) {
  std::map<std::string, std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(folder)) {
    files[entry.path().filename().string()] = testing::ReadFile(entry.path().string());
  }
  return files;
}

// Rows committed in WAL mode and never checkpointed (the writer still holding the file, as nsys
// or a script editing the export may leave it) are read: the kernels the log adds are there. The
// database, its -wal and -shm are left byte for byte as they were, and nothing is added beside.
TEST(NsysExportEdgesTest, RowsInAnUncheckpointedWriteAheadLogAreRead) {
  testing::TempDir dir;
  const std::string path = WriteExport(dir, "rank0.sqlite");
  sqlite3* writer = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &writer), SQLITE_OK);
  Exec(writer, "PRAGMA journal_mode=WAL; PRAGMA wal_autocheckpoint=0");
  // The same kernels again, 1 ms later: kKernels more, only in the log.
  Exec(writer,
       "CREATE TEMP TABLE later AS SELECT * FROM CUPTI_ACTIVITY_KIND_KERNEL;"
       "UPDATE later SET start = start + 1000000, end = end + 1000000;"
       "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL SELECT * FROM later");
  // The writer is still open: its changes are in rank0.sqlite-wal alone.
  ASSERT_GT(std::filesystem::file_size(path + "-wal"), 0u);
  const std::map<std::string, std::string> before = Snapshot(dir.path());
  ASSERT_TRUE(before.contains("rank0.sqlite-wal"));
  ASSERT_TRUE(before.contains("rank0.sqlite-shm"));

  absl::StatusOr<std::vector<Rank>> ranks = ReadNsysSqlite(path, NsysReadOptions{});
  ASSERT_TRUE(ranks.ok()) << ranks.status();
  ASSERT_EQ(ranks->size(), 1u);
  EXPECT_EQ(KernelCount(ranks->front()), 2u * kKernels);
  EXPECT_EQ(ranks->front().stats.count(ImportCounter::kTruncated), 0u);
  EXPECT_FALSE(ranks->front().stats.HasAtLeast(Severity::kWarning));
  EXPECT_EQ(Snapshot(dir.path()), before);
  sqlite3_close(writer);
}

// A log that is no SQLite log is not read, and said: a cut file, naming it.
TEST(NsysExportEdgesTest, AWriteAheadLogThatIsNoLogIsSaid) {
  testing::TempDir dir;
  const std::string path = WriteExport(dir, "rank0.sqlite");
  dir.Write("rank0.sqlite-wal", std::string(4096, 'w'));
  absl::StatusOr<std::vector<Rank>> ranks = ReadNsysSqlite(path, NsysReadOptions{});
  ASSERT_TRUE(ranks.ok()) << ranks.status();
  const ImportStats& stats = ranks->front().stats;
  EXPECT_EQ(KernelCount(ranks->front()), static_cast<size_t>(kKernels));
  EXPECT_EQ(stats.count(ImportCounter::kTruncated), 1u);
  EXPECT_EQ(stats.truncation_detail(),
            path + "-wal holds 4096 bytes that are no SQLite write-ahead log, not read");
}

// A cell longer than SQLite may load (16 MiB) costs its own row only: a kernel whose start is a
// 17 MiB text, a range whose name is one, a string of StringIds that is one. Each is counted
// (wrong_field_type) naming its table and rowid; the rest of the file is read.
TEST(NsysExportEdgesTest, ACellOverTheLimitSkipsItsRowOnly) {
  testing::TempDir dir;
  const std::string path = WriteExport(dir, "rank0.sqlite");
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  const std::string long_text = "printf('%.*c', 17 * 1024 * 1024, 'x')";
  Exec(db, "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET start = " + long_text + " WHERE rowid = 2");
  Exec(db, "UPDATE NVTX_EVENTS SET text = " + long_text +
               ", textId = NULL WHERE rowid = (SELECT min(rowid) FROM NVTX_EVENTS WHERE eventType "
               "= 59)");
  Exec(db, "UPDATE StringIds SET value = " + long_text + " WHERE value = 'cudaLaunchKernel_v7000'");
  sqlite3_close(db);
  const int64_t string_row =
      QueryInt(path, "SELECT rowid FROM StringIds WHERE length(value) > 1000000");
  absl::StatusOr<std::vector<Rank>> ranks = ReadNsysSqlite(path, NsysReadOptions{});
  ASSERT_TRUE(ranks.ok()) << ranks.status();
  ASSERT_EQ(ranks->size(), 1u);
  const Rank& rank = ranks->front();
  EXPECT_EQ(KernelCount(rank), static_cast<size_t>(kKernels - 1));
  size_t ranges = 0;
  for (const Annotation& annotation : rank.annotations) {
    ranges += rank.name(annotation.name).starts_with("PP:F") ? 1 : 0;
  }
  EXPECT_EQ(ranges, static_cast<size_t>(kKernels - 1));
  // The runtime calls lost their name with the string: kept unnamed, each counted as bad_id.
  EXPECT_EQ(rank.stats.count(ImportCounter::kBadId), static_cast<uint64_t>(kKernels));
  EXPECT_EQ(rank.stats.count(ImportCounter::kWrongFieldType), 3u);
  // StringIds is read first.
  EXPECT_EQ(
      rank.stats.first_where(ImportCounter::kWrongFieldType),
      absl::StrCat("StringIds rowid ", string_row, " (a cell over 16 MiB: the string is skipped)"));
  EXPECT_TRUE(rank.stats.HasAtLeast(Severity::kError));  // --strict refuses
}

}  // namespace
}  // namespace bubblescope
