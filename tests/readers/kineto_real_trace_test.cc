// The reader on real third-party traces (../shared/traces), and on every kind of cut of one.
// Expected counts come from independent Python counts over the decompressed JSON, e.g.
//   zcat sampled_rank-0.json.gz | python3 -c 'import json,sys; ev=json.load(sys.stdin)
//   ["traceEvents"]; k=[e for e in ev if e.get("cat")=="kernel"]; print(len(k),
//   sum("nccl" in e["name"].lower() for e in k))'
#include <algorithm>
#include <filesystem>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "reader_test_util.h"

namespace bubblescope::testing {
namespace {

constexpr char kHtaRank0[] = "hta_trace_filter_2rank/sampled_rank-0.json.gz";
constexpr char kAmdRocm[] = "hta_amd_mi250_rocm/mi250_minitoy_train_ROCm6_2_kineto.json.gz";
constexpr char kDlrmWorker0[] = "param_dlrm_8rank/worker0_step_12.1694128201545.pt.trace.json.gz";

std::optional<std::string> LoadShared(const char* relative) {
  const std::string path = SharedTracePath(relative);
  if (!FileExists(path)) return std::nullopt;
  return GunzipFile(path);
}

// Skips (developers) or fails (CI) when the shared trace is missing, else loads it into `var`.
#define LOAD_OR_SKIP(var, relative)                   \
  BUBBLESCOPE_NEED_SHARED(SharedTracePath(relative)); \
  const std::optional<std::string> var = LoadShared(relative)

TEST(KinetoRealTraceTest, HtaRank0) {
  LOAD_OR_SKIP(text, kHtaRank0);
  const ReadResult result = ReadJson(*text, kHtaRank0);
  ASSERT_TRUE(result.status.ok()) << result.status;
  const Rank& rank = result.rank;
  EXPECT_EQ(rank.rank, 0);
  EXPECT_EQ(rank.world_size, 128);
  EXPECT_EQ(rank.backend, "nccl");
  EXPECT_EQ(rank.pid, 4037);
  // Python: 1154 "kernel" events, 10 of them NCCL (ncclKernel_SendRecv_*).
  EXPECT_EQ(IntervalCount(rank, IntervalKind::kComputeKernel) +
                IntervalCount(rank, IntervalKind::kCommKernel),
            1154u);
  EXPECT_EQ(IntervalCount(rank, IntervalKind::kCommKernel), 10u);
  EXPECT_EQ(IntervalCount(rank, IntervalKind::kMemcpy), 40u);
  EXPECT_EQ(IntervalCount(rank, IntervalKind::kMemset), 10u);
  EXPECT_EQ(IntervalCount(rank, IntervalKind::kRuntime), 1204u);
  // 2329 cpu_op events, 18 of them c10d collectives or record_param_comms.
  EXPECT_EQ(IntervalCount(rank, IntervalKind::kCpuCommOp), 18u);
  EXPECT_EQ(IntervalCount(rank, IntervalKind::kCpuOp), 2311u);
  EXPECT_EQ(rank.annotations.size(), 73u);
  // GPU streams (0,7) (0,23) (0,25) (0,84) (0,203); CPU threads 4037/4037 and 4037/23695.
  EXPECT_EQ(rank.timelines.size(), 7u);
  EXPECT_NE(FindTimeline(rank, TimelineKind::kGpuStream, 0, 203), nullptr);
  EXPECT_NE(FindTimeline(rank, TimelineKind::kCpuThread, 4037, 23695), nullptr);
  ASSERT_EQ(rank.steps.size(), 2u);
  EXPECT_EQ(rank.steps[0].number, 551);
  EXPECT_EQ(rank.steps[0].start, 1682725898079292000);
  EXPECT_EQ(rank.steps[0].end, 1682725898686604000);  // ts + 607312.0 us
  EXPECT_EQ(rank.steps[1].number, 552);
  EXPECT_EQ(rank.steps[1].end, 1682725899309581000);
  for (const Interval* interval : AllIntervals(rank)) {
    if (IsDeviceKind(interval->kind) || interval->kind == IntervalKind::kRuntime) {
      EXPECT_NE(interval->correlation, 0);
    }
  }
  EXPECT_EQ(rank.stats.count(ImportCounter::kIgnoredCategory), 1u);  // the "Trace" span
  EXPECT_FALSE(rank.stats.HasAtLeast(Severity::kWarning));
}

// ROCm (roctracer) writes the stream of HIP runtime calls as text ("0x0"); read as a handle, the
// launches stay and every GPU op keeps its launch. Python: 21 cuda_runtime events (hipLaunchKernel,
// hipMemcpyWithStream, ...), 14 kernels and 2 memcpys, each with a runtime event's correlation.
TEST(KinetoRealTraceTest, AmdRocmStreamHandlesAsText) {
  LOAD_OR_SKIP(text, kAmdRocm);
  const ReadResult result = ReadJson(*text, kAmdRocm);
  ASSERT_TRUE(result.status.ok()) << result.status;
  const Rank& rank = result.rank;
  EXPECT_EQ(IntervalCount(rank, IntervalKind::kRuntime), 21u);
  EXPECT_EQ(IntervalCount(rank, IntervalKind::kComputeKernel), 14u);
  EXPECT_EQ(IntervalCount(rank, IntervalKind::kMemcpy), 2u);
  std::set<int64_t> launches;
  for (const Interval* interval : AllIntervals(rank)) {
    if (interval->kind == IntervalKind::kRuntime) launches.insert(interval->correlation);
  }
  for (const Interval* interval : AllIntervals(rank)) {
    if (IsDeviceKind(interval->kind)) {
      EXPECT_TRUE(launches.contains(interval->correlation));
    }
  }
  EXPECT_EQ(rank.stats.count(ImportCounter::kUnmatchedFlow), 0u);
  EXPECT_FALSE(rank.stats.HasAtLeast(Severity::kWarning));
}

TEST(KinetoRealTraceTest, DlrmWorker0) {
  LOAD_OR_SKIP(text, kDlrmWorker0);
  const ReadResult result = ReadJson(*text, kDlrmWorker0);
  ASSERT_TRUE(result.status.ok()) << result.status;
  const Rank& rank = result.rank;
  EXPECT_EQ(rank.rank, 0);
  EXPECT_EQ(rank.world_size, 8);
  ASSERT_EQ(rank.devices.size(), 8u);
  EXPECT_EQ(rank.devices[7].id, 7);
  EXPECT_EQ(rank.devices[0].name, "Tesla V100-SXM2-32GB");
  EXPECT_EQ(rank.devices[0].total_memory_bytes, 34079899648);
  EXPECT_EQ(rank.devices[0].multiprocessors, 80);
  // Python: 245 kernels, 8 NCCL (5 SendRecv, 3 AllReduce); 525 cuda_runtime; 21 comm cpu ops
  // of 1633; 786 ac2g flows, each sitting on a launch or a GPU op.
  EXPECT_EQ(IntervalCount(rank, IntervalKind::kCommKernel), 8u);
  EXPECT_EQ(IntervalCount(rank, IntervalKind::kComputeKernel), 237u);
  EXPECT_EQ(IntervalCount(rank, IntervalKind::kRuntime), 525u);
  EXPECT_EQ(IntervalCount(rank, IntervalKind::kCpuCommOp), 21u);
  EXPECT_EQ(IntervalCount(rank, IntervalKind::kCpuOp), 1612u);
  EXPECT_EQ(rank.stats.count(ImportCounter::kUnmatchedFlow), 0u);
  ASSERT_EQ(rank.steps.size(), 1u);
  EXPECT_EQ(rank.steps[0].number, 10);
  EXPECT_EQ(rank.steps[0].start, 1694128201426674000);
  EXPECT_EQ(rank.steps[0].end, 1694128201441129000);
  size_t sendrecv = 0;
  size_t allreduce = 0;
  for (const CommInfo& comm : rank.comms) {
    sendrecv += comm.kind == CommKind::kSendRecv;
    allreduce += comm.kind == CommKind::kAllReduce;
  }
  EXPECT_EQ(sendrecv, 5u);
  EXPECT_GE(allreduce, 3u);  // the 3 kernels, plus c10d::allreduce_ CPU ops
}

// Reads every prefix of `text` at `cuts` (sorted): each gives an error or a rank with no more
// events than the whole text and no fewer than any shorter prefix that was read. Returns how many
// prefixes were read.
size_t CheckCuts(const std::string& text, const std::vector<size_t>& cuts, size_t full_events,
                 size_t events_start) {
  KinetoReader reader;
  size_t previous = 0;
  size_t read_ok = 0;
  for (size_t cut : cuts) {
    const simdjson::padded_string prefix(text.data(), cut);
    Rank rank;
    const absl::Status status = reader.Read("cut.json", prefix, &rank);
    if (!status.ok()) {
      EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << "cut at " << cut;
      continue;
    }
    ++read_ok;
    const size_t events = ModelledEventCount(rank);
    EXPECT_LE(events, full_events) << "cut at " << cut;
    EXPECT_GE(events, previous) << "cut at " << cut;
    previous = events;
    EXPECT_EQ(rank.stats.count(ImportCounter::kTruncated), 1u) << "cut at " << cut;
    if (cut > events_start) {
      EXPECT_EQ(rank.rank, 0) << "cut at " << cut;  // distributedInfo comes before the events
      EXPECT_EQ(rank.devices.size(), 8u) << "cut at " << cut;
    }
  }
  return read_ok;
}

std::vector<size_t> SortedCuts(size_t size, size_t uniform, size_t random_count) {
  std::vector<size_t> cuts;
  for (size_t i = 0; i < uniform; ++i) cuts.push_back(size * i / uniform);
  std::mt19937_64 random(20240611);
  std::uniform_int_distribution<size_t> offset(0, size - 1);
  for (size_t i = 0; i < random_count; ++i) cuts.push_back(offset(random));
  for (size_t tail = 1; tail <= 4; ++tail) cuts.push_back(size - tail);
  std::sort(cuts.begin(), cuts.end());
  return cuts;
}

// The whole file, coarsely: cuts in the header, the events and the members after them.
TEST(KinetoRealTraceTest, CutsOfTheWholeFile) {
  LOAD_OR_SKIP(text, kDlrmWorker0);
  const ReadResult full = ReadJson(*text);
  ASSERT_TRUE(full.status.ok()) << full.status;
  const size_t events_start = text->find("\"traceEvents\"");
  ASSERT_NE(events_start, std::string::npos);
  const std::vector<size_t> cuts = SortedCuts(text->size(), 40, 0);
  const size_t read_ok = CheckCuts(*text, cuts, ModelledEventCount(full.rank), events_start);
  EXPECT_GT(read_ok, cuts.size() / 2);
}

// Finely, on the first ~100 kB of the same file (header and ~450 real events, closed after a
// complete event), so hundreds of cuts stay fast under sanitizers: every 1/200 and 300 random.
TEST(KinetoRealTraceTest, ManyCutsOfARealPrefix) {
  LOAD_OR_SKIP(text, kDlrmWorker0);
  const size_t event_end = text->find("\n  },\n", 100000);
  ASSERT_NE(event_end, std::string::npos);
  const std::string prefix = text->substr(0, event_end) + "\n  }\n]}";
  const ReadResult full = ReadJson(prefix);
  ASSERT_TRUE(full.status.ok()) << full.status;
  EXPECT_EQ(full.rank.stats.count(ImportCounter::kTruncated), 0u);
  const size_t full_events = ModelledEventCount(full.rank);
  EXPECT_GT(full_events, 300u);
  const std::vector<size_t> cuts = SortedCuts(prefix.size(), 200, 300);
  const size_t read_ok = CheckCuts(prefix, cuts, full_events, prefix.find("\"traceEvents\""));
  EXPECT_GT(read_ok, cuts.size() / 2);
}

}  // namespace
}  // namespace bubblescope::testing
