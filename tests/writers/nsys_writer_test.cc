// The Nsight Systems writer, checked on the file itself with SQLite (not through bubblescope's
// reader): the tables an export of this rank holds, the clock, the serialised ids, the names
// with their API versions, NCCL's domain, ranges and payload bytes; then the same file read back
// by the reader.
#include "writers/nsys_writer.h"

#include <sqlite3.h>

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "readers/nsys_reader.h"
#include "support/test_files.h"

namespace bubblescope {
namespace {

constexpr int64_t kPid = 4242;
constexpr int64_t kTid = 77;
constexpr int64_t kUtcOfZero = 1'700'000'000'000'000'000;

// Rank 1 of 2: one launch, the send kernel it launched (4 KiB to rank 0), a GEMM, an operator,
// a user range and a profiler step.
Rank MakeRank() {
  Rank rank;
  rank.rank = 1;
  rank.world_size = 2;
  rank.pid = kPid;
  rank.host = "node-a";
  rank.devices.push_back(DeviceInfo{0, "NVIDIA H100", int64_t{80} << 30, 9, 0, 132});
  Timeline cpu{TimelineKind::kCpuThread, -1, kPid, kTid, {}};
  cpu.intervals.push_back(Interval{.start = 1000,
                                   .end = 9000,
                                   .name = rank.names.Intern("aten::mm"),
                                   .kind = IntervalKind::kCpuOp});
  cpu.intervals.push_back(Interval{.start = 1500,
                                   .end = 1600,
                                   .correlation = 5,
                                   .name = rank.names.Intern("cudaLaunchKernel"),
                                   .kind = IntervalKind::kRuntime});
  Timeline stream{TimelineKind::kGpuStream, 0, 0, 7, {}};
  rank.comms.push_back(CommInfo{.bytes = 4096, .peer = 0, .kind = CommKind::kSend});
  stream.intervals.push_back(Interval{.start = 2000,
                                      .end = 5000,
                                      .correlation = 5,
                                      .name = rank.names.Intern("ncclDevKernel_SendRecv(x)"),
                                      .comm = 0,
                                      .kind = IntervalKind::kCommKernel});
  stream.intervals.push_back(Interval{.start = 6000,
                                      .end = 8000,
                                      .correlation = 6,
                                      .name = rank.names.Intern("ampere_gemm"),
                                      .kind = IntervalKind::kComputeKernel});
  rank.timelines = {cpu, stream};
  rank.annotations.push_back(Annotation{
      .start = 900, .end = 9500, .name = rank.names.Intern("PP:F0"), .thread_or_stream = kTid});
  rank.steps.push_back(ProfilerStep{3, 800, 9800});
  return rank;
}

// Runs `sql` and returns every row's cells as text, cells joined by '|'.
std::vector<std::string> Query(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  sqlite3_stmt* statement = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db, sql.c_str(), -1, &statement, nullptr), SQLITE_OK) << sql;
  std::vector<std::string> rows;
  while (statement != nullptr && sqlite3_step(statement) == SQLITE_ROW) {
    std::string row;
    for (int c = 0; c < sqlite3_column_count(statement); ++c) {
      const unsigned char* text = sqlite3_column_text(statement, c);
      if (c > 0) row += "|";
      row += text != nullptr ? reinterpret_cast<const char*>(text) : "NULL";
    }
    rows.push_back(row);
  }
  sqlite3_finalize(statement);
  sqlite3_close(db);
  return rows;
}

class NsysWriterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = dir_.path() + "/rank1.sqlite";
    ASSERT_TRUE(WriteNsysSqlite(rank_, NsysWriteOptions{.utc_of_zero_ns = kUtcOfZero}, path_).ok());
  }
  testing::TempDir dir_;
  Rank rank_ = MakeRank();
  std::string path_;
};

TEST_F(NsysWriterTest, HoldsOnlyTheTablesWithRows) {
  EXPECT_EQ(Query(path_, "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name"),
            (std::vector<std::string>{
                "ANALYSIS_DETAILS", "CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_RUNTIME",
                "META_DATA_CAPTURE", "META_DATA_EXPORT", "NVTX_EVENTS", "NVTX_PAYLOAD_SCHEMAS",
                "NVTX_PAYLOAD_SCHEMA_ENTRIES", "PROCESSES", "StringIds", "TARGET_INFO_GPU",
                "TARGET_INFO_SESSION_START_TIME", "TARGET_INFO_SYSTEM_ENV"}));
}

