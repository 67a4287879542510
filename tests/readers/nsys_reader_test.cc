// The Nsight Systems SQLite reader on real exports (tests/data/nsys, see its README) and on
// files that are not exports. The expected figures were counted with the sqlite3 shell from the
// files themselves (queries beside each).
#include "readers/nsys_reader.h"

#include <sqlite3.h>

#include <algorithm>
#include <cstdint>
#include <string>

#include "gtest/gtest.h"
#include "support/test_files.h"

namespace bubblescope {
namespace {

std::string Fixture(const std::string& name) {
  return std::string(BUBBLESCOPE_SOURCE_DIR) + "/tests/data/nsys/" + name;
}

size_t CountKind(const Rank& rank, IntervalKind kind) {
  size_t count = 0;
  for (const Timeline& timeline : rank.timelines) {
    count += static_cast<size_t>(
        std::count_if(timeline.intervals.begin(), timeline.intervals.end(),
                      [&](const Interval& interval) { return interval.kind == kind; }));
  }
  return count;
}

TimeNs FirstStart(const Rank& rank, IntervalKind kind) {
  TimeNs first = INT64_MAX;
  for (const Timeline& timeline : rank.timelines) {
    for (const Interval& interval : timeline.intervals) {
      if (interval.kind == kind) first = std::min(first, interval.start);
    }
  }
  return first;
}

// nsys 2026.2 (schema 3.25), two processes (pids 111, 112) of one FSDP job on two H100s, one
// second of it; exported without blobs, so no NCCL payloads: the ranks are numbered by GPU.
TEST(NsysReaderTest, TwoProcessExportBecomesTwoRanks) {
  absl::StatusOr<std::vector<Rank>> ranks =
      ReadNsysSqlite(Fixture("h100_2gpu_1s.sqlite"), NsysReadOptions{});
  ASSERT_TRUE(ranks.ok()) << ranks.status();
  ASSERT_EQ(ranks->size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    const Rank& rank = (*ranks)[i];
    SCOPED_TRACE(rank.pid);
    // SELECT globalPid, deviceId FROM CUPTI_ACTIVITY_KIND_KERNEL GROUP BY 1: 111 on 0, 112 on 1.
    EXPECT_EQ(rank.pid, 111 + static_cast<int64_t>(i));
    EXPECT_EQ(rank.rank, static_cast<int32_t>(i));
    EXPECT_EQ(rank.host, "modal");  // TARGET_INFO_SYSTEM_ENV Hostname
    // 1721 kernels (none NCCL), 452 copies, 11 memsets per process.
    EXPECT_EQ(CountKind(rank, IntervalKind::kComputeKernel), 1721u);
    EXPECT_EQ(CountKind(rank, IntervalKind::kCommKernel), 0u);
    EXPECT_EQ(CountKind(rank, IntervalKind::kMemcpy), 452u);
    EXPECT_EQ(CountKind(rank, IntervalKind::kMemset), 11u);
    // 2898 runtime calls per process (globalTid / 0x1000000 % 0x1000000 = the pid).
    EXPECT_EQ(CountKind(rank, IntervalKind::kRuntime), 2898u);
    // 8391 emit_nvtx ranges per process: 8389 operators ("aten::mul, op_id = 317048" becomes
    // the op aten::mul) and two "detach_, op_id = ..." without a namespace, annotations.
    EXPECT_EQ(CountKind(rank, IntervalKind::kCpuOp), 8389u);
    EXPECT_EQ(rank.annotations.size(), 2u);
    EXPECT_EQ(rank.name(rank.annotations[0].name), "detach_");
    for (const Timeline& timeline : rank.timelines) {
      EXPECT_TRUE(std::is_sorted(timeline.intervals.begin(), timeline.intervals.end(),
                                 [](const Interval& a, const Interval& b) {
                                   return a.start != b.start ? a.start < b.start : a.end > b.end;
                                 }));
    }
  }
  // Launches are named as Kineto names them: "cudaLaunchKernel_v7000" is cudaLaunchKernel.
  const Rank& first = (*ranks)[0];
  bool bare_launch = false;
  for (const Timeline& timeline : first.timelines) {
    for (const Interval& interval : timeline.intervals) {
      if (interval.kind == IntervalKind::kRuntime) {
        bare_launch |= first.name(interval.name) == "cudaLaunchKernel";
        EXPECT_EQ(first.name(interval.name).find("_v"), std::string_view::npos);
      }
    }
  }
  EXPECT_TRUE(bare_launch);
  // On the UTC epoch: utcEpochNs 1779630014975716426 + the first kernel's 155360295935 ns from
  // the session's start. The kernels (155.36 s to 156.32 s) lie both inside the capture's
  // 295.66 s and inside [startTime, stopTime] = [35.26 s, 330.91 s]: nsys's default taken.
  EXPECT_EQ(FirstStart(first, IntervalKind::kComputeKernel), 1779630014975716426 + 155360295935);
  EXPECT_EQ(first.time_base, "session_start");
  // Process 112's first kernel, 155360368270 on the same clock.
  EXPECT_EQ(FirstStart((*ranks)[1], IntervalKind::kComputeKernel),
            1779630014975716426 + 155360368270);
}

// nsys 2026.1 (schema 3.24): one process, two kernels, the GPU described in TARGET_INFO_GPU.
TEST(NsysReaderTest, ReadsTheGpuDescription) {
  absl::StatusOr<std::vector<Rank>> ranks =
      ReadNsysSqlite(Fixture("mock.sqlite"), NsysReadOptions{});
  ASSERT_TRUE(ranks.ok()) << ranks.status();
  ASSERT_EQ(ranks->size(), 1u);
  const Rank& rank = (*ranks)[0];
  EXPECT_EQ(rank.rank, -1);  // no NCCL records: the loader numbers it
  EXPECT_EQ(CountKind(rank, IntervalKind::kComputeKernel), 2u);
  ASSERT_EQ(rank.devices.size(), 1u);
  EXPECT_EQ(rank.devices[0].name, "NVIDIA GeForce RTX 3080");
  EXPECT_EQ(rank.devices[0].total_memory_bytes, 10736893952);
  EXPECT_EQ(rank.devices[0].compute_major, 8);
  EXPECT_EQ(rank.devices[0].compute_minor, 6);
  EXPECT_EQ(rank.devices[0].multiprocessors, 68);
  EXPECT_EQ(rank.source_path, Fixture("mock.sqlite"));
}

// Some exports name tables with a version suffix (CUPTI_ACTIVITY_KIND_KERNEL_V2): read as the
// documented table; the unversioned name wins over a versioned one.
TEST(NsysReaderTest, ReadsVersionedTableNames) {
  testing::TempDir dir;
  const std::string path = dir.Write("versioned.sqlite", testing::ReadFile(Fixture("mock.sqlite")));
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db,
                         "ALTER TABLE CUPTI_ACTIVITY_KIND_KERNEL RENAME TO "
                         "CUPTI_ACTIVITY_KIND_KERNEL_V3; CREATE TABLE "
                         "CUPTI_ACTIVITY_KIND_KERNEL_V2 AS SELECT * FROM "
                         "CUPTI_ACTIVITY_KIND_KERNEL_V3 LIMIT 1",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  absl::StatusOr<std::vector<Rank>> ranks = ReadNsysSqlite(path, NsysReadOptions{});
  ASSERT_TRUE(ranks.ok()) << ranks.status();
  ASSERT_EQ(ranks->size(), 1u);
  // The highest version: _V3 holds both kernels, _V2 one.
  EXPECT_EQ(CountKind((*ranks)[0], IntervalKind::kComputeKernel), 2u);
}

TEST(NsysReaderTest, NotSqliteIsOneLineNamingTheFile) {
  testing::TempDir dir;
  const std::string path = dir.Write("trace.sqlite", std::string(5000, 'x'));
  absl::StatusOr<std::vector<Rank>> ranks = ReadNsysSqlite(path, NsysReadOptions{});
  ASSERT_FALSE(ranks.ok());
  EXPECT_NE(ranks.status().message().find(path), std::string_view::npos) << ranks.status();
  EXPECT_EQ(ranks.status().message().find('\n'), std::string_view::npos);
}

// An SQLite database of something else: the export's first page, whose schema names a table the
// file then lacks, read as damaged; and a database with no StringIds at all.
TEST(NsysReaderTest, DamagedOrForeignSqliteIsAnErrorNotACrash) {
  testing::TempDir dir;
  const std::string whole = testing::ReadFile(Fixture("h100_2gpu_1s.sqlite"));
  ASSERT_GT(whole.size(), 1u << 20);
  for (size_t cut : {size_t{100}, size_t{4096}, size_t{65536}, size_t{1} << 20}) {
    SCOPED_TRACE(cut);
    const std::string path = dir.Write("cut.sqlite", whole.substr(0, cut));
    absl::StatusOr<std::vector<Rank>> ranks = ReadNsysSqlite(path, NsysReadOptions{});
    ASSERT_FALSE(ranks.ok());
    EXPECT_EQ(ranks.status().message().substr(0, path.size()), path) << ranks.status();
  }
  // The same bytes with every page after the first scrambled.
  std::string scrambled = whole;
  for (size_t i = 4096; i < scrambled.size(); i += 7) scrambled[i] = static_cast<char>(i * 31);
  const std::string path = dir.Write("scrambled.sqlite", scrambled);
  absl::StatusOr<std::vector<Rank>> ranks = ReadNsysSqlite(path, NsysReadOptions{});
  EXPECT_FALSE(ranks.ok());
}

// Through the loader's seam (readers/trace_reader.h): the export's two ranks, named by the file
// itself since there are several, with what could have named them for the loader's error.
TEST(NsysReaderTest, TheSeamReturnsTheExportsRanks) {
  NsysTraceReader reader;
  absl::StatusOr<FileRanks> file = reader.Read(Fixture("h100_2gpu_1s.sqlite"), ReaderOptions{});
  ASSERT_TRUE(file.ok()) << file.status();
  ASSERT_EQ(file->ranks.size(), 2u);
  EXPECT_EQ(file->ranks[0].pid, 111);
  EXPECT_EQ(file->ranks[1].pid, 112);
  EXPECT_TRUE(file->named_by_file);
  EXPECT_FALSE(file->bubblescope_merged);
  EXPECT_NE(file->rank_carriers.find("META_DATA_CAPTURE"), std::string::npos);

  testing::TempDir dir;
  const std::string path = dir.Write("notes.sqlite", std::string(5000, 'x'));
  absl::StatusOr<FileRanks> bad = reader.Read(path, ReaderOptions{});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message().substr(0, path.size()), path) << bad.status();
}

TEST(NsysReaderTest, SniffsByMagic) {
  NsysTraceReader reader;
  EXPECT_TRUE(reader.Sniff(std::string_view("SQLite format 3\0rest", 20), "run/trace.db"));
  EXPECT_FALSE(reader.Sniff("{\"traceEvents\": []}", "run/rank0.sqlite"));
  EXPECT_FALSE(reader.Sniff("SQLite format 3", "run/rank0.sqlite"));  // no NUL: not the magic
}

}  // namespace
}  // namespace bubblescope
