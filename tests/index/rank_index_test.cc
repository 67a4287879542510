// The rank index on hand-made ranks and on reader output: each fact checked against values
// worked out from the definitions in index/rank_index.h.
#include "index/rank_index.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "readers/kineto_reader.h"
#include "simdjson.h"
#include "support/timeline_fixtures.h"

namespace bubblescope::index {
namespace {

using namespace bubblescope::testing;  // NOLINT(build/namespaces): test builders only
using ::testing::ElementsAre;

struct Expected {
  TimeNs start;
  TimeNs end;
  OpClass op_class;
  TimeNs issue;
};

void ExpectOps(const Rank& rank, const RankIndex& index, const std::vector<Expected>& expected) {
  ASSERT_EQ(index.ops.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    SCOPED_TRACE(i);
    const DeviceOp& got = index.ops[i];
    EXPECT_EQ(got.start, expected[i].start);
    EXPECT_EQ(got.end, expected[i].end);
    EXPECT_EQ(got.op_class, expected[i].op_class);
    EXPECT_EQ(got.issue, expected[i].issue);
    // The indices lead back to the very interval of the rank.
    const Interval& source = rank.timelines[got.timeline].intervals[got.interval];
    EXPECT_EQ(source.start, expected[i].start);
    EXPECT_EQ(source.end, expected[i].end);
    EXPECT_EQ(source.name, got.name);
  }
}

TEST(RankIndexTest, GpuRankTakesEveryStreamAndNoCpuWork) {
  Rank rank;
  rank.rank = 4;
  // Launches of correlation 11 and 13; 12 and 14 have none and are issued at their start.
  rank.timelines.push_back(
      Thread(1, {Op(kCpu, 0, 1000), Op(kRuntime, 5, 9, 11), Op(kRuntime, 20, 22, 13)}));
  rank.timelines.push_back(Stream(7, {Op(kCompute, 100, 200, 11), Op(kComm, 300, 400, 12),
                                      Op(IntervalKind::kMemset, 500, 510)}));
  rank.timelines.push_back(
      Stream(8, {Op(kCompute, 100, 250, 13), Op(IntervalKind::kMemcpy, 240, 260),
                 Op(kCompute, 600, 600, 14)}));
  const RankIndex index = BuildRank(rank);
  EXPECT_EQ(index.rank, 4);
  EXPECT_EQ(index.device, DeviceKind::kGpu);
  EXPECT_EQ(index.model_thread, -1);
  // Start order across streams; equal starts put the longer first; zero-length ops are kept.
  ExpectOps(rank, index,
            {{100, 250, OpClass::kCompute, 20},
             {100, 200, OpClass::kCompute, 5},
             {240, 260, OpClass::kCopy, 240},
             {300, 400, OpClass::kComm, 300},
             {500, 510, OpClass::kCopy, 500},
             {600, 600, OpClass::kCompute, 600}});
  EXPECT_TRUE(index.ops[0].launched);
  EXPECT_FALSE(index.ops[3].launched);
  // Issue order: launch 5 (op 1), launch 20 (op 0), then the unlaunched ops by start.
  EXPECT_THAT(index.issue_order, ElementsAre(1, 0, 2, 3, 4, 5));
}

// Thread 2 runs the model: its top-level ops cover 200 ns; thread 1 covers 100, thread 3 spans
// the longest time (1100) but covers 105.
Rank GlooRank() {
  Rank rank;
  rank.rank = 1;
  rank.timelines.push_back(Stream(7, {}));  // a stream without activity does not make a GPU rank
  rank.timelines.push_back(Thread(1, {Op(kCpu, 0, 100), Op(kCpuComm, 50, 60)}));
  std::vector<Interval> model_ops = {
      Op(kRuntime, 0, 1000),  // not a CPU op: neither counted nor a parent
      Op(kCpu, 0, 80),        // top-level
      Op(kCpuComm, 10, 30),   //   nested comm
      Op(kCpuComm, 90, 130),  // top-level comm
      Op(kCpu, 120, 200),     // top-level: overlaps [90,130) but is not inside it
      Op(kCpu, 125, 130),     //   nested
      Op(kCpu, 300, 310),     // top-level
  };
  rank.timelines.push_back(Thread(2, std::move(model_ops)));
  rank.timelines.push_back(Thread(3, {Op(kCpu, 0, 5), Op(kCpu, 1000, 1100)}));
  return rank;
}

TEST(RankIndexTest, CpuRankUsesTheTopLevelOpsOfTheModelThread) {
  Rank rank = GlooRank();
  const RankIndex index = BuildRank(rank);
  EXPECT_EQ(index.device, DeviceKind::kCpu);
  EXPECT_EQ(index.model_thread, 2);
  ExpectOps(rank, index,
            {{0, 80, OpClass::kCompute, 0},
             {90, 130, OpClass::kComm, 90},
             {120, 200, OpClass::kCompute, 120},
             {300, 310, OpClass::kCompute, 300}});
}

TEST(RankIndexTest, CpuRankDoesNotDependOnIntervalOrder) {
  Rank rank = GlooRank();
  for (Timeline& timeline : rank.timelines) {
    std::reverse(timeline.intervals.begin(), timeline.intervals.end());
  }
  const RankIndex index = BuildRank(rank);
  EXPECT_EQ(index.model_thread, 2);
  ExpectOps(rank, index,
            {{0, 80, OpClass::kCompute, 0},
             {90, 130, OpClass::kComm, 90},
             {120, 200, OpClass::kCompute, 120},
             {300, 310, OpClass::kCompute, 300}});
}

TEST(RankIndexTest, RankWithoutAnyOpHasNoDevice) {
  Rank rank;
  rank.timelines.push_back(Thread(1, {Op(kRuntime, 0, 10)}));
  const RankIndex index = BuildRank(rank);
  EXPECT_EQ(index.device, DeviceKind::kCpu);
  EXPECT_EQ(index.model_thread, -1);
  EXPECT_TRUE(index.ops.empty());
  EXPECT_FALSE(index.HasP2p());
}

TEST(RankIndexTest, BuildKeepsTraceOrder) {
  Trace trace;
  trace.ranks.push_back(GlooRank());
  trace.ranks.back().rank = 0;
  Rank gpu;
  gpu.rank = 1;
  gpu.timelines.push_back(Stream(7, {Op(kCompute, 0, 10)}));
  trace.ranks.push_back(std::move(gpu));
  const TraceIndex index = Build(trace);
  ASSERT_EQ(index.ranks.size(), 2u);
  EXPECT_EQ(index.ranks[0].rank, 0);
  EXPECT_EQ(index.ranks[0].device, DeviceKind::kCpu);
  EXPECT_EQ(index.ranks[0].ops.size(), 4u);
  EXPECT_EQ(index.ranks[1].rank, 1);
  EXPECT_EQ(index.ranks[1].device, DeviceKind::kGpu);
  EXPECT_EQ(index.PositionOf(1), 1);
  EXPECT_EQ(index.PositionOf(7), -1);
}

// Hints: a kernel named for its phase; a kernel launched inside torch's autograd engine op is
// backward whatever its name; an Optimizer.* range marks what it issued.
TEST(RankIndexTest, PhaseHintsAndOptimizerWork) {
  Rank rank;
  Interval autograd = Op(kCpu, 100, 200);
  autograd.name = rank.names.Intern("autograd::engine::evaluate_function: AddmmBackward0");
  rank.timelines.push_back(
      Thread(1, {Op(kRuntime, 10, 12, 1), autograd, Op(kRuntime, 150, 152, 2),
                 Op(kRuntime, 300, 302, 3), Op(kRuntime, 400, 402, 4), Op(kRuntime, 500, 502, 5)}));
  rank.annotations.push_back(CpuRange(&rank, "Optimizer.step#Adam.step", 450, 550));
  auto kernel = [&rank](std::string_view name, TimeNs start, int64_t correlation) {
    Interval interval = Op(kCompute, start, start + 10, correlation);
    interval.name = rank.names.Intern(name);
    return interval;
  };
  rank.timelines.push_back(
      Stream(7, {kernel("gemm", 20, 1), kernel("gemm", 160, 2), kernel("dgrad_bwd_kernel", 310, 3),
                 kernel("wgrad_gemm", 410, 4), kernel("adam", 510, 5)}));
  const RankIndex index = BuildRank(rank);
  ASSERT_EQ(index.ops.size(), 5u);
  EXPECT_EQ(index.ops[0].hint, PhaseHint::kNone);
  EXPECT_EQ(index.ops[1].hint, PhaseHint::kBackward);    // launched inside the autograd op
  EXPECT_EQ(index.ops[2].hint, PhaseHint::kBackward);    // "bwd"
  EXPECT_EQ(index.ops[3].hint, PhaseHint::kWeightGrad);  // "wgrad"
  EXPECT_FALSE(index.ops[3].in_optimizer);
  EXPECT_TRUE(index.ops[4].in_optimizer);  // launched at 500, inside [450, 550)
}

// torch runs a GPU job's backward on the autograd engine's thread: with compute launched from
// two threads, the one that did not launch the first compute is backward work. The optimizer's
// kernel keeps no hint; a rank launching from one thread gets none from this.
TEST(RankIndexTest, ComputeFromASecondLaunchThreadIsBackward) {
  Rank rank;
  rank.timelines.push_back(
      Thread(1, {Op(kRuntime, 10, 12, 1), Op(kRuntime, 40, 42, 3), Op(kRuntime, 500, 502, 5)}));
  rank.timelines.push_back(Thread(2, {Op(kRuntime, 20, 22, 2), Op(kRuntime, 60, 62, 4)}));
  rank.annotations.push_back(CpuRange(&rank, "Optimizer.step#Adam.step", 450, 550));
  auto gemm = [&rank](TimeNs start, int64_t correlation) {
    Interval interval = Op(kCompute, start, start + 10, correlation);
    interval.name = rank.names.Intern("ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_tn");
    return interval;
  };
  rank.timelines.push_back(
      Stream(7, {gemm(100, 1), gemm(200, 2), gemm(300, 3), gemm(400, 4), gemm(600, 5)}));
  const RankIndex index = BuildRank(rank);
  ASSERT_EQ(index.ops.size(), 5u);
  EXPECT_EQ(index.ops[0].hint, PhaseHint::kNone);      // thread 1 launched the first compute
  EXPECT_EQ(index.ops[1].hint, PhaseHint::kBackward);  // thread 2
  EXPECT_EQ(index.ops[2].hint, PhaseHint::kNone);
  EXPECT_EQ(index.ops[3].hint, PhaseHint::kBackward);
  EXPECT_EQ(index.ops[4].hint, PhaseHint::kNone);  // the optimizer step
  EXPECT_TRUE(index.ops[4].in_optimizer);

  Rank one_thread;
  one_thread.timelines.push_back(Thread(1, {Op(kRuntime, 10, 12, 1), Op(kRuntime, 20, 22, 2)}));
  one_thread.timelines.push_back(Stream(7, {Op(kCompute, 100, 110, 1), Op(kCompute, 200, 210, 2)}));
  for (const DeviceOp& op : BuildRank(one_thread).ops) EXPECT_EQ(op.hint, PhaseHint::kNone);
}

// A gloo transfer lasts until its gloo:* range on the same thread ends, not when the op that
// posted it returns; a range gloo's own worker thread records (its all-reduces) is no wait of
// the model thread's.
TEST(RankIndexTest, CpuTransfersEndWithTheirGlooRange) {
  Rank rank;
  rank.comms.push_back(CommInfo{.peer = 3, .kind = CommKind::kRecv});
  Interval recv = Op(kCpuComm, 100, 120);
  recv.comm = 0;
  rank.timelines.push_back(Thread(1, {Op(kCpu, 0, 50), recv}));
  rank.annotations.push_back(CpuRange(&rank, "gloo:recv", 110, 400));
  rank.annotations.back().thread_or_stream = 1;
  rank.annotations.push_back(CpuRange(&rank, "gloo:all_reduce", 115, 900));
  rank.annotations.back().thread_or_stream = 9;  // a gloo worker thread
  const RankIndex index = BuildRank(rank);
  ASSERT_EQ(index.ops.size(), 2u);
  const DeviceOp& op = index.ops[1];
  EXPECT_TRUE(op.is_recv());
  EXPECT_EQ(op.peer, 3);
  EXPECT_EQ(op.end, 120);
  EXPECT_EQ(op.transfer_end, 400);
  EXPECT_EQ(index.ops[0].transfer_end, 50);
  EXPECT_TRUE(index.HasP2p());
}

// Without NCCL's args a p2p kernel is only "SendRecv"; the c10d operator or nccl:* range its
// launch sits in says which way it went (read through the Kineto reader, as a real file is).
TEST(RankIndexTest, P2pKernelsWithoutArgsTakeTheirDirectionFromTheLaunchingOp) {
  const simdjson::padded_string json(std::string(R"json([
    {"ph":"X","cat":"cpu_op","name":"c10d::send","pid":1,"tid":1,"ts":10,"dur":10},
    {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":12,"dur":2,"args":{"correlation":1}},
    {"ph":"X","cat":"user_annotation","name":"nccl:recv","pid":1,"tid":1,"ts":30,"dur":10},
    {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":31,"dur":2,"args":{"correlation":2}},
    {"ph":"X","cat":"cpu_op","name":"c10d::allreduce_","pid":1,"tid":1,"ts":50,"dur":10},
    {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":51,"dur":2,"args":{"correlation":3}},
    {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":70,"dur":2,"args":{"correlation":4}},
    {"ph":"X","cat":"cpu_op","name":"c10d::recv_","pid":1,"tid":2,"ts":80,"dur":10},
    {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":81,"dur":2,"args":{"correlation":5}},
    {"ph":"X","cat":"kernel","name":"ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)","pid":0,"tid":20,"ts":15,"dur":5,"args":{"device":0,"stream":20,"correlation":1}},
    {"ph":"X","cat":"kernel","name":"ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclDevComm*, unsigned long, ncclWork*)","pid":0,"tid":20,"ts":35,"dur":5,"args":{"device":0,"stream":20,"correlation":2}},
    {"ph":"X","cat":"kernel","name":"ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)","pid":0,"tid":20,"ts":55,"dur":5,"args":{"device":0,"stream":20,"correlation":3}},
    {"ph":"X","cat":"kernel","name":"ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)","pid":0,"tid":20,"ts":75,"dur":5,"args":{"device":0,"stream":20,"correlation":4}},
    {"ph":"X","cat":"kernel","name":"ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)","pid":0,"tid":20,"ts":85,"dur":5,"args":{"device":0,"stream":20,"correlation":5}}
  ])json"));
  KinetoReader reader;
  Rank rank;
  ASSERT_TRUE(reader.Read("p2p.json", json, &rank).ok());
  const RankIndex index = BuildRank(rank);
  std::vector<CommKind> kinds;
  for (const DeviceOp& op : index.ops) {
    ASSERT_EQ(op.op_class, OpClass::kComm);
    kinds.push_back(op.comm);
    EXPECT_EQ(op.peer, -1);  // nothing here records a peer
  }
  // Inside c10d::send; inside nccl:recv; inside an all-reduce op (the all-reduce NCCL ran as a
  // SendRecv kernel); inside nothing; inside a c10d::recv_ of another thread (not its launcher:
  // left as is).
  EXPECT_THAT(kinds, ElementsAre(CommKind::kSend, CommKind::kRecv, CommKind::kAllReduce,
                                 CommKind::kSendRecv, CommKind::kSendRecv));
}

// batch_isend_irecv (Megatron's batch_p2p_comm): the c10d calls only queue their transfers, the
// peers and sizes are on record_param_comms, and one kernel launched inside nccl:coalesced runs
// the batch. The queued transfers since the previous communication launch are that kernel's;
// a compute launch between them claims nothing, and a c10d op that held its own launch (the
// per-op path) is never queued for a later kernel.
TEST(RankIndexTest, BatchKernelsBecomeOneOpPerQueuedTransfer) {
  const simdjson::padded_string json(std::string(R"json([
    {"ph":"X","cat":"cpu_op","name":"c10d::send","pid":1,"tid":1,"ts":10,"dur":4},
    {"ph":"X","cat":"cpu_op","name":"record_param_comms","pid":1,"tid":1,"ts":11,"dur":2,"args":{"Collective name":"send","dtype":"BFloat16","In msg nelems":1024,"Out msg nelems":1024,"Group size":4,"Src Rank":2,"Dst Rank":3}},
    {"ph":"X","cat":"cpu_op","name":"c10d::recv_","pid":1,"tid":1,"ts":15,"dur":4},
    {"ph":"X","cat":"cpu_op","name":"record_param_comms","pid":1,"tid":1,"ts":16,"dur":2,"args":{"Collective name":"recv","dtype":"BFloat16","In msg nelems":512,"Out msg nelems":512,"Group size":4,"Src Rank":1,"Dst Rank":2}},
    {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":20,"dur":2,"args":{"correlation":9}},
    {"ph":"X","cat":"user_annotation","name":"nccl:coalesced","pid":1,"tid":1,"ts":24,"dur":6},
    {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":25,"dur":2,"args":{"correlation":1}},
    {"ph":"X","cat":"cpu_op","name":"c10d::send","pid":1,"tid":1,"ts":70,"dur":4},
    {"ph":"X","cat":"cpu_op","name":"record_param_comms","pid":1,"tid":1,"ts":71,"dur":2,"args":{"Collective name":"send","dtype":"BFloat16","In msg nelems":1024,"Out msg nelems":1024,"Src Rank":2,"Dst Rank":3}},
    {"ph":"X","cat":"user_annotation","name":"nccl:coalesced","pid":1,"tid":1,"ts":75,"dur":5},
    {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":76,"dur":2,"args":{"correlation":2}},
    {"ph":"X","cat":"cpu_op","name":"c10d::send","pid":1,"tid":1,"ts":100,"dur":10},
    {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":102,"dur":2,"args":{"correlation":3}},
    {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":130,"dur":2,"args":{"correlation":4}},
    {"ph":"X","cat":"kernel","name":"gemm","pid":0,"tid":7,"ts":30,"dur":5,"args":{"device":0,"stream":7,"correlation":9}},
    {"ph":"X","cat":"kernel","name":"ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)","pid":0,"tid":40,"ts":40,"dur":20,"args":{"device":0,"stream":40,"correlation":1,"Collective name":"coalesced","Group size":4}},
    {"ph":"X","cat":"kernel","name":"ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)","pid":0,"tid":40,"ts":90,"dur":5,"args":{"device":0,"stream":40,"correlation":2}},
    {"ph":"X","cat":"kernel","name":"ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)","pid":0,"tid":40,"ts":120,"dur":5,"args":{"device":0,"stream":40,"correlation":3}},
    {"ph":"X","cat":"kernel","name":"ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)","pid":0,"tid":40,"ts":140,"dur":5,"args":{"device":0,"stream":40,"correlation":4}}
  ])json"));
  KinetoReader reader;
  Rank rank;
  ASSERT_TRUE(reader.Read("batched.json", json, &rank).ok());
  const RankIndex index = BuildRank(rank);
  struct Seen {
    TimeNs start;
    OpClass op_class;
    CommKind comm;
    int32_t peer;
    int64_t bytes;
    bool batched;
    uint32_t batch_index;
  };
  std::vector<Seen> seen;
  for (const DeviceOp& op : index.ops) {
    seen.push_back(
        Seen{op.start, op.op_class, op.comm, op.peer, op.bytes, op.batched, op.batch_index});
  }
  const std::vector<Seen> expected = {
      {30000, OpClass::kCompute, CommKind::kUnknown, -1, -1, false, 0},
      // The batch of two: a send of 1024 bf16 to rank 3 and a receive of 512 from rank 1.
      {40000, OpClass::kComm, CommKind::kSend, 3, 2048, true, 0},
      {40000, OpClass::kComm, CommKind::kRecv, 1, 1024, true, 1},
      // A batch of one: its kernel carries just that send.
      {90000, OpClass::kComm, CommKind::kSend, 3, 2048, false, 0},
      // The per-op path: direction from the c10d::send around the launch, no peer recorded.
      {120000, OpClass::kComm, CommKind::kSend, -1, -1, false, 0},
      // Launched with nothing queued since: stays undirected.
      {140000, OpClass::kComm, CommKind::kSendRecv, -1, -1, false, 0}};
  ASSERT_EQ(seen.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(seen[i].start, expected[i].start);
    EXPECT_EQ(seen[i].op_class, expected[i].op_class);
    EXPECT_EQ(seen[i].comm, expected[i].comm);
    EXPECT_EQ(seen[i].peer, expected[i].peer);
    EXPECT_EQ(seen[i].bytes, expected[i].bytes);
    EXPECT_EQ(seen[i].batched, expected[i].batched);
    EXPECT_EQ(seen[i].batch_index, expected[i].batch_index);
  }
  // Both transfers of the batch lead back to its one kernel.
  EXPECT_EQ(index.ops[1].timeline, index.ops[2].timeline);
  EXPECT_EQ(index.ops[1].interval, index.ops[2].interval);
  EXPECT_TRUE(index.HasP2p());
}

// NCCL's all-to-all runs SendRecv kernels: inside an all-to-all scope they are the all-to-all,
// looking through a record_param_comms that names nothing.
TEST(RankIndexTest, SendRecvKernelsInsideAnAllToAllAreTheAllToAll) {
  const simdjson::padded_string json(std::string(R"json([
    {"ph":"X","cat":"cpu_op","name":"c10d::alltoall_base_","pid":1,"tid":1,"ts":10,"dur":20},
    {"ph":"X","cat":"cpu_op","name":"record_param_comms","pid":1,"tid":1,"ts":11,"dur":18},
    {"ph":"X","cat":"user_annotation","name":"nccl:all_to_all","pid":1,"tid":1,"ts":12,"dur":10},
    {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":13,"dur":2,"args":{"correlation":1}},
    {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":24,"dur":2,"args":{"correlation":2}},
    {"ph":"X","cat":"kernel","name":"ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclDevComm*)","pid":0,"tid":20,"ts":40,"dur":5,"args":{"device":0,"stream":20,"correlation":1}},
    {"ph":"X","cat":"kernel","name":"ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclDevComm*)","pid":0,"tid":20,"ts":50,"dur":5,"args":{"device":0,"stream":20,"correlation":2}}
  ])json"));
  KinetoReader reader;
  Rank rank;
  ASSERT_TRUE(reader.Read("a2a.json", json, &rank).ok());
  const RankIndex index = BuildRank(rank);
  ASSERT_EQ(index.ops.size(), 2u);
  EXPECT_EQ(index.ops[0].comm, CommKind::kAllToAll);  // inside nccl:all_to_all
  EXPECT_EQ(index.ops[1].comm, CommKind::kAllToAll);  // after it, still inside alltoall_base_
  EXPECT_FALSE(index.HasP2p());
}

// NCCL 2.1x runs collectives as generic ncclKernel_SendRecv_* kernels, launched under the
// nccl:* range of the collective (the layout of a 2022 trace of torch 1.12 with NCCL 2.10):
// each kernel is the collective of its launch scope, not a p2p transfer.
TEST(RankIndexTest, SendRecvKernelsOfCollectivesAreNamedByTheirLaunchScope) {
  const simdjson::padded_string json(std::string(R"json([
    {"ph":"X","cat":"user_annotation","name":"nccl:all_reduce","pid":1,"tid":1,"ts":10,"dur":10},
    {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":12,"dur":2,"args":{"correlation":1}},
    {"ph":"X","cat":"user_annotation","name":"nccl:_reduce_scatter_base","pid":1,"tid":1,"ts":30,"dur":10},
    {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":31,"dur":2,"args":{"correlation":2}},
    {"ph":"X","cat":"user_annotation","name":"nccl:_all_gather_base","pid":1,"tid":1,"ts":50,"dur":10},
    {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":51,"dur":2,"args":{"correlation":3}},
    {"ph":"X","cat":"kernel","name":"ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclWorkElem)","pid":0,"tid":20,"ts":15,"dur":5,"args":{"device":0,"stream":20,"correlation":1}},
    {"ph":"X","cat":"kernel","name":"ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclWorkElem)","pid":0,"tid":20,"ts":35,"dur":5,"args":{"device":0,"stream":20,"correlation":2}},
    {"ph":"X","cat":"kernel","name":"ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclWorkElem)","pid":0,"tid":20,"ts":55,"dur":5,"args":{"device":0,"stream":20,"correlation":3}}
  ])json"));
  KinetoReader reader;
  Rank rank;
  ASSERT_TRUE(reader.Read("nccl210.json", json, &rank).ok());
  const RankIndex index = BuildRank(rank);
  std::vector<CommKind> kinds;
  for (const DeviceOp& op : index.ops) kinds.push_back(op.comm);
  EXPECT_THAT(kinds,
              ElementsAre(CommKind::kAllReduce, CommKind::kReduceScatter, CommKind::kAllGather));
  EXPECT_FALSE(index.HasP2p());
}

// Kineto's copies of record_function ranges: the GPU range is a copy when a CPU range of the
// same name contains the launch of its stream's first kernel inside it.
TEST(RankIndexTest, GpuCopiesOfCpuRangesAreMarkedMirrored) {
  const simdjson::padded_string json(std::string(R"json([
    {"ph":"X","cat":"user_annotation","name":"PP:0F0","pid":1,"tid":1,"ts":10,"dur":10},
    {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":11,"dur":2,"args":{"correlation":1}},
    {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":14,"dur":2,"args":{"correlation":2}},
    {"ph":"X","cat":"user_annotation","name":"PP:0F1","pid":1,"tid":1,"ts":30,"dur":10},
    {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":31,"dur":2,"args":{"correlation":3}},
    {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":50,"dur":2,"args":{"correlation":4}},
    {"ph":"X","cat":"kernel","name":"gemm","pid":0,"tid":7,"ts":100,"dur":5,"args":{"device":0,"stream":7,"correlation":1}},
    {"ph":"X","cat":"kernel","name":"gemm","pid":0,"tid":8,"ts":101,"dur":5,"args":{"device":0,"stream":8,"correlation":2}},
    {"ph":"X","cat":"kernel","name":"gemm","pid":0,"tid":7,"ts":110,"dur":5,"args":{"device":0,"stream":7,"correlation":3}},
    {"ph":"X","cat":"kernel","name":"gemm","pid":0,"tid":7,"ts":120,"dur":5,"args":{"device":0,"stream":7,"correlation":4}},
    {"ph":"X","cat":"kernel","name":"gemm","pid":0,"tid":7,"ts":130,"dur":5,"args":{"device":0,"stream":7}},
    {"ph":"X","cat":"gpu_user_annotation","name":"PP:0F0","pid":0,"tid":7,"ts":99.999,"dur":5.002,"args":{"device":0,"stream":7}},
    {"ph":"X","cat":"gpu_user_annotation","name":"PP:0F0","pid":0,"tid":8,"ts":100.999,"dur":5.002,"args":{"device":0,"stream":8}},
    {"ph":"X","cat":"gpu_user_annotation","name":"PP:0F1","pid":0,"tid":7,"ts":109.999,"dur":5.002,"args":{"device":0,"stream":7}},
    {"ph":"X","cat":"gpu_user_annotation","name":"PP:0F0","pid":0,"tid":7,"ts":119.999,"dur":5.002,"args":{"device":0,"stream":7}},
    {"ph":"X","cat":"gpu_user_annotation","name":"PP:0B0","pid":0,"tid":7,"ts":124,"dur":3,"args":{"device":0,"stream":7}},
    {"ph":"X","cat":"gpu_user_annotation","name":"PP:0F1","pid":0,"tid":7,"ts":129.999,"dur":5.002,"args":{"device":0,"stream":7}}
  ])json"));
  KinetoReader reader;
  Rank rank;
  ASSERT_TRUE(reader.Read("mirrors.json", json, &rank).ok());
  const RankIndex index = BuildRank(rank);
  ASSERT_EQ(index.mirrored_annotation.size(), rank.annotations.size());
  std::vector<std::string> mirrored;
  std::vector<std::string> kept;
  for (size_t i = 0; i < rank.annotations.size(); ++i) {
    const Annotation& annotation = rank.annotations[i];
    const std::string label = std::string(rank.name(annotation.name)) + "@" +
                              std::to_string(annotation.start / 1000) +
                              (annotation.scope == AnnotationScope::kGpu ? "gpu" : "cpu");
    (index.mirrored_annotation[i] ? mirrored : kept).push_back(label);
  }
  // Copied: F0 on both streams its kernels ran on, F1; and the F1 whose only kernel has no
  // launch record (a CPU range of that name exists). Kept: both CPU ranges; the F0 whose kernel
  // was launched outside every F0 range (at 50 us); the B0, which no CPU range is named.
  EXPECT_THAT(mirrored,
              ElementsAre("PP:0F0@99gpu", "PP:0F0@100gpu", "PP:0F1@109gpu", "PP:0F1@129gpu"));
  EXPECT_THAT(kept, ElementsAre("PP:0F0@10cpu", "PP:0F1@30cpu", "PP:0F0@119gpu", "PP:0B0@124gpu"));
}

}  // namespace
}  // namespace bubblescope::index
