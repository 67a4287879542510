// Reading a merged trace (readers/merged_trace.h) back as its ranks: pids mapped back to the
// ranks' own, times moved back onto each rank's clock, overlay events skipped and counted, and a
// layout that does not say where every event goes refused with the byte it is at.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "readers/kineto_event.h"
#include "readers/kineto_reader.h"
#include "simdjson.h"

namespace bubblescope {
namespace {

struct ReadBack {
  absl::Status status;
  std::vector<Rank> ranks;
  bool merged = false;
};

ReadBack ReadAll(const std::string& json) {
  KinetoReader reader;
  ReadBack result;
  const simdjson::padded_string padded(json);
  result.status = reader.ReadRanks("m.json", padded, &result.ranks, &result.merged);
  return result;
}

const Timeline* FindCpuThread(const Rank& rank, int64_t pid, int64_t tid) {
  for (const Timeline& timeline : rank.timelines) {
    if (timeline.kind == TimelineKind::kCpuThread && timeline.pid == pid && timeline.id == tid) {
      return &timeline;
    }
  }
  return nullptr;
}

// Rank 0 on the reference clock (offset 0): pid 1 was its process 100, pid 2 its GPU 0.
// Rank 3 runs 5 µs ahead (offset 5000 ns): pid 3 was the string pid "CPU functions"; pid 4
// holds events that had no pid. Pid 9 is rank 3's overlay.
const char kLayout[] =
    R"({"bubblescope_merged":{"version":1,"ranks":[)"
    R"({"rank":0,"source":"r0.json","clock_offset_ns":0,)"
    R"("processes":[{"pid":1,"original_pid":100},{"pid":2,"original_pid":0}],)"
    R"("distributedInfo":{"rank":0,"world_size":4,"backend":"nccl"}},)"
    R"({"rank":3,"source":"r3.json","clock_offset_ns":5000,"overlay_pid":9,)"
    R"("processes":[{"pid":3,"original_pid":"CPU functions"},{"pid":4,"original_pid":null}],)"
    R"("deviceProperties":[{"id":0,"name":"H100","totalGlobalMem":80}]}]},)";

TEST(MergedTraceTest, EachRankBackWithItsOwnPidsAndClock) {
  const std::string json = std::string(kLayout) + R"("traceEvents":[
    {"pid":1,"tid":7,"ph":"X","cat":"cpu_op","name":"aten::mm","ts":10,"dur":2},
    {"pid":2,"tid":7,"ph":"X","cat":"kernel","name":"gemm","ts":12,"dur":3,
     "args":{"device":0,"stream":7,"correlation":1}},
    {"pid":3,"tid":1,"ph":"X","cat":"cpu_op","name":"aten::add","ts":20.5,"dur":1},
    {"pid":9,"tid":1,"ph":"X","cat":"bubblescope_overlay","name":"fill","ts":0,"dur":5},
    {"pid":9,"tid":0,"ph":"M","name":"process_name","args":{"name":"rank 3: bubblescope"}},
    {"pid":4,"tid":1,"ph":"i","cat":"cpu_instant_event","name":"[memory]","ts":30,
     "args":{"Device Type":1,"Device Id":0,"Total Allocated":64,"Total Reserved":128}}
  ]})";
  ReadBack read = ReadAll(json);
  ASSERT_TRUE(read.status.ok()) << read.status;
  EXPECT_TRUE(read.merged);
  ASSERT_EQ(read.ranks.size(), 2u);

  const Rank& first = read.ranks[0];
  EXPECT_EQ(first.rank, 0);
  EXPECT_EQ(first.world_size, 4);
  EXPECT_EQ(first.backend, "nccl");
  EXPECT_EQ(first.source_path, "m.json");
  EXPECT_EQ(first.pid, 100);  // the first CPU op's pid, as its own file gave it
  const Timeline* cpu = FindCpuThread(first, 100, 7);
  ASSERT_NE(cpu, nullptr);
  ASSERT_EQ(cpu->intervals.size(), 1u);
  EXPECT_EQ(cpu->intervals[0].start, 10000);
  EXPECT_EQ(cpu->intervals[0].end, 12000);
  ASSERT_TRUE(first.HasGpuActivity());
  EXPECT_EQ(first.stats.count(ImportCounter::kOverlayEvent), 0u);

  const Rank& second = read.ranks[1];
  EXPECT_EQ(second.rank, 3);
  ASSERT_EQ(second.devices.size(), 1u);
  EXPECT_EQ(second.devices[0].name, "H100");
  // 20.5 µs on the merged clock is 25.5 µs on the rank's own, 5 µs ahead.
  const Timeline* string_pid = FindCpuThread(second, kineto::SyntheticId("CPU functions"), 1);
  ASSERT_NE(string_pid, nullptr);
  ASSERT_EQ(string_pid->intervals.size(), 1u);
  EXPECT_EQ(string_pid->intervals[0].start, 25500);
  EXPECT_EQ(string_pid->intervals[0].end, 26500);
  // The pid-less memory sample keeps no pid and moves like every other time.
  ASSERT_EQ(second.memory.size(), 1u);
  EXPECT_EQ(second.memory[0].time, 35000);
  EXPECT_EQ(second.memory[0].allocated_bytes, 64);
  // The overlay's slice and its process name: skipped, counted on the rank they belong to.
  EXPECT_EQ(second.stats.count(ImportCounter::kOverlayEvent), 2u);
  EXPECT_FALSE(second.HasGpuActivity());
}

