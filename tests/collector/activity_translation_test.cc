// CUPTI records, filled into a pool buffer exactly as CUPTI fills one, go through the same
// buffer-completed path as on a GPU (CollectorRuntime::ConsumeBuffer, walked by CUPTI's own
// cuptiActivityGetNextRecord, which needs no GPU); the trace file is read back by bubblescope's
// loader and checked field by field. Built once per CUPTI header set (CUDA 13, CUDA 12.x).
#include <unistd.h>

#include <cstring>
#include <memory>
#include <string>

#include "collector_runtime.h"
#include "collector_test_util.h"
#include "cupti_cursor.h"
#include "gtest/gtest.h"
#include "support/test_files.h"

namespace bubblescope::collector::testing {
namespace {

using bubblescope::testing::ReadFile;
using bubblescope::testing::TempDir;

constexpr uint64_t kBase = 1'700'000'000'000'000'000;  // CUPTI-like absolute ns

RuntimeHooks TestHooks() {
  RuntimeHooks hooks;
  hooks.clock = FakeClock;
  hooks.clock_source = "test";
  hooks.api_name = [](bool is_driver, uint32_t cbid) {
    return std::string(is_driver ? "cuLaunchKernel#" : "cudaLaunchKernel#") + std::to_string(cbid);
  };
  hooks.cursor = std::make_shared<CuptiCursor>();
  return hooks;
}

KernelRecord Kernel(const char* name, uint64_t start, uint64_t end, uint32_t stream,
                    uint32_t correlation) {
  KernelRecord kernel{};
  kernel.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  kernel.start = start;
  kernel.end = end;
  kernel.deviceId = 1;
  kernel.contextId = 1;
  kernel.streamId = stream;
  kernel.correlationId = correlation;
  kernel.gridX = 4;
  kernel.gridY = 1;
  kernel.gridZ = 1;
  kernel.blockX = 128;
  kernel.blockY = 1;
  kernel.blockZ = 1;
  kernel.name = name;
  return kernel;
}

MemoryRecord Memory(CUpti_ActivityMemoryOperationType operation, uint64_t bytes, uint64_t time,
                    CUpti_ActivityMemoryKind kind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE) {
  MemoryRecord memory{};
  memory.kind = CUPTI_ACTIVITY_KIND_MEMORY2;
  memory.memoryOperationType = operation;
  memory.memoryKind = kind;
  memory.address = 0x7f0000000000 + bytes;
  memory.bytes = bytes;
  memory.timestamp = time;
  memory.processId = static_cast<uint32_t>(getpid());
  memory.deviceId = 1;
  return memory;
}

MarkerRecord Marker(CUpti_ActivityFlag flag, uint32_t id, uint64_t time, const char* name) {
  MarkerRecord marker{};
  marker.kind = CUPTI_ACTIVITY_KIND_MARKER;
  marker.flags = flag;
  marker.timestamp = time;
  marker.id = id;
  marker.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
  marker.objectId.pt.processId = static_cast<uint32_t>(getpid());
  marker.objectId.pt.threadId = 99;
  marker.name = name;
  marker.domain = nullptr;
  return marker;
}

constexpr char kRunId[] = "20261125-132801-a1b2";

class ActivityTranslationTest : public ::testing::Test {
 protected:
  void TearDown() override { CollectorRuntime::Instance().Shutdown(); }

  void Start(const std::string& kinds = "") {
    std::map<std::string, std::string> env = {{"BUBBLESCOPE_OUTPUT_DIR", dir_.path() + "/out"},
                                              {"RANK", "1"},
                                              {"WORLD_SIZE", "2"},
                                              {"LOCAL_RANK", "1"},
                                              {"BUBBLESCOPE_RUN_ID", kRunId},
                                              {"BUBBLESCOPE_FLUSH_MS", "3600000"}};
    if (!kinds.empty()) env["BUBBLESCOPE_KINDS"] = kinds;
    ASSERT_TRUE(CollectorRuntime::Instance().Start(Env(env), TestHooks()));
  }

