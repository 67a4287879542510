// The Nsight Systems reader on the ten real exports in ../shared/traces/nsys (nsys 2022.1 to
// 2026.2, other people's runs; the folder's README gives their provenance), and on copies of
// them moved in time or damaged. The expected figures were printed by nsys_real_exports.py (beside
// this file) from the SQLite files themselves with Python's sqlite3.
#include <sqlite3.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "readers/nsys_reader.h"
#include "support/shared_traces.h"
#include "support/test_files.h"

namespace bubblescope {
namespace {

struct Expected {
  const char* file;  // under nsys/
  int64_t pid;
  size_t kernels;
  int64_t first;  // the first kernel's start on the UTC epoch (as recorded without a session)
  int64_t last;   // the last kernel's end
  const char* time_base;
  const char* rank_source;  // before the loader: "none" where the file names no rank
};

// nsys_real_exports.py's output.
constexpr Expected kExports[] = {
    {"extrap_con_kernel/con_kernel.sqlite", 32084, 9, 1651514235657643244, 1651514235913651698,
     "session_start", "none"},
    {"extrap_ex-gpu.s10/ex-gpu.s10.sqlite", 868881, 6, 352103962, 355189518, "as_recorded", "none"},
    {"extrap_profile1/profile1.sqlite", 5360, 12, 1653929609950954599, 1653929610018809174,
     "session_start", "none"},
    {"extrap_profile16/profile16.sqlite", 24620, 12, 1653929716458466588, 1653929717222345562,
     "session_start", "none"},
    {"nsysai_h100_2gpu_1s/h100_2gpu_1s.sqlite", 111, 1721, 1779630170336012361, 1779630171296497370,
     "session_start", "gpu_index"},
    {"nsysai_h100_2gpu_1s/h100_2gpu_1s.sqlite", 112, 1721, 1779630170336084696, 1779630171296392359,
     "session_start", "gpu_index"},
    {"nsysai_mfu_2gpu_after/mfu_2gpu_after.sqlite", 148, 1793, 1779787199553045303,
     1779787199852265094, "session_start", "gpu_index"},
    {"nsysai_mfu_2gpu_after/mfu_2gpu_after.sqlite", 149, 1794, 1779787199553023561,
     1779787199852262039, "session_start", "gpu_index"},
    {"nsysai_mfu_2gpu_before/mfu_2gpu_before.sqlite", 144, 1993, 1779782390288293742,
     1779782390588142554, "session_start", "gpu_index"},
    {"nsysai_mfu_2gpu_before/mfu_2gpu_before.sqlite", 145, 2017, 1779782390288265548,
     1779782390586927099, "session_start", "gpu_index"},
    {"nsysai_mock/mock.sqlite", 91186, 2, 1776781228075022108, 1776781228093276775, "session_start",
     "none"},
    // Slurm's SLURM_PROCID="0" (with SLURM_NTASKS="1") in the launched process's environment.
    {"pipit_cloverleaf/cloverleaf.sqlite", 1701896, 1312, 1696392840120513790, 1696392840462854497,
     "session_start", "environment:SLURM_PROCID"},
    {"pipit_saxpy/saxpy.sqlite", 1230493, 5, 1687813258562219690, 1687813259602794081,
     "session_start", "none"},
};

struct KernelFigures {
  size_t count = 0;
  int64_t first = INT64_MAX;
  int64_t last = INT64_MIN;
};

KernelFigures Kernels(const Rank& rank) {
  KernelFigures figures;
  for (const Timeline& timeline : rank.timelines) {
    for (const Interval& interval : timeline.intervals) {
      if (interval.kind != IntervalKind::kComputeKernel &&
          interval.kind != IntervalKind::kCommKernel) {
        continue;
      }
      ++figures.count;
      figures.first = std::min(figures.first, interval.start);
      figures.last = std::max(figures.last, interval.end);
    }
  }
  return figures;
}

const Rank* RankOfPid(const std::vector<Rank>& ranks, int64_t pid) {
  for (const Rank& rank : ranks) {
    if (rank.pid == pid) return &rank;
  }
  return nullptr;
}

TEST(NsysRealExportsTest, EveryExportIsReadWithItsKernelsOnItsSessionsClock) {
  for (const Expected& expected : kExports) {
    SCOPED_TRACE(expected.file);
    const std::string path = testing::SharedTracePath(std::string("nsys/") + expected.file);
    BUBBLESCOPE_NEED_SHARED(path);
    absl::StatusOr<std::vector<Rank>> ranks = ReadNsysSqlite(path, NsysReadOptions{});
    ASSERT_TRUE(ranks.ok()) << ranks.status();
    const Rank* rank = RankOfPid(*ranks, expected.pid);
    ASSERT_NE(rank, nullptr);
    const KernelFigures kernels = Kernels(*rank);
    EXPECT_EQ(kernels.count, expected.kernels);
    EXPECT_EQ(kernels.first, expected.first);
    EXPECT_EQ(kernels.last, expected.last);
    EXPECT_EQ(rank->time_base, expected.time_base);
    EXPECT_EQ(rank->rank_source, expected.rank_source);
    EXPECT_FALSE(rank->stats.HasAtLeast(Severity::kWarning));
  }
}

// Runs `sql` on a copy of an export; the copy's path.
std::string Edited(const testing::TempDir& dir, const std::string& name, const std::string& from,
                   const std::string& sql) {
  const std::string path = dir.Write(name, testing::ReadFile(from));
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  char* error = nullptr;
  EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &error), SQLITE_OK)
      << (error != nullptr ? error : "");
  sqlite3_free(error);
  sqlite3_close(db);
  return path;
}