TEST_F(NsysWriterTest, TimesIdsAndNamesAreAsNsysWritesThem) {
  // As nsys exports them: times from the session's start, which is utcEpochNs on the UTC epoch.
  EXPECT_EQ(
      Query(path_,
            "SELECT s.utcEpochNs + k.start, s.utcEpochNs + k.\"end\" FROM "
            "CUPTI_ACTIVITY_KIND_KERNEL k, TARGET_INFO_SESSION_START_TIME s ORDER BY k.start"),
      (std::vector<std::string>{
          std::to_string(kUtcOfZero + 2000) + "|" + std::to_string(kUtcOfZero + 5000),
          std::to_string(kUtcOfZero + 6000) + "|" + std::to_string(kUtcOfZero + 8000)}));
  // globalTid: pid and tid in 24-bit fields; the name with nsys's API version.
  EXPECT_EQ(Query(path_,
                  "SELECT r.globalTid / 16777216 % 16777216, r.globalTid % 16777216, "
                  "r.correlationId, s.value FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s "
                  "ON s.id = r.nameId"),
            std::vector<std::string>{"4242|77|5|cudaLaunchKernel_v7000"});
  EXPECT_EQ(Query(path_,
                  "SELECT k.globalPid / 16777216 % 16777216, s.value FROM "
                  "CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = "
                  "k.demangledName ORDER BY k.start"),
            (std::vector<std::string>{"4242|ncclDevKernel_SendRecv(x)", "4242|ampere_gemm"}));
  EXPECT_EQ(Query(path_, "SELECT value FROM TARGET_INFO_SYSTEM_ENV WHERE name = 'Hostname'"),
            std::vector<std::string>{"node-a"});
  // The operator as emit_nvtx names it; the user range and the step as they were pushed.
  EXPECT_EQ(Query(path_, "SELECT text FROM NVTX_EVENTS WHERE domainId = 0 ORDER BY start"),
            (std::vector<std::string>{"ProfilerStep#3", "PP:F0", "aten::mm, op_id = 1"}));
}

TEST_F(NsysWriterTest, NcclRangesCarryTheirPayloads) {
  EXPECT_EQ(Query(path_, "SELECT domainId, text FROM NVTX_EVENTS WHERE eventType = 75"),
            std::vector<std::string>{"1|NCCL"});
  // The communicator's creation (the world: 2 ranks, this one rank 1; 1 ms before the rank's
  // first event, the step at 800, so 1,000,700 ns before the launch), then the send around its
  // launch (1500..1600); each payload after the 32-byte header, little-endian, shown from its
  // ninth byte (after the communicator's id).
  EXPECT_EQ(
      Query(path_,
            "SELECT text, start - (SELECT MIN(start) FROM CUPTI_ACTIVITY_KIND_RUNTIME), "
            "hex(substr(binaryData, 1, 32)), hex(substr(binaryData, 41)) FROM NVTX_EVENTS "
            "WHERE domainId = 1 AND eventType = 59 ORDER BY start"),
      (std::vector<std::string>{"ncclCommInitRank|-1000700|"
                                "0100000000000000020000010000000018000000000000002000000000000000|"
                                "02000000"
                                "01000000"
                                "00000000"
                                "00000000",  // ranks, rank, CUDA device, padding
                                "ncclSend|0|"
                                "01000000000000000A0000010000000018000000000000002000000000000000|"
                                "0010000000000000"
                                "00000000"
                                "00000000"}));  // 4096 bytes, peer 0, padding
  // Both name the same communicator.
  EXPECT_EQ(Query(path_,
                  "SELECT COUNT(DISTINCT hex(substr(binaryData, 33, 8))) FROM NVTX_EVENTS "
                  "WHERE domainId = 1 AND eventType = 59"),
            std::vector<std::string>{"1"});
  EXPECT_EQ(Query(path_,
                  "SELECT name, type, COALESCE(offset, 0) FROM NVTX_PAYLOAD_SCHEMA_ENTRIES "
                  "WHERE schemaId = 16777226 ORDER BY idx"),
            (std::vector<std::string>{"NCCL communicator ID|18|0", "Message size [bytes]|22|8",
                                      "Peer rank|5|16"}));
}

