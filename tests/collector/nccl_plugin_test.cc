// NCCL's profiler-plugin entry points called as NCCL calls them (init, startEvent,
// recordEventState, stopEvent, finalize) through the exported ncclProfiler_v6, ncclProfiler_v5 and
// ncclProfiler_v4 structs, with the descriptors NCCL passes; the p2p records are read back through
// bubblescope's loader.
#include <string>

#include "collector_runtime.h"
#include "collector_test_util.h"
#include "comm_rank_directory.h"
#include "gtest/gtest.h"
#include "nccl_profiler_abi.h"
#include "support/test_files.h"

namespace bubblescope::collector::testing {
namespace {

using bubblescope::testing::ReadFile;
using bubblescope::testing::TempDir;

constexpr uint64_t kPipeComm = 0xabc;
constexpr uint64_t kOtherComm = 0xdef;

size_t Occurrences(const std::string& text, const std::string& needle) {
  size_t count = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) {
    ++count;
  }
  return count;
}

class NcclPluginTest : public ::testing::Test {
 protected:
  void SetUp() override {
    out_ = dir_.path() + "/out";
    RuntimeHooks hooks;
    hooks.clock = FakeClock;
    ASSERT_TRUE(CollectorRuntime::Instance().Start(Env({{"BUBBLESCOPE_OUTPUT_DIR", out_},
                                                        {"RANK", "0"},
                                                        {"WORLD_SIZE", "4"},
                                                        {"BUBBLESCOPE_FLUSH_MS", "3600000"}}),
                                                   hooks));
  }
  void TearDown() override { CollectorRuntime::Instance().Shutdown(); }

  // Starts an event through the v5 entry point at time `now`.
  void* StartV5(void* context, bubblescope_ncclProfilerEventDescr_v5_t descriptor, int64_t now) {
    FakeNow() = now;
    void* handle = reinterpret_cast<void*>(0x1);  // NCCL's slot holds garbage before the call
    EXPECT_EQ(ncclProfiler_v5.startEvent(context, &handle, &descriptor), 0);
    return handle;
  }
  void StopAt(void* handle, int64_t now) {
    FakeNow() = now;
    EXPECT_EQ(ncclProfiler_v5.stopEvent(handle), 0);
  }

  // Shuts the collector down, which writes its trace, and reads that trace back as one rank.
  static Rank ShutDownAndLoad() {
    CollectorRuntime& runtime = CollectorRuntime::Instance();
    const std::string path = runtime.trace_path();
    runtime.Shutdown();
    return LoadOneRank(path);
  }

  static bubblescope_ncclProfilerEventDescr_v5_t P2p(const char* func, const char* dtype,
                                                     size_t count, int peer) {
    bubblescope_ncclProfilerEventDescr_v5_t descriptor{};
    descriptor.type = nccl_abi::kProfileP2p;
    descriptor.rank = 0;
    descriptor.p2p.func = func;
    descriptor.p2p.datatype = dtype;
    descriptor.p2p.count = count;
    descriptor.p2p.peer = peer;
    descriptor.p2p.nChannels = 2;
    return descriptor;
  }
  static bubblescope_ncclProfilerEventDescr_v5_t Child(uint64_t type, void* parent) {
    bubblescope_ncclProfilerEventDescr_v5_t descriptor{};
    descriptor.type = type;
    descriptor.parentObj = parent;
    return descriptor;
  }