  TempDir dir_;
};

TEST_F(ActivityTranslationTest, EveryRecordKindReadBackExactly) {
  Start();
  CollectorRuntime& runtime = CollectorRuntime::Instance();
  uint8_t* buffer = runtime.pool()->Acquire();
  ASSERT_NE(buffer, nullptr);
  ActivityBufferFiller filler(buffer, runtime.pool()->buffer_bytes());

  DeviceRecord device{};
  device.kind = CUPTI_ACTIVITY_KIND_DEVICE;
  device.id = 1;
  device.name = "Test GPU";
  device.globalMemorySize = 80ull << 30;
  device.computeCapabilityMajor = 9;
  device.computeCapabilityMinor = 0;
  device.numMultiprocessors = 132;
  filler.Add(device);

  ApiRecord launch{};
  launch.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
  launch.cbid = 211;
  launch.start = kBase + 1'000;
  launch.end = kBase + 6'500;
  launch.processId = static_cast<uint32_t>(getpid());
  launch.threadId = 99;
  launch.correlationId = 42;
  filler.Add(launch);
  filler.Add(Kernel("_Z11gemm_kernelPKfPfi", kBase + 10'000, kBase + 60'123, 7, 42));
  filler.Add(Kernel("ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)", kBase + 70'000,
                    kBase + 90'000, 13, 44));

  MemcpyRecord memcpy{};
  memcpy.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
  memcpy.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
  memcpy.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
  memcpy.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  memcpy.bytes = 4096;
  memcpy.start = kBase + 5'000;
  memcpy.end = kBase + 8'000;
  memcpy.deviceId = 1;
  memcpy.streamId = 7;
  memcpy.correlationId = 43;
  filler.Add(memcpy);

  MemsetRecord memset{};
  memset.kind = CUPTI_ACTIVITY_KIND_MEMSET;
  memset.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  memset.bytes = 256;
  memset.start = kBase + 2'000;
  memset.end = kBase + 2'250;
  memset.deviceId = 1;
  memset.streamId = 9;
  memset.correlationId = 45;
  filler.Add(memset);

  filler.Add(Marker(CUPTI_ACTIVITY_FLAG_MARKER_START, 5, kBase + 500, "forward"));
  MarkerDataRecord color{};
  color.kind = CUPTI_ACTIVITY_KIND_MARKER_DATA;
  color.flags = CUPTI_ACTIVITY_FLAG_MARKER_COLOR_ARGB;
  color.id = 5;
  color.color = 0xff00ff00;
  filler.Add(color);
  filler.Add(Marker(CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS, 6, kBase + 600, "mark"));
  filler.Add(Marker(CUPTI_ACTIVITY_FLAG_MARKER_END, 5, kBase + 95'000, nullptr));
  filler.Add(Marker(CUPTI_ACTIVITY_FLAG_MARKER_END, 77, kBase + 96'000, nullptr));  // no start

  filler.Add(Memory(CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION, 1 << 20, kBase + 100));
  filler.Add(Memory(CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION, 3 << 20, kBase + 200));
  filler.Add(Memory(CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION, 5 << 20, kBase + 250,
                    CUPTI_ACTIVITY_MEMORY_KIND_PINNED));  // host memory: not a sample
  filler.Add(Memory(CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE, 1 << 20, kBase + 300));

  CuptiCursor cursor;
  runtime.ConsumeBuffer(buffer, filler.used(), cursor, /*cupti_dropped=*/3);
  EXPECT_EQ(runtime.pool()->in_use(), 0u);  // the buffer went back to the pool
  const std::string path = runtime.trace_path();
  runtime.Shutdown();

  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  EXPECT_EQ(path, dir_.path() + "/out/bubblescope-" + kRunId + "-rank1-world2-" + host + "-" +
                      std::to_string(getpid()) + ".json");
  const std::string text = ReadFile(path);
  EXPECT_NE(text.find("\"cupti_records\":3,"), std::string::npos);
  EXPECT_EQ(text.substr(text.size() - 3), "\n]\n");

  const Rank rank = LoadOneRank(path);
  EXPECT_EQ(rank.rank, 1);
  EXPECT_EQ(rank.world_size, 2);
  EXPECT_EQ(rank.host, host);
  EXPECT_EQ(rank.pid, getpid());
  EXPECT_EQ(rank.record_run_id, kRunId);
  ASSERT_EQ(rank.devices.size(), 1u);
  EXPECT_EQ(rank.devices[0].id, 1);
  EXPECT_EQ(rank.devices[0].name, "Test GPU");
  EXPECT_EQ(rank.devices[0].total_memory_bytes, 80ll << 30);
  EXPECT_EQ(rank.devices[0].compute_major, 9);
  EXPECT_EQ(rank.devices[0].multiprocessors, 132);
  // The 3 records CUPTI reported dropped reach the reader's counters through the file; nothing
  // else is damaged or dropped.
  for (size_t i = 0; i < kImportCounterCount; ++i) {
    const auto counter = static_cast<ImportCounter>(i);
    EXPECT_EQ(rank.stats.count(counter),
              counter == ImportCounter::kCollectorDroppedRecords ? 3u : 0u)
        << CounterSpec(counter).name;
  }
  EXPECT_TRUE(rank.stats.HasAtLeast(Severity::kWarning));

  const auto kernels = IntervalsOf(rank, IntervalKind::kComputeKernel);
  ASSERT_EQ(kernels.size(), 1u);
  EXPECT_EQ(rank.name(kernels[0]->name), "gemm_kernel(float const*, float*, int)");
  EXPECT_EQ(kernels[0]->start, static_cast<int64_t>(kBase + 10'000));
  EXPECT_EQ(kernels[0]->end, static_cast<int64_t>(kBase + 60'123));
  EXPECT_EQ(kernels[0]->correlation, 42);
  const auto comm = IntervalsOf(rank, IntervalKind::kCommKernel);
  ASSERT_EQ(comm.size(), 1u);
  EXPECT_EQ(rank.comm(*comm[0])->kind, CommKind::kSendRecv);
  EXPECT_EQ(comm[0]->end - comm[0]->start, 20'000);

  const auto copies = IntervalsOf(rank, IntervalKind::kMemcpy);
  ASSERT_EQ(copies.size(), 1u);
  EXPECT_EQ(rank.name(copies[0]->name), "Memcpy HtoD (Pageable -> Device)");
  EXPECT_EQ(copies[0]->start, static_cast<int64_t>(kBase + 5'000));
  EXPECT_EQ(copies[0]->correlation, 43);
  const auto sets = IntervalsOf(rank, IntervalKind::kMemset);
  ASSERT_EQ(sets.size(), 1u);
  EXPECT_EQ(rank.name(sets[0]->name), "Memset (Device)");
  EXPECT_EQ(sets[0]->end - sets[0]->start, 250);

  // GPU streams of device 1: 7 (kernel, memcpy), 9 (memset), 13 (nccl); the launch on thread 99.
  std::vector<std::pair<int32_t, int64_t>> streams;
  for (const Timeline& timeline : rank.timelines) {
    if (timeline.kind == TimelineKind::kGpuStream)
      streams.emplace_back(timeline.device, timeline.id);
  }
  EXPECT_EQ(streams, (std::vector<std::pair<int32_t, int64_t>>{{1, 7}, {1, 9}, {1, 13}}));
  const auto launches = IntervalsOf(rank, IntervalKind::kRuntime);
  ASSERT_EQ(launches.size(), 1u);
  EXPECT_EQ(rank.name(launches[0]->name), "cudaLaunchKernel#211");
  EXPECT_EQ(launches[0]->correlation, 42);
  EXPECT_EQ(launches[0]->end - launches[0]->start, 5'500);

  ASSERT_EQ(rank.annotations.size(), 1u);  // the mark and the unmatched end make none
  EXPECT_EQ(rank.name(rank.annotations[0].name), "forward");
  EXPECT_EQ(rank.annotations[0].start, static_cast<int64_t>(kBase + 500));
  EXPECT_EQ(rank.annotations[0].end, static_cast<int64_t>(kBase + 95'000));
  EXPECT_EQ(rank.annotations[0].thread_or_stream, 99);
  EXPECT_NE(text.find("\"color\":4278255360"), std::string::npos);

  // Live device bytes: 1 MiB, then 4 MiB (the peak), then 3 MiB.
  ASSERT_EQ(rank.memory.size(), 3u);
  EXPECT_EQ(rank.memory[0].allocated_bytes, 1 << 20);
  EXPECT_EQ(rank.memory[1].allocated_bytes, 4 << 20);
  EXPECT_EQ(rank.memory[1].reserved_bytes, 4 << 20);
  EXPECT_EQ(rank.memory[2].allocated_bytes, 3 << 20);
  EXPECT_EQ(rank.memory[2].time, static_cast<int64_t>(kBase + 300));
  EXPECT_EQ(rank.memory[2].device, 1);
}

TEST_F(ActivityTranslationTest, KindsSwitchedOffWriteNothing) {
  Start("kernel");
  CollectorRuntime& runtime = CollectorRuntime::Instance();
  uint8_t* buffer = runtime.pool()->Acquire();
  ActivityBufferFiller filler(buffer, runtime.pool()->buffer_bytes());
  filler.Add(Kernel("k", kBase, kBase + 10, 7, 1));
  filler.Add(Memory(CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION, 64, kBase + 5));
  filler.Add(Marker(CUPTI_ACTIVITY_FLAG_MARKER_START, 1, kBase, "r"));
  filler.Add(Marker(CUPTI_ACTIVITY_FLAG_MARKER_END, 1, kBase + 9, nullptr));
  PackedRecordCursor cursor;
  runtime.ConsumeBuffer(buffer, filler.used(), cursor, 0);
  const std::string path = runtime.trace_path();
  runtime.Shutdown();
  const Rank rank = LoadOneRank(path);
  EXPECT_EQ(IntervalsOf(rank, IntervalKind::kComputeKernel).size(), 1u);
  EXPECT_TRUE(rank.memory.empty());
  EXPECT_TRUE(rank.annotations.empty());
}

// CUPTI's buffer-completed callback only queues the buffer: it stays in use until the flush
// thread (woken by the queueing) or the final flush has translated it, and every record arrives.
TEST_F(ActivityTranslationTest, QueuedBuffersAreTranslatedOffCuptisThread) {
  Start("kernel");
  CollectorRuntime& runtime = CollectorRuntime::Instance();
  for (int i = 0; i < 3; ++i) {
    uint8_t* buffer = runtime.pool()->Acquire();
    ActivityBufferFiller filler(buffer, runtime.pool()->buffer_bytes());
    filler.Add(Kernel("k", kBase + 100 * i, kBase + 100 * i + 10, 7, 1 + i));
    filler.Add(Kernel("k", kBase + 100 * i + 50, kBase + 100 * i + 60, 7, 11 + i));
    runtime.QueueBuffer(buffer, filler.used(), /*cupti_dropped=*/1);
  }
  const std::string path = runtime.trace_path();
  runtime.Shutdown();
  EXPECT_EQ(runtime.pool()->in_use(), 0u);
  const std::string text = ReadFile(path);
  EXPECT_NE(text.find("\"cupti_records\":3,"), std::string::npos) << text;
  const Rank rank = LoadOneRank(path);
  EXPECT_EQ(IntervalsOf(rank, IntervalKind::kComputeKernel).size(), 6u);
}

// CUPTI's walker steps over each record by the size of its own struct version: it must land on
// every record the filler laid out at the size of the struct cupti_records.h chose, and so must
// the tests' own walker (record_layout.h, which the fuzz target uses).
TEST(BufferWalkTest, CuptiStepsOverEachChosenStructExactly) {
  std::vector<uint8_t> storage(8192);
  ActivityBufferFiller filler(storage.data(), storage.size());
  const std::vector<CUpti_ActivityKind> kinds = {
      CUPTI_ACTIVITY_KIND_DEVICE,      CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
      CUPTI_ACTIVITY_KIND_MEMCPY,      CUPTI_ACTIVITY_KIND_MEMSET,
      CUPTI_ACTIVITY_KIND_MEMORY2,     CUPTI_ACTIVITY_KIND_MARKER,
      CUPTI_ACTIVITY_KIND_MARKER_DATA, CUPTI_ACTIVITY_KIND_RUNTIME,
      CUPTI_ACTIVITY_KIND_DRIVER,      CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL};
  DeviceRecord device{};
  device.kind = CUPTI_ACTIVITY_KIND_DEVICE;
  filler.Add(device);
  filler.Add(Kernel("k", kBase, kBase + 5, 1, 1));
  MemcpyRecord memcpy{};
  memcpy.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
  filler.Add(memcpy);
  MemsetRecord memset{};
  memset.kind = CUPTI_ACTIVITY_KIND_MEMSET;
  filler.Add(memset);
  filler.Add(Memory(CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION, 64, kBase));
  filler.Add(Marker(CUPTI_ACTIVITY_FLAG_MARKER_START, 1, kBase, "r"));
  MarkerDataRecord data{};
  data.kind = CUPTI_ACTIVITY_KIND_MARKER_DATA;
  filler.Add(data);
  ApiRecord api{};
  api.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
  filler.Add(api);
  api.kind = CUPTI_ACTIVITY_KIND_DRIVER;
  filler.Add(api);
  filler.Add(Kernel("last", kBase + 10, kBase + 15, 1, 2));
  ASSERT_EQ(filler.offsets().size(), kinds.size());

  CuptiCursor cupti;
  PackedRecordCursor packed;
  for (RecordCursor* cursor : std::vector<RecordCursor*>{&cupti, &packed}) {
    CUpti_Activity* record = nullptr;
    for (size_t i = 0; i < kinds.size(); ++i) {
      ASSERT_EQ(cursor->Next(storage.data(), filler.used(), &record), NextRecord::kRecord) << i;
      EXPECT_EQ(reinterpret_cast<uint8_t*>(record) - storage.data(),
                static_cast<ptrdiff_t>(filler.offsets()[i]))
          << "record " << i << " of kind " << kinds[i];
      EXPECT_EQ(record->kind, kinds[i]);
    }
    EXPECT_EQ(cursor->Next(storage.data(), filler.used(), &record), NextRecord::kEnd);
  }
}

TEST(BufferWalkTest, StopsAtAnUnwalkableRecordAndKeepsWhatCameBefore) {
  std::vector<uint8_t> storage(4096);
  ActivityBufferFiller filler(storage.data(), storage.size());
  filler.Add(Kernel("first", kBase, kBase + 5, 1, 1));
  const size_t before_bad = filler.used();
  filler.Add(Kernel("second", kBase + 10, kBase + 15, 1, 2));
  // Corrupt the second record's kind: the walker cannot size it, as CUPTI would refuse it.
  const CUpti_ActivityKind bad = CUPTI_ACTIVITY_KIND_PC_SAMPLING;
  std::memcpy(storage.data() + before_bad, &bad, sizeof(bad));

  class StringSink : public EventSink {
   public:
    void Append(std::string_view events) override { text.append(events); }
    std::string text;
  } sink;
  ActivityTranslator translator(TranslatorOptions{});
  PackedRecordCursor cursor;
  const BufferWalk walk =
      ConsumeActivityBuffer(storage.data(), filler.used(), cursor, translator, sink);
  EXPECT_EQ(walk.records, 1u);
  EXPECT_TRUE(walk.walk_error);
  EXPECT_NE(sink.text.find("\"name\":\"first\""), std::string::npos);
  EXPECT_EQ(sink.text.find("second"), std::string::npos);
  EXPECT_EQ(translator.counts().events, 1u);
}

}  // namespace
}  // namespace bubblescope::collector::testing