TEST_F(NsysWriterTest, ReadsBackAsTheRankItWas) {
  absl::StatusOr<std::vector<Rank>> read = ReadNsysSqlite(path_, NsysReadOptions{});
  ASSERT_TRUE(read.ok()) << read.status();
  ASSERT_EQ(read->size(), 1u);
  const Rank& rank = read->front();
  EXPECT_EQ(rank.rank, 1);
  EXPECT_EQ(rank.world_size, 2);
  EXPECT_EQ(rank.pid, kPid);
  EXPECT_EQ(rank.host, "node-a");
  ASSERT_EQ(rank.steps.size(), 1u);
  EXPECT_EQ(rank.steps[0].number, 3);
  EXPECT_EQ(rank.steps[0].start, kUtcOfZero + 800);
  const Timeline* stream = nullptr;
  for (const Timeline& timeline : rank.timelines) {
    if (timeline.kind == TimelineKind::kGpuStream) stream = &timeline;
  }
  ASSERT_NE(stream, nullptr);
  EXPECT_EQ(stream->id, 7);
  ASSERT_EQ(stream->intervals.size(), 2u);
  const Interval& send = stream->intervals[0];
  EXPECT_EQ(send.start, kUtcOfZero + 2000);
  EXPECT_EQ(send.correlation, 5);
  ASSERT_NE(rank.comm(send), nullptr);
  EXPECT_EQ(rank.comm(send)->kind, CommKind::kSend);  // from the ncclSend call that launched it
  EXPECT_EQ(rank.comm(send)->peer, 0);
  EXPECT_EQ(rank.comm(send)->bytes, 4096);
  EXPECT_EQ(stream->intervals[1].kind, IntervalKind::kComputeKernel);
}