// A rank's own event comes back whatever its category: a memory sample with the overlay's
// category is still the rank's memory sample. Only the overlay pids' events are the overlay's.
TEST(MergedTraceTest, OverlayEventsAreToldByTheirPidNotTheirCategory) {
  const std::string json = std::string(kLayout) + R"("traceEvents":[
    {"pid":1,"tid":7,"ph":"X","cat":"cpu_op","name":"aten::mm","ts":10,"dur":2},
    {"pid":1,"tid":7,"ph":"i","cat":"bubblescope_overlay","name":"[memory]","ts":11,
     "args":{"Device Type":0,"Total Allocated":8,"Total Reserved":16}}
  ]})";
  ReadBack read = ReadAll(json);
  ASSERT_TRUE(read.status.ok()) << read.status;
  EXPECT_EQ(read.ranks[0].stats.count(ImportCounter::kOverlayEvent), 0u);
  ASSERT_EQ(read.ranks[0].memory.size(), 1u);
  EXPECT_TRUE(read.ranks[0].memory[0].host);
  EXPECT_EQ(read.ranks[0].memory[0].time, 11000);
}

// A pipeline's ranks share one overlay process: its events are skipped, counted on the first rank
// that names it, and the others read as their own files had them.
TEST(MergedTraceTest, RanksOfAPipelineShareTheirOverlayPid) {
  const std::string json =
      R"({"bubblescope_merged":{"version":1,"ranks":[)"
      R"({"rank":0,"clock_offset_ns":0,"overlay_pid":3,"processes":[{"pid":1,"original_pid":10}]},)"
      R"({"rank":1,"clock_offset_ns":0,"overlay_pid":3,"processes":[{"pid":2,"original_pid":11}]}]},)"
      R"("traceEvents":[
    {"pid":1,"tid":7,"ph":"X","cat":"cpu_op","name":"aten::mm","ts":10,"dur":2},
    {"pid":2,"tid":7,"ph":"X","cat":"cpu_op","name":"aten::mm","ts":12,"dur":2},
    {"pid":3,"tid":0,"ph":"M","name":"process_name","args":{"name":"pipeline 0: bubblescope"}},
    {"pid":3,"tid":1,"ph":"X","cat":"bubblescope_overlay","name":"fill","ts":0,"dur":5},
    {"pid":3,"tid":4,"ph":"X","cat":"bubblescope_overlay","name":"fill","ts":0,"dur":7}
  ]})";
  ReadBack read = ReadAll(json);
  ASSERT_TRUE(read.status.ok()) << read.status;
  ASSERT_EQ(read.ranks.size(), 2u);
  EXPECT_EQ(read.ranks[0].stats.count(ImportCounter::kOverlayEvent), 3u);
  EXPECT_EQ(read.ranks[1].stats.count(ImportCounter::kOverlayEvent), 0u);
  EXPECT_NE(FindCpuThread(read.ranks[0], 10, 7), nullptr);
  EXPECT_NE(FindCpuThread(read.ranks[1], 11, 7), nullptr);
}