  TempDir dir_;
  std::string out_;
};

TEST_F(NcclPluginTest, P2pRecordsWithGlobalPeerAndBytes) {
  // The peer process (communicator rank 1) is global rank 3; it published that on its init.
  ASSERT_TRUE(CommRankDirectory(out_).Publish(kPipeComm, 1, 3));

  void* context = nullptr;
  int mask = 0;
  ASSERT_EQ(ncclProfiler_v5.init(&context, kPipeComm, &mask, "pp_group", 1, 2, 0, nullptr), 0);
  ASSERT_NE(context, nullptr);
  EXPECT_EQ(mask, (1 << 2) | (1 << 3) | (1 << 6));  // P2p, ProxyOp, KernelCh

  // A send: enqueued 1.0-1.5 ms, its proxy op runs 2.0-4.0 ms.
  void* send = StartV5(context, P2p("Send", "ncclFloat32", 1024, 1), 1'000'000);
  ASSERT_NE(send, nullptr);
  StopAt(send, 1'500'000);
  void* proxy = StartV5(context, Child(nccl_abi::kProfileProxyOp, send), 2'000'000);
  ASSERT_NE(proxy, nullptr);
  FakeNow() = 2'500'000;
  bubblescope_ncclProfilerEventStateArgs_t state{};
  EXPECT_EQ(ncclProfiler_v5.recordEventState(proxy, 0, &state), 0);
  StopAt(proxy, 4'000'000);

  // A recv: enqueued 5.0-5.1 ms, its kernel channel runs until 7.0 ms.
  void* recv = StartV5(context, P2p("Recv", "ncclBfloat16", 512, 1), 5'000'000);
  StopAt(recv, 5'100'000);
  void* channel = StartV5(context, Child(nccl_abi::kProfileKernelCh, recv), 5'200'000);
  state.kernelCh.pTimer = 123456789;
  EXPECT_EQ(ncclProfiler_v5.recordEventState(channel, 1, &state), 0);
  StopAt(channel, 7'000'000);

  // Collectives and their children are not tracked: NCCL gets null handles.
  int collective_parent = 0;
  EXPECT_EQ(StartV5(context, Child(1u << 1, nullptr), 7'100'000), nullptr);
  EXPECT_EQ(StartV5(context, Child(nccl_abi::kProfileKernelCh, &collective_parent), 7'200'000),
            nullptr);
  EXPECT_EQ(ncclProfiler_v5.stopEvent(nullptr), 0);

  EXPECT_EQ(ncclProfiler_v5.finalize(context), 0);
  const Rank rank = ShutDownAndLoad();
  const auto ops = IntervalsOf(rank, IntervalKind::kCpuCommOp);
  ASSERT_EQ(ops.size(), 2u);
  EXPECT_EQ(rank.name(ops[0]->name), "nccl:send");
  EXPECT_EQ(ops[0]->start, 1'000'000);
  EXPECT_EQ(ops[0]->end, 4'000'000);  // the proxy op's stop
  const CommInfo* send_info = rank.comm(*ops[0]);
  ASSERT_NE(send_info, nullptr);
  EXPECT_EQ(send_info->kind, CommKind::kSend);
  EXPECT_EQ(send_info->peer, 3);
  EXPECT_EQ(send_info->bytes, 1024 * 4);
  EXPECT_EQ(send_info->group_size, 2);
  ASSERT_NE(send_info->process_group, kNoIndex);
  EXPECT_EQ(rank.process_groups[send_info->process_group].name, "pp_group");
  EXPECT_EQ(rank.process_groups[send_info->process_group].ranks, (std::vector<int32_t>{0, 3}));

  EXPECT_EQ(rank.name(ops[1]->name), "nccl:recv");
  EXPECT_EQ(ops[1]->start, 5'000'000);
  EXPECT_EQ(ops[1]->end, 7'000'000);
  const CommInfo* recv_info = rank.comm(*ops[1]);
  ASSERT_NE(recv_info, nullptr);
  EXPECT_EQ(recv_info->kind, CommKind::kRecv);
  EXPECT_EQ(recv_info->peer, 3);
  EXPECT_EQ(recv_info->bytes, 512 * 2);
}

TEST_F(NcclPluginTest, V4EntryPointsAndTheGracePeriodForChildlessEvents) {
  void* context = nullptr;
  int mask = 0;
  ASSERT_EQ(ncclProfiler_v4.init(&context, &mask, "other", kOtherComm, 1, 2, 1, nullptr), 0);
  EXPECT_EQ(mask, (1 << 2) | (1 << 3) | (1 << 6));
  bubblescope_ncclProfilerEventDescr_v4_t descriptor{};
  descriptor.type = static_cast<uint8_t>(nccl_abi::kProfileP2p);
  descriptor.rank = 1;
  descriptor.p2p.func = "Send";
  descriptor.p2p.datatype = "ncclInt64";
  descriptor.p2p.count = 10;
  descriptor.p2p.peer = 0;
  void* handle = nullptr;
  FakeNow() = 8'000'000;
  ASSERT_EQ(ncclProfiler_v4.startEvent(context, &handle, &descriptor), 0);
  ASSERT_NE(handle, nullptr);
  FakeNow() = 8'100'000;
  ASSERT_EQ(ncclProfiler_v4.stopEvent(handle), 0);

  CollectorRuntime& runtime = CollectorRuntime::Instance();
  const std::string path = runtime.trace_path();
  FakeNow() = 8'100'000 + 1'999'999'999;  // children may still come: not written yet
  runtime.Flush(false);
  EXPECT_EQ(Occurrences(ReadFile(path), "nccl:send"), 0u);
  FakeNow() = 8'100'000 + 2'000'000'000;  // the 2 s grace period is over
  runtime.Flush(false);
  EXPECT_EQ(Occurrences(ReadFile(path), "nccl:send"), 1u);
  EXPECT_EQ(ncclProfiler_v4.finalize(context), 0);
  runtime.Shutdown();
  EXPECT_EQ(Occurrences(ReadFile(path), "nccl:send"), 1u);  // written once only

  const Rank rank = LoadOneRank(path);
  const auto ops = IntervalsOf(rank, IntervalKind::kCpuCommOp);
  ASSERT_EQ(ops.size(), 1u);
  EXPECT_EQ(ops[0]->end - ops[0]->start, 100'000);
  const CommInfo* info = rank.comm(*ops[0]);
  ASSERT_NE(info, nullptr);
  EXPECT_EQ(info->peer, -1);  // communicator rank 0 of 0xdef never published its global rank
  EXPECT_EQ(info->bytes, 80);
}

// NCCL 2.30 loads ncclProfiler_v6 first. A one-rank communicator sending to and receiving from
// itself inside one group (what the one-GPU check runs): NCCL gives no proxy ops for a self
// transfer, only kernel channels; the copy-engine collective events v6 added are not tracked.
TEST_F(NcclPluginTest, V6SelfSendRecvInOneRankCommunicator) {
  constexpr uint64_t kSelfComm = 0x5e1f;
  void* context = nullptr;
  int mask = 0;
  ASSERT_EQ(ncclProfiler_v6.init(&context, kSelfComm, &mask, "self", 1, 1, 0, nullptr), 0);
  ASSERT_NE(context, nullptr);
  EXPECT_EQ(mask, (1 << 2) | (1 << 3) | (1 << 6));  // no CE events asked for

  auto start = [&](bubblescope_ncclProfilerEventDescr_v6_t descriptor, int64_t now) {
    FakeNow() = now;
    void* handle = reinterpret_cast<void*>(0x1);
    EXPECT_EQ(ncclProfiler_v6.startEvent(context, &handle, &descriptor), 0);
    return handle;
  };
  auto stop = [](void* handle, int64_t now) {
    FakeNow() = now;
    EXPECT_EQ(ncclProfiler_v6.stopEvent(handle), 0);
  };
  auto p2p = [](const char* func, size_t count) {
    bubblescope_ncclProfilerEventDescr_v6_t descriptor{};
    descriptor.type = nccl_abi::kProfileP2p;
    descriptor.p2p.func = func;
    descriptor.p2p.datatype = "ncclFloat16";
    descriptor.p2p.count = count;
    descriptor.p2p.peer = 0;  // itself
    descriptor.p2p.nChannels = 1;
    return descriptor;
  };
  auto channel = [](void* parent) {
    bubblescope_ncclProfilerEventDescr_v6_t descriptor{};
    descriptor.type = nccl_abi::kProfileKernelCh;
    descriptor.parentObj = parent;
    descriptor.kernelCh.channelId = 0;
    return descriptor;
  };

  void* send = start(p2p("Send", 4096), 1'000'000);
  void* recv = start(p2p("Recv", 4096), 1'050'000);
  ASSERT_NE(send, nullptr);
  ASSERT_NE(recv, nullptr);
  stop(send, 1'100'000);
  stop(recv, 1'200'000);
  void* send_channel = start(channel(send), 1'300'000);
  void* recv_channel = start(channel(recv), 1'300'000);
  stop(send_channel, 1'900'000);
  stop(recv_channel, 2'000'000);

  bubblescope_ncclProfilerEventDescr_v6_t ce{};
  ce.type = nccl_abi::kProfileCeColl;
  ce.ceColl.func = "AllReduce";
  ce.ceColl.count = 4096;
  EXPECT_EQ(start(ce, 2'100'000), nullptr);

  EXPECT_EQ(ncclProfiler_v6.finalize(context), 0);
  const Rank rank = ShutDownAndLoad();
  const auto ops = IntervalsOf(rank, IntervalKind::kCpuCommOp);
  ASSERT_EQ(ops.size(), 2u);
  EXPECT_EQ(rank.name(ops[0]->name), "nccl:send");
  EXPECT_EQ(ops[0]->start, 1'000'000);
  EXPECT_EQ(ops[0]->end, 1'900'000);  // its kernel channel's stop
  EXPECT_EQ(rank.name(ops[1]->name), "nccl:recv");
  EXPECT_EQ(ops[1]->start, 1'050'000);
  EXPECT_EQ(ops[1]->end, 2'000'000);
  for (const Interval* op : ops) {
    const CommInfo* info = rank.comm(*op);
    ASSERT_NE(info, nullptr);
    EXPECT_EQ(info->peer, 0);  // this process's own global rank, published at init
    EXPECT_EQ(info->bytes, 4096 * 2);
    EXPECT_EQ(info->group_size, 1);
    ASSERT_NE(info->process_group, kNoIndex);
    EXPECT_EQ(rank.process_groups[info->process_group].ranks, (std::vector<int32_t>{0}));
  }
}

TEST(NcclPluginDisabledTest, NoEventsWhenTheNcclKindIsOff) {
  TempDir dir;
  RuntimeHooks hooks;
  hooks.clock = FakeClock;
  ASSERT_TRUE(CollectorRuntime::Instance().Start(
      Env({{"BUBBLESCOPE_OUTPUT_DIR", dir.path()}, {"BUBBLESCOPE_KINDS", "kernel"}}), hooks));
  void* context = reinterpret_cast<void*>(0x1);
  int mask = -1;
  EXPECT_EQ(ncclProfiler_v5.init(&context, 1, &mask, "c", 1, 2, 0, nullptr), 0);
  EXPECT_EQ(context, nullptr);
  EXPECT_EQ(mask, 0);
  EXPECT_EQ(ncclProfiler_v5.finalize(context), 0);
  CollectorRuntime::Instance().Shutdown();
}

}  // namespace
}  // namespace bubblescope::collector::testing