// Two reports of one host whose sessions started 5 s apart stay 5 s apart: the same real
// export, its session's start moved by 5 s on the UTC epoch and on the host's clock (and the
// capture window with it), its event times, which count from the session's start, unchanged.
TEST(NsysRealExportsTest, ASessionStarted5SecondsLaterStays5SecondsLater) {
  for (const char* file : {"nsysai_mock/mock.sqlite", "nsysai_h100_2gpu_1s/h100_2gpu_1s.sqlite",
                           "pipit_cloverleaf/cloverleaf.sqlite"}) {
    SCOPED_TRACE(file);
    const std::string original = testing::SharedTracePath(std::string("nsys/") + file);
    BUBBLESCOPE_NEED_SHARED(original);
    testing::TempDir dir;
    const bool has_clock = std::string(file).find("cloverleaf") == std::string::npos;
    const std::string moved = Edited(
        dir, "moved.sqlite", original,
        std::string(
            "UPDATE TARGET_INFO_SESSION_START_TIME SET utcEpochNs = utcEpochNs + 5000000000") +
            (has_clock ? ", systemClockNs = systemClockNs + 5000000000" : "") +
            "; UPDATE ANALYSIS_DETAILS SET startTime = startTime + 5000000000, stopTime = "
            "stopTime + 5000000000");
    absl::StatusOr<std::vector<Rank>> before = ReadNsysSqlite(original, NsysReadOptions{});
    absl::StatusOr<std::vector<Rank>> after = ReadNsysSqlite(moved, NsysReadOptions{});
    ASSERT_TRUE(before.ok()) << before.status();
    ASSERT_TRUE(after.ok()) << after.status();
    ASSERT_EQ(before->size(), after->size());
    for (size_t i = 0; i < before->size(); ++i) {
      EXPECT_EQ(Kernels((*after)[i]).first - Kernels((*before)[i]).first, 5'000'000'000);
      EXPECT_EQ(Kernels((*after)[i]).last - Kernels((*before)[i]).last, 5'000'000'000);
    }
  }
}

// Hostile cells in a real export are counted, each naming its table and row, and cost only
// their own event: a text start, a kernel name id StringIds lacks, a NULL globalPid, a text
// globalTid, a name that is no UTF-8, a payload larger than a cell may hold.
TEST(NsysRealExportsTest, HostileCellsAreCountedByTableAndRow) {
  const std::string original = testing::SharedTracePath("nsys/pipit_saxpy/saxpy.sqlite");
  BUBBLESCOPE_NEED_SHARED(original);
  testing::TempDir dir;
  const std::string path = Edited(
      dir, "hostile.sqlite", original,
      "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET start = 'soon' WHERE rowid = 1;"
      "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET demangledName = 99999999 WHERE rowid = 2;"
      "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET globalPid = NULL WHERE rowid = 3;"
      "UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET globalTid = 'main' WHERE rowid = 4;"
      "UPDATE NVTX_EVENTS SET text = CAST(x'41ff42' AS TEXT) WHERE rowid = (SELECT MIN(rowid) "
      "FROM NVTX_EVENTS WHERE text IS NOT NULL AND eventType = 59);"
      "ALTER TABLE NVTX_EVENTS ADD COLUMN binaryData BLOB;"
      "UPDATE NVTX_EVENTS SET binaryData = zeroblob(17 * 1024 * 1024) WHERE rowid = (SELECT "
      "MAX(rowid) FROM NVTX_EVENTS WHERE eventType = 59)");
  absl::StatusOr<std::vector<Rank>> ranks = ReadNsysSqlite(path, NsysReadOptions{});
  ASSERT_TRUE(ranks.ok()) << ranks.status();
  ASSERT_EQ(ranks->size(), 1u);
  const ImportStats& stats = ranks->front().stats;
  // The text start, the text globalTid, the ill-formed name and the oversized payload.
  EXPECT_EQ(stats.count(ImportCounter::kWrongFieldType), 4u);
  EXPECT_EQ(stats.first_where(ImportCounter::kWrongFieldType), "CUPTI_ACTIVITY_KIND_KERNEL row 1");
  EXPECT_EQ(stats.count(ImportCounter::kMissingField), 1u);  // the NULL globalPid
  EXPECT_EQ(stats.first_where(ImportCounter::kMissingField), "CUPTI_ACTIVITY_KIND_KERNEL row 3");
  EXPECT_EQ(stats.count(ImportCounter::kBadId), 1u);  // the name id pointing nowhere
  EXPECT_EQ(stats.first_where(ImportCounter::kBadId), "CUPTI_ACTIVITY_KIND_KERNEL row 2");
  EXPECT_TRUE(stats.HasAtLeast(Severity::kError));  // --strict refuses
  // Of the 5 kernels, the text start and the NULL process are left out; the unnamed one kept.
  EXPECT_EQ(Kernels(ranks->front()).count, 3u);
}

// A copy whose schema lacks every optional table and column is still read: only the kernels
// matter. Without the kernel table the file is refused, in one line naming it.
TEST(NsysRealExportsTest, OnlyAMissingKernelTableRefusesTheFile) {
  const std::string original = testing::SharedTracePath("nsys/nsysai_mock/mock.sqlite");
  BUBBLESCOPE_NEED_SHARED(original);
  testing::TempDir dir;
  const std::string stripped = Edited(
      dir, "stripped.sqlite", original,
      "DROP TABLE TARGET_INFO_GPU; DROP TABLE TARGET_INFO_SESSION_START_TIME; DROP TABLE "
      "ANALYSIS_DETAILS; DROP TABLE META_DATA_EXPORT; DROP TABLE META_DATA_CAPTURE; DROP TABLE "
      "CUPTI_ACTIVITY_KIND_RUNTIME; DROP INDEX _nsysai_kernel_corr; ALTER TABLE "
      "CUPTI_ACTIVITY_KIND_KERNEL DROP COLUMN "
      "correlationId; ALTER TABLE CUPTI_ACTIVITY_KIND_KERNEL DROP COLUMN demangledName");
  absl::StatusOr<std::vector<Rank>> ranks = ReadNsysSqlite(stripped, NsysReadOptions{});
  ASSERT_TRUE(ranks.ok()) << ranks.status();
  EXPECT_EQ(Kernels(ranks->front()).count, 2u);
  EXPECT_EQ(ranks->front().time_base, "as_recorded");
  const std::string no_kernels =
      Edited(dir, "no_kernels.sqlite", original, "DROP TABLE CUPTI_ACTIVITY_KIND_KERNEL");
  absl::StatusOr<std::vector<Rank>> refused = ReadNsysSqlite(no_kernels, NsysReadOptions{});
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("no CUPTI_ACTIVITY_KIND_KERNEL table"),
            std::string_view::npos)
      << refused.status();
}

// A -wal beside a real export that is no SQLite log is not read: said, as a cut file, so that
// --strict refuses (a real log is read: nsys_export_edges_test.cc).
TEST(NsysRealExportsTest, AWriteAheadLogThatIsNoLogIsSaid) {
  const std::string original = testing::SharedTracePath("nsys/nsysai_mock/mock.sqlite");
  BUBBLESCOPE_NEED_SHARED(original);
  testing::TempDir dir;
  const std::string path = dir.Write("wal.sqlite", testing::ReadFile(original));
  dir.Write("wal.sqlite-wal", std::string(4096, 'w'));
  absl::StatusOr<std::vector<Rank>> ranks = ReadNsysSqlite(path, NsysReadOptions{});
  ASSERT_TRUE(ranks.ok()) << ranks.status();
  const ImportStats& stats = ranks->front().stats;
  EXPECT_EQ(stats.count(ImportCounter::kTruncated), 1u);
  EXPECT_NE(stats.truncation_detail().find("wal.sqlite-wal holds 4096 bytes"), std::string::npos)
      << stats.truncation_detail();
}

}  // namespace
}  // namespace bubblescope