TEST(MergedTraceTest, EventOnAPidTheLayoutDoesNotNameIsCounted) {
  const std::string json = std::string(kLayout) + R"("traceEvents":[
    {"pid":1,"tid":7,"ph":"X","cat":"cpu_op","name":"aten::mm","ts":10,"dur":2},
    {"pid":77,"tid":7,"ph":"X","cat":"cpu_op","name":"aten::mm","ts":10,"dur":2},
    {"tid":7,"ph":"X","cat":"cpu_op","name":"aten::mm","ts":10,"dur":2}
  ]})";
  ReadBack read = ReadAll(json);
  ASSERT_TRUE(read.status.ok()) << read.status;
  const ImportStats& stats = read.ranks[0].stats;
  EXPECT_EQ(stats.count(ImportCounter::kBadId), 1u);
  EXPECT_EQ(stats.first_offset(ImportCounter::kBadId),
            static_cast<int64_t>(json.find("{\"pid\":77")));
  EXPECT_EQ(stats.count(ImportCounter::kMissingField), 1u);
}

// A merged trace of ranks 0 and 1, one event each, their layout entries holding `members0` and
// `members1` besides their rank and processes.
std::string TwoRanks(const std::string& members0, const std::string& members1) {
  return R"({"bubblescope_merged":{"version":1,"ranks":[{"rank":0,)" + members0 +
         R"("processes":[{"pid":1,"original_pid":100}]},{"rank":1,)" + members1 +
         R"("processes":[{"pid":2,"original_pid":100}]}]},"traceEvents":[)"
         R"({"pid":1,"tid":7,"ph":"X","cat":"cpu_op","name":"a","ts":10,"dur":2},)"
         R"({"pid":2,"tid":7,"ph":"X","cat":"cpu_op","name":"a","ts":10,"dur":2}]})";
}

// A rank whose own file was cut short is counted cut short again, at the member saying so.
TEST(MergedTraceTest, ARankCutShortInItsOwnFileStaysCutShort) {
  const std::string json = TwoRanks(R"("truncated":false,)", R"("truncated":true,)");
  ReadBack read = ReadAll(json);
  ASSERT_TRUE(read.status.ok()) << read.status;
  ASSERT_EQ(read.ranks.size(), 2u);
  EXPECT_EQ(read.ranks[0].stats.count(ImportCounter::kTruncated), 0u);
  EXPECT_EQ(read.ranks[1].stats.count(ImportCounter::kTruncated), 1u);
  EXPECT_EQ(read.ranks[1].stats.first_offset(ImportCounter::kTruncated),
            static_cast<int64_t>(json.find("true")));
}

// Each rank's host comes back from its entry (its own file's host_name), so ranks of one machine
// keep sharing their clock; a rank whose file named none has none.
TEST(MergedTraceTest, EachRankKeepsItsHost) {
  ReadBack read = ReadAll(TwoRanks(R"("host_name":"node-7",)", ""));
  ASSERT_TRUE(read.status.ok()) << read.status;
  ASSERT_EQ(read.ranks.size(), 2u);
  EXPECT_EQ(read.ranks[0].host, "node-7");
  EXPECT_EQ(read.ranks[1].host, "");
}

TEST(MergedTraceTest, ReadAsOneRankIsAnError) {
  const std::string json = std::string(kLayout) +
                           R"("traceEvents":[{"pid":1,"tid":7,"ph":"X","cat":"cpu_op",)"
                           R"("name":"aten::mm","ts":10,"dur":2}]})";
  KinetoReader reader;
  Rank rank;
  const simdjson::padded_string padded(json);
  const absl::Status status = reader.Read("m.json", padded, &rank);
  EXPECT_EQ(status.message(), "m.json: byte 0: a merged trace of 2 ranks, read as one rank");
}