// One report per rank, as nsys under each rank's launcher writes them: each rank's session
// starts on its own (0.5 s before its first event, and 3 s more per rank id here), on the UTC
// epoch and on its host's own clock (systemClockNs = ANALYSIS_DETAILS.startTime); the
// launcher's RANK and WORLD_SIZE in the launched process's environment.
TEST(NsysWriterSessionTest, EachRankHasItsOwnSessionStartOnItsHostsClock) {
  testing::TempDir dir;
  const NsysWriteOptions options{.utc_of_zero_ns = kUtcOfZero,
                                 .session_lead_step_ns = 3'000'000'000};
  Rank rank1 = MakeRank();
  Rank rank0 = MakeRank();
  rank0.rank = 0;
  Rank other_host = MakeRank();
  other_host.host = "node-b";
  const std::string path0 = dir.path() + "/rank0.sqlite";
  const std::string path1 = dir.path() + "/rank1.sqlite";
  const std::string path_b = dir.path() + "/b.sqlite";
  ASSERT_TRUE(WriteNsysSqlite(rank0, options, path0).ok());
  ASSERT_TRUE(WriteNsysSqlite(rank1, options, path1).ok());
  ASSERT_TRUE(WriteNsysSqlite(other_host, options, path_b).ok());
  const char* kSession = "SELECT utcEpochNs, systemClockNs FROM TARGET_INFO_SESSION_START_TIME";
  auto number = [](const std::string& row, int cell) {
    size_t at = 0;
    for (int i = 0; i < cell; ++i) at = row.find('|', at) + 1;
    return std::stoll(row.substr(at, row.find('|', at) - at));
  };
  const std::string s0 = Query(path0, kSession).at(0);
  const std::string s1 = Query(path1, kSession).at(0);
  const std::string sb = Query(path_b, kSession).at(0);
  // The first event (the step, at 800) 0.5 s after rank 0's session started, 3.5 s after
  // rank 1's.
  EXPECT_EQ(number(s0, 0), kUtcOfZero + 800 - 500'000'000);
  EXPECT_EQ(number(s1, 0), kUtcOfZero + 800 - 3'500'000'000);
  // One host, one clock: the two starts lie as far apart on it as on the UTC epoch.
  EXPECT_EQ(number(s0, 1) - number(s1, 1), 3'000'000'000);
  // Another host's clock started elsewhere (same session start on the UTC epoch as rank 1's).
  EXPECT_NE(number(sb, 1), number(s1, 1));
  EXPECT_EQ(Query(path1, "SELECT startTime = " + std::to_string(number(s1, 1)) +
                             ", stopTime - startTime = duration, duration FROM ANALYSIS_DETAILS"),
            std::vector<std::string>{"1|1|3600009000"});  // 3.5 s + 800..9800, then 0.1 s
  EXPECT_EQ(Query(path1,
                  "SELECT value FROM META_DATA_CAPTURE WHERE name = "
                  "'PROCESS_0:ENVIRONMENT_VARIABLE' ORDER BY value"),
            (std::vector<std::string>{"LOCAL_RANK=\"1\"", "RANK=\"1\"", "WORLD_SIZE=\"2\""}));
  // Read back: the events where they were, each rank named by its environment.
  for (const auto& [path, id] : {std::pair{path0, 0}, std::pair{path1, 1}}) {
    absl::StatusOr<std::vector<Rank>> read = ReadNsysSqlite(path, NsysReadOptions{});
    ASSERT_TRUE(read.ok()) << read.status();
    EXPECT_EQ(read->front().rank, id);
    EXPECT_EQ(read->front().rank_source, "environment:RANK");
    EXPECT_EQ(read->front().time_base, "session_start");
    EXPECT_EQ(read->front().steps.at(0).start, kUtcOfZero + 800);
  }
}

// The export schemas of 2022 and 2024 beside 2026's: the tables and columns those releases
// have, each read back to the same times.
TEST(NsysWriterSessionTest, WritesTheSchemasOf2022And2024) {
  testing::TempDir dir;
  const Rank rank = MakeRank();
  for (NsysSchema schema : {NsysSchema::k2022, NsysSchema::k2024, NsysSchema::k2026}) {
    SCOPED_TRACE(static_cast<int>(schema));
    const std::string path = dir.path() + "/rank1.sqlite";
    ASSERT_TRUE(WriteNsysSqlite(
                    rank, NsysWriteOptions{.utc_of_zero_ns = kUtcOfZero, .schema = schema}, path)
                    .ok());
    const std::vector<std::string> columns = Query(
        path,
        "SELECT group_concat(name, ',') FROM pragma_table_info('TARGET_INFO_SESSION_START_TIME')");
    EXPECT_EQ(columns.at(0), schema == NsysSchema::k2026
                                 ? "utcEpochNs,utcTime,localTime,systemClockNs"
                                 : "utcEpochNs,utcTime,localTime");
    const std::vector<std::string> metadata =
        Query(path,
              "SELECT name FROM sqlite_master WHERE name IN ('EXPORT_META_DATA', "
              "'META_DATA_EXPORT', 'META_DATA_CAPTURE') ORDER BY name");
    const std::vector<std::string> expected =
        schema == NsysSchema::k2022
            ? std::vector<std::string>{"EXPORT_META_DATA"}
            : std::vector<std::string>{"META_DATA_CAPTURE", "META_DATA_EXPORT"};
    EXPECT_EQ(metadata, expected);
    absl::StatusOr<std::vector<Rank>> read = ReadNsysSqlite(path, NsysReadOptions{});
    ASSERT_TRUE(read.ok()) << read.status();
    EXPECT_EQ(read->front().steps.at(0).start, kUtcOfZero + 800);
    // 2022 has no META_DATA_CAPTURE, and NCCL's two-rank world could as well be a pair's
    // point-to-point communicator: no rank (the loader takes the file's name).
    EXPECT_EQ(read->front().rank, schema == NsysSchema::k2022 ? -1 : 1);
    EXPECT_EQ(read->front().rank_source, schema == NsysSchema::k2022 ? "none" : "environment:RANK");
  }
}

}  // namespace
}  // namespace bubblescope