TEST(MergedTraceTest, APerRankTraceIsOneRankNotMerged) {
  ReadBack read = ReadAll(
      R"({"traceEvents":[{"pid":1,"tid":7,"ph":"X","cat":"cpu_op","name":"a","ts":1,"dur":2}]})");
  ASSERT_TRUE(read.status.ok()) << read.status;
  EXPECT_FALSE(read.merged);
  ASSERT_EQ(read.ranks.size(), 1u);
  EXPECT_EQ(read.ranks[0].rank, -1);
}

struct BadLayout {
  std::string json;
  std::string at;  // the text whose first byte the error names
  std::string what;
};

TEST(MergedTraceTest, ALayoutThatDoesNotSayWhereEventsGoIsRefusedAtItsByte) {
  const std::string events = R"("traceEvents":[{"pid":1,"tid":1,"ph":"X","cat":"cpu_op",)"
                             R"("name":"a","ts":1,"dur":2}]})";
  const std::vector<BadLayout> cases = {
      {R"({"traceEvents":[],"bubblescope_merged":{"version":1,"ranks":[]}})", "{\"version\"",
       "bubblescope_merged after traceEvents"},
      {R"({"bubblescope_merged":{"version":2,"ranks":[{"rank":0}]},)" + events, "2,",
       "bubblescope_merged: version 2 is not one this build reads (1)"},
      {R"({"bubblescope_merged":[1],)" + events, "[1]", "bubblescope_merged: not an object"},
      {R"({"bubblescope_merged":{"version":1,"ranks":[]},)" + events, "{\"version\"",
       "bubblescope_merged: no ranks named"},
      {R"({"bubblescope_merged":{"version":1,"ranks":[{"processes":[]}]},)" + events,
       "{\"processes\"", "bubblescope_merged: a rank entry without a rank id"},
      {R"({"bubblescope_merged":{"version":1,"ranks":[{"rank":0},{"rank":0}]},)" + events, "0}]},",
       "bubblescope_merged: rank 0 named twice"},
      {R"({"bubblescope_merged":{"version":1,"ranks":[{"rank":0,"processes":[)"
       R"({"pid":1,"original_pid":5},{"pid":1,"original_pid":6}]}]},)" +
           events,
       "{\"pid\":1,\"original_pid\":6", "bubblescope_merged: pid 1 named twice"},
      {R"({"bubblescope_merged":{"version":1,"ranks":[{"rank":0,"overlay_pid":1,"processes":[)"
       R"({"pid":1,"original_pid":5}]}]},)" +
           events,
       "{\"pid\":1,\"original_pid\":5", "bubblescope_merged: pid 1 named twice"},
      {R"({"bubblescope_merged":{"version":1,"ranks":[{"rank":0,"processes":[)"
       R"({"pid":1,"original_pid":[5]}]}]},)" +
           events,
       "[5]", "bubblescope_merged: an original pid is not an integer, string or null"},
      {R"({"bubblescope_merged":{"version":1,"ranks":[{"rank":0,"truncated":1}]},)" + events, "1}]",
       "bubblescope_merged: truncated is not true or false"},
      {R"({"bubblescope_merged":{"version":1,"ranks":[{"rank":0,"host_name":7}]},)" + events, "7}]",
       "bubblescope_merged: host_name is not a string"},
      {R"({"bubblescope_merged":{"version":1,"ranks":[{"rank":0,"clock_offset_ns":"x"}]},)" +
           events,
       "\"x\"", "bubblescope_merged: a clock offset is not an integer"},
  };
  for (const BadLayout& bad : cases) {
    SCOPED_TRACE(bad.json);
    ReadBack read = ReadAll(bad.json);
    ASSERT_FALSE(read.status.ok());
    EXPECT_TRUE(absl::IsInvalidArgument(read.status)) << read.status;
    const size_t at = bad.json.find(bad.at);
    EXPECT_EQ(read.status.message(), "m.json: byte " + std::to_string(at) + ": " + bad.what);
  }
}

}  // namespace
}  // namespace bubblescope
