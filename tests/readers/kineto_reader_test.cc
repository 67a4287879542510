// The Kineto reader on small hand-written traces: both document forms, both timestamp
// conventions, every event kind the model holds, and the per-event damage counters.
#include <cstdint>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "reader_test_util.h"

namespace bubblescope::testing {
namespace {

using ::testing::ElementsAre;

constexpr char kKernelArgs[] = R"("args":{"device":0,"stream":7,"correlation":42})";

TEST(KinetoReaderTest, ObjectFormWithBaseTimeAfterTheEvents) {
  const std::string json = std::string(R"({"schemaVersion":1,"traceEvents":[
    {"ph":"X","cat":"kernel","name":"gemm","pid":0,"tid":7,"ts":1234.567,"dur":10.5,)") +
                           kKernelArgs + R"(}
  ],"baseTimeNanoseconds":1700000000000000000})";
  const ReadResult result = ReadJson(json);
  ASSERT_TRUE(result.status.ok()) << result.status;
  EXPECT_EQ(result.rank.rank, -1);
  EXPECT_EQ(result.rank.source_path, "t.json");
  ASSERT_EQ(result.rank.timelines.size(), 1u);
  const Timeline& stream = result.rank.timelines[0];
  EXPECT_EQ(stream.kind, TimelineKind::kGpuStream);
  EXPECT_EQ(stream.device, 0);
  EXPECT_EQ(stream.id, 7);
  ASSERT_EQ(stream.intervals.size(), 1u);
  const Interval& kernel = stream.intervals[0];
  EXPECT_EQ(kernel.start, 1700000000001234567);  // base + 1234.567 us
  EXPECT_EQ(kernel.end, 1700000000001245067);    // + 10.5 us
  EXPECT_EQ(kernel.correlation, 42);
  EXPECT_EQ(kernel.kind, IntervalKind::kComputeKernel);
  EXPECT_EQ(result.rank.name(kernel.name), "gemm");
  EXPECT_EQ(kernel.comm, kNoIndex);
}

TEST(KinetoReaderTest, BaseTimeBeforeTheEventsGivesTheSameTimes) {
  const std::string json = std::string(R"({"baseTimeNanoseconds":1700000000000000000,
    "traceEvents":[{"ph":"X","cat":"kernel","name":"gemm","pid":0,"tid":7,"ts":1234.567,
    "dur":10.5,)") + kKernelArgs +
                           "}]}";
  const ReadResult result = ReadJson(json);
  ASSERT_TRUE(result.status.ok()) << result.status;
  ASSERT_EQ(IntervalCount(result.rank), 1u);
  EXPECT_EQ(result.rank.timelines[0].intervals[0].start, 1700000000001234567);
}

TEST(KinetoReaderTest, AbsoluteMicrosecondsAndDistributedInfo) {
  const std::string json = std::string(R"({"distributedInfo":{"backend":"nccl","rank":3,
    "world_size":8},"deviceProperties":[{"id":0,"name":"Tesla V100","totalGlobalMem":34079899648,
    "computeMajor":7,"computeMinor":0,"numSms":80,"warpSize":32}],"traceEvents":[
    {"ph":"X","cat":"kernel","name":"gemm","pid":0,"tid":7,"ts":1682725898236567.123,"dur":1.5,)") +
                           kKernelArgs + "}]}";
  const ReadResult result = ReadJson(json);
  ASSERT_TRUE(result.status.ok()) << result.status;
  EXPECT_EQ(result.rank.rank, 3);
  EXPECT_EQ(result.rank.world_size, 8);
  EXPECT_EQ(result.rank.backend, "nccl");
  ASSERT_EQ(result.rank.devices.size(), 1u);
  const DeviceInfo& device = result.rank.devices[0];
  EXPECT_EQ(device.id, 0);
  EXPECT_EQ(device.name, "Tesla V100");
  EXPECT_EQ(device.total_memory_bytes, 34079899648);
  EXPECT_EQ(device.compute_major, 7);
  EXPECT_EQ(device.compute_minor, 0);
  EXPECT_EQ(device.multiprocessors, 80);
  ASSERT_EQ(IntervalCount(result.rank), 1u);
  EXPECT_EQ(result.rank.timelines[0].intervals[0].start, 1682725898236567123);
  EXPECT_EQ(result.rank.timelines[0].intervals[0].end, 1682725898236568623);
}

TEST(KinetoReaderTest, BareArrayWithStringPids) {
  const ReadResult result = ReadJson(R"([
    {"name":"aten::mm","ph":"X","ts":10,"dur":5,"tid":"1","pid":"CPU functions","args":{}},
    {"name":"aten::add","ph":"X","ts":20,"dur":5,"tid":"1","pid":"CPU functions","args":{}},
    {"name":"aten::add","ph":"X","ts":30,"dur":5,"tid":"2","pid":"CPU functions","args":{}}
  ])");
  ASSERT_TRUE(result.status.ok()) << result.status;
  ASSERT_EQ(result.rank.timelines.size(), 2u);
  const Timeline& first = result.rank.timelines[0];
  const Timeline& second = result.rank.timelines[1];
  EXPECT_EQ(first.kind, TimelineKind::kCpuThread);
  EXPECT_LT(first.pid, 0);
  EXPECT_EQ(first.pid, second.pid);  // same string, same synthetic id
  EXPECT_LT(first.id, 0);
  EXPECT_LT(second.id, 0);
  EXPECT_NE(first.id, second.id);
  EXPECT_EQ(IntervalCount(result.rank, IntervalKind::kCpuOp), 3u);
  EXPECT_EQ(result.rank.pid, 0);  // never numeric
  EXPECT_EQ(result.rank.stats.count(ImportCounter::kUnterminatedArray), 0u);

  // The same pid string in another file maps to the same id.
  const ReadResult other =
      ReadJson(R"([{"name":"aten::x","ph":"X","ts":1,"dur":1,"tid":"9","pid":"CPU functions"}])");
  ASSERT_TRUE(other.status.ok()) << other.status;
  EXPECT_EQ(other.rank.timelines[0].pid, first.pid);
}

// Torch without Kineto writes record_function ranges like operators, with no category: a name
// without a namespace is a user range (annotation), one with "::" an operator.
TEST(KinetoReaderTest, CatlessRangesWithoutANamespaceAreAnnotations) {
  const ReadResult result = ReadJson(R"([
    {"name":"ProfilerStep#2","ph":"X","ts":0,"dur":100,"tid":1,"pid":"CPU functions","args":{}},
    {"name":"PP:F3","ph":"X","ts":10,"dur":20,"tid":1,"pid":"CPU functions","args":{}},
    {"name":"aten::linear","ph":"X","ts":11,"dur":5,"tid":1,"pid":"CPU functions","args":{}},
    {"name":"c10d::send","ph":"X","ts":40,"dur":5,"tid":1,"pid":"CPU functions","args":{}},
    {"name":"gloo:send","ph":"X","ts":41,"dur":9,"tid":1,"pid":"CPU functions","args":{}},
    {"name":"autograd::engine::evaluate_function: MmBackward0","ph":"X","ts":60,"dur":9,"tid":1,"pid":"CPU functions","args":{}},
    {"name":"MmBackward0","ph":"X","ts":61,"dur":7,"tid":1,"pid":"CPU functions","args":{}},
    {"name":"Optimizer.step#SGD.step","ph":"X","ts":80,"dur":9,"tid":1,"pid":"CPU functions","args":{}}
  ])");
  ASSERT_TRUE(result.status.ok()) << result.status;
  std::vector<std::string> annotations;
  for (const Annotation& annotation : result.rank.annotations) {
    EXPECT_EQ(annotation.scope, AnnotationScope::kCpu);
    annotations.emplace_back(result.rank.name(annotation.name));
  }
  EXPECT_THAT(annotations, ::testing::ElementsAre("ProfilerStep#2", "PP:F3", "gloo:send",
                                                  "MmBackward0", "Optimizer.step#SGD.step"));
  ASSERT_EQ(result.rank.steps.size(), 1u);
  EXPECT_EQ(IntervalCount(result.rank, IntervalKind::kCpuOp), 2u);      // linear, evaluate_function
  EXPECT_EQ(IntervalCount(result.rank, IntervalKind::kCpuCommOp), 1u);  // c10d::send alone
  // With a category the category decides: a cpu_op without a namespace stays an op.
  const ReadResult categorised = ReadJson(R"([
    {"name":"my_op","cat":"cpu_op","ph":"X","ts":0,"dur":1,"tid":1,"pid":1,"args":{}}
  ])");
  ASSERT_TRUE(categorised.status.ok()) << categorised.status;
  EXPECT_EQ(IntervalCount(categorised.rank, IntervalKind::kCpuOp), 1u);
  EXPECT_TRUE(categorised.rank.annotations.empty());
}

// A stream handle written as text (ROCm): hex or decimal is the stream's id; other text is a
// damaged field, counted, and the event skipped.
TEST(KinetoReaderTest, StreamHandlesAsText) {
  const ReadResult result = ReadJson(R"([
    {"name":"k1","cat":"kernel","ph":"X","ts":1,"dur":1,"pid":0,"tid":0,"args":{"device":0,"stream":"0x7f00","correlation":1}},
    {"name":"k2","cat":"kernel","ph":"X","ts":2,"dur":1,"pid":0,"tid":0,"args":{"device":0,"stream":"0xFFFFFFFFFFFFFFFF","correlation":2}},
    {"name":"k3","cat":"kernel","ph":"X","ts":3,"dur":1,"pid":0,"tid":0,"args":{"device":0,"stream":"12","correlation":3}},
    {"name":"k4","cat":"kernel","ph":"X","ts":4,"dur":1,"pid":0,"tid":0,"args":{"device":0,"stream":"fast","correlation":4}},
    {"name":"k5","cat":"kernel","ph":"X","ts":5,"dur":1,"pid":0,"tid":0,"args":{"device":0,"stream":"0x1ffffffffffffffff","correlation":5}}
  ])");
  ASSERT_TRUE(result.status.ok()) << result.status;
  std::vector<int64_t> streams;
  for (const Timeline& timeline : result.rank.timelines) streams.push_back(timeline.id);
  std::sort(streams.begin(), streams.end());
  EXPECT_THAT(streams, ::testing::ElementsAre(-1, 12, 0x7f00));
  EXPECT_EQ(result.rank.stats.count(ImportCounter::kWrongFieldType), 2u);
}

TEST(KinetoReaderTest, BareArrayWithoutClosingBracketIsLegal) {
  const std::string json =
      "[{\"name\":\"aten::a\",\"ph\":\"X\",\"ts\":10,\"dur\":5,\"tid\":1,\"pid\":2},\n"
      "{\"name\":\"aten::b\",\"ph\":\"X\",\"ts\":20,\"dur\":5,\"tid\":1,\"pid\":2},\n";
  const ReadResult result = ReadJson(json);
  ASSERT_TRUE(result.status.ok()) << result.status;
  EXPECT_EQ(IntervalCount(result.rank, IntervalKind::kCpuOp), 2u);
  EXPECT_EQ(result.rank.pid, 2);
  EXPECT_EQ(result.rank.stats.count(ImportCounter::kUnterminatedArray), 1u);
  EXPECT_EQ(result.rank.stats.first_offset(ImportCounter::kUnterminatedArray),
            static_cast<int64_t>(json.size()));
  EXPECT_EQ(result.rank.stats.count(ImportCounter::kTruncated), 0u);
  EXPECT_FALSE(result.rank.stats.HasAtLeast(Severity::kWarning));
}

TEST(KinetoReaderTest, UnicodeAndEscapesInNames) {
  const ReadResult result = ReadJson(
      R"([{"ph":"X","cat":"cpu_op","name":"caf\u00e9 \"q\" \\ \ud83d\ude00 \u4e2d","pid":1,"tid":1,"ts":1,"dur":1},
          {"ph":"X","cat":"cpu_op","name":"raw é 中","pid":1,"tid":1,"ts":2,"dur":1}])");
  ASSERT_TRUE(result.status.ok()) << result.status;
  const std::vector<const Interval*> ops = AllIntervals(result.rank);
  ASSERT_EQ(ops.size(), 2u);
  EXPECT_EQ(result.rank.name(ops[0]->name), "caf\xC3\xA9 \"q\" \\ \xF0\x9F\x98\x80 \xE4\xB8\xAD");
  EXPECT_EQ(result.rank.name(ops[1]->name), "raw \xC3\xA9 \xE4\xB8\xAD");
}

TEST(KinetoReaderTest, IntegersFloatsAndHugeCorrelationIds) {
  const ReadResult result = ReadJson(R"({"traceEvents":[
    {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":10,"tid":11,"ts":100,"dur":2.0,
     "args":{"cbid":211,"correlation":9223372036854775807}},
    {"ph":"X","cat":"cuda_driver","name":"cuLaunchKernel","pid":10.0,"tid":11,"ts":1e2,"dur":1,
     "args":{"correlation":5}}]})");
  ASSERT_TRUE(result.status.ok()) << result.status;
  ASSERT_EQ(result.rank.timelines.size(), 1u);  // pid 10.0 is pid 10
  const Timeline& thread = result.rank.timelines[0];
  EXPECT_EQ(thread.kind, TimelineKind::kCpuThread);
  EXPECT_EQ(thread.pid, 10);
  EXPECT_EQ(thread.id, 11);
  ASSERT_EQ(thread.intervals.size(), 2u);
  // Same start: the longer one first.
  EXPECT_EQ(thread.intervals[0].correlation, INT64_MAX);
  EXPECT_EQ(thread.intervals[0].end - thread.intervals[0].start, 2000);
  EXPECT_EQ(thread.intervals[1].correlation, 5);
  EXPECT_EQ(thread.intervals[1].kind, IntervalKind::kRuntime);
  EXPECT_EQ(result.rank.pid, 10);
}

TEST(KinetoReaderTest, NcclArgsBecomeCommInfo) {
  const ReadResult result = ReadJson(R"j({"distributedInfo":{"rank":0},"traceEvents":[
    {"ph":"X","cat":"kernel","name":"ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)",
     "pid":0,"tid":20,"ts":100,"dur":50,"args":{"device":0,"stream":20,"correlation":7,
     "Collective name":"send","In msg nelems":1024,"Out msg nelems":1024,"dtype":"BFloat16",
     "Group size":2,"Process Group Name":"3","Process Group Description":"pp",
     "Process Group Ranks":"[0, 4]","Src Rank":0,"Dst Rank":4}},
    {"ph":"X","cat":"kernel","name":"ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)",
     "pid":0,"tid":20,"ts":200,"dur":50,"args":{"device":0,"stream":20,"correlation":8,
     "Collective name":"recv","In msg nelems":10,"Out msg nelems":10,"dtype":"Float",
     "Group size":2,"Process Group Name":"3","Process Group Ranks":[0,4],"Src Rank":4,"Dst Rank":0}},
    {"ph":"X","cat":"kernel","name":"ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)",
     "pid":0,"tid":21,"ts":300,"dur":5,"args":{"device":0,"stream":21,"correlation":9}},
    {"ph":"X","cat":"kernel","name":"ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
     "pid":0,"tid":21,"ts":400,"dur":5,"args":{"device":0,"stream":21,"correlation":10,
     "Collective name":"_allgather_base","In msg nelems":100,"Out msg nelems":800,"dtype":"Float",
     "Group size":8,"Process Group Name":"0","Process Group Ranks":"[0, 1, 2, 3, 4, 5, 6, 7]"}},
    {"ph":"X","cat":"kernel","name":"void at::native::vectorized_elementwise_kernel<4>(int)",
     "pid":0,"tid":7,"ts":1,"dur":5,"args":{"device":0,"stream":7,"correlation":11}}]})j");
  ASSERT_TRUE(result.status.ok()) << result.status;
  const Rank& rank = result.rank;
  EXPECT_EQ(IntervalCount(rank, IntervalKind::kCommKernel), 4u);
  EXPECT_EQ(IntervalCount(rank, IntervalKind::kComputeKernel), 1u);
  ASSERT_EQ(rank.comms.size(), 4u);
  ASSERT_EQ(rank.process_groups.size(), 2u);
  EXPECT_EQ(rank.process_groups[0].name, "3");
  EXPECT_THAT(rank.process_groups[0].ranks, ElementsAre(0, 4));
  EXPECT_EQ(rank.process_groups[1].name, "0");
  EXPECT_THAT(rank.process_groups[1].ranks, ElementsAre(0, 1, 2, 3, 4, 5, 6, 7));

  const Timeline* p2p = FindTimeline(rank, TimelineKind::kGpuStream, 0, 20);
  ASSERT_NE(p2p, nullptr);
  ASSERT_EQ(p2p->intervals.size(), 2u);
  const CommInfo* send = rank.comm(p2p->intervals[0]);
  ASSERT_NE(send, nullptr);
  EXPECT_EQ(send->kind, CommKind::kSend);
  EXPECT_EQ(send->bytes, 2048);  // 1024 x BFloat16
  EXPECT_EQ(send->peer, 4);
  EXPECT_EQ(send->group_size, 2);
  EXPECT_EQ(send->process_group, 0u);
  EXPECT_EQ(rank.name(send->collective), "send");
  EXPECT_EQ(rank.name(send->dtype), "BFloat16");
  const CommInfo* recv = rank.comm(p2p->intervals[1]);
  ASSERT_NE(recv, nullptr);
  EXPECT_EQ(recv->kind, CommKind::kRecv);
  EXPECT_EQ(recv->bytes, 40);
  EXPECT_EQ(recv->peer, 4);
  EXPECT_EQ(recv->process_group, 0u);  // same group, written as an array this time

  const Timeline* collectives = FindTimeline(rank, TimelineKind::kGpuStream, 0, 21);
  ASSERT_NE(collectives, nullptr);
  ASSERT_EQ(collectives->intervals.size(), 2u);
  const CommInfo* allreduce = rank.comm(collectives->intervals[0]);
  ASSERT_NE(allreduce, nullptr);
  EXPECT_EQ(allreduce->kind, CommKind::kAllReduce);  // from the kernel name
  EXPECT_EQ(allreduce->bytes, -1);
  EXPECT_EQ(allreduce->peer, -1);
  EXPECT_EQ(allreduce->process_group, kNoIndex);
  EXPECT_EQ(allreduce->collective, kNoName);
  const CommInfo* allgather = rank.comm(collectives->intervals[1]);
  ASSERT_NE(allgather, nullptr);
  EXPECT_EQ(allgather->kind, CommKind::kAllGather);
  EXPECT_EQ(allgather->bytes, 3200);  // the larger side: 800 x Float
  EXPECT_EQ(allgather->group_size, 8);
  EXPECT_EQ(allgather->process_group, 1u);
}

TEST(KinetoReaderTest, ProcessGroupsFromPgConfig) {
  const ReadResult list = ReadJson(R"j({"distributedInfo":{"rank":1,"pg_config":[
      {"pg_name":"0","pg_desc":"default_pg","ranks":[0,1,2,3]},
      {"pg_name":"1","pg_desc":"pp","ranks":"[1, 3]"}]},
    "traceEvents":[{"ph":"X","cat":"kernel","name":"ncclDevKernel_SendRecv()","pid":0,"tid":3,
      "ts":1,"dur":1,"args":{"device":0,"stream":3,"Collective name":"recv","Src Rank":3,
      "Process Group Name":"1","Process Group Ranks":"[1, 3]"}}]})j");
  ASSERT_TRUE(list.status.ok()) << list.status;
  ASSERT_EQ(list.rank.process_groups.size(), 2u);
  EXPECT_EQ(list.rank.process_groups[0].name, "0");
  EXPECT_THAT(list.rank.process_groups[0].ranks, ElementsAre(0, 1, 2, 3));
  EXPECT_THAT(list.rank.process_groups[1].ranks, ElementsAre(1, 3));
  ASSERT_EQ(list.rank.comms.size(), 1u);
  EXPECT_EQ(list.rank.comms[0].process_group, 1u);
  EXPECT_EQ(list.rank.comms[0].peer, 3);

  const ReadResult dict = ReadJson(R"({"distributedInfo":{"pg_config":{
      "0":{"pg_name":"0","pg_desc":"default_pg","ranks":[0,1]}}},
    "traceEvents":[{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":1,"dur":1}]})");
  ASSERT_TRUE(dict.status.ok()) << dict.status;
  ASSERT_EQ(dict.rank.process_groups.size(), 1u);
  EXPECT_THAT(dict.rank.process_groups[0].ranks, ElementsAre(0, 1));
}

TEST(KinetoReaderTest, AnnotationsStepsAndCpuCommOps) {
  const ReadResult result = ReadJson(R"({"traceEvents":[
    {"ph":"X","cat":"cpu_op","name":"ProfilerStep#6","pid":5,"tid":6,"ts":100,"dur":100},
    {"ph":"X","cat":"user_annotation","name":"ProfilerStep#5","pid":5,"tid":6,"ts":0,"dur":100},
    {"ph":"X","cat":"user_annotation","name":"nccl:send","pid":5,"tid":6,"ts":10,"dur":1},
    {"ph":"X","cat":"gpu_user_annotation","name":"PP:F0","pid":0,"tid":7,"ts":20,"dur":30,
     "args":{"device":1,"stream":9}},
    {"ph":"X","cat":"cpu_op","name":"c10d::send","pid":5,"tid":6,"ts":11,"dur":2},
    {"ph":"X","cat":"cpu_op","name":"nccl:recv","pid":5,"tid":6,"ts":14,"dur":2},
    {"ph":"X","cat":"cpu_op","name":"record_param_comms","pid":5,"tid":6,"ts":16,"dur":2,
     "args":{"Collective name":"allreduce","In msg nelems":4,"Out msg nelems":4,"dtype":"Long"}},
    {"ph":"X","cat":"cpu_op","name":"c10d::_resolve_process_group","pid":5,"tid":6,"ts":18,"dur":1},
    {"ph":"X","cat":"cpu_op","name":"aten::mm","pid":5,"tid":6,"ts":19,"dur":1},
    {"ph":"X","cat":"cpu_op","name":"aten::mm","pid":5,"tid":6,"ts":150,"dur":1}]})");
  ASSERT_TRUE(result.status.ok()) << result.status;
  const Rank& rank = result.rank;
  ASSERT_EQ(rank.steps.size(), 2u);
  EXPECT_EQ(rank.steps[0].number, 5);
  EXPECT_EQ(rank.steps[0].start, 0);
  EXPECT_EQ(rank.steps[0].end, 100000);
  EXPECT_EQ(rank.steps[1].number, 6);
  EXPECT_EQ(rank.steps[1].start, 100000);
  EXPECT_EQ(rank.steps[1].end, 200000);

  ASSERT_EQ(rank.annotations.size(), 4u);  // sorted by start
  EXPECT_EQ(rank.name(rank.annotations[0].name), "ProfilerStep#5");
  EXPECT_EQ(rank.annotations[0].scope, AnnotationScope::kCpu);
  EXPECT_EQ(rank.annotations[0].thread_or_stream, 6);
  EXPECT_EQ(rank.name(rank.annotations[1].name), "nccl:send");
  const Annotation& gpu = rank.annotations[2];
  EXPECT_EQ(rank.name(gpu.name), "PP:F0");
  EXPECT_EQ(gpu.scope, AnnotationScope::kGpu);
  EXPECT_EQ(gpu.device, 1);
  EXPECT_EQ(gpu.thread_or_stream, 9);
  EXPECT_EQ(gpu.start, 20000);
  EXPECT_EQ(gpu.end, 50000);
  EXPECT_EQ(rank.name(rank.annotations[3].name), "ProfilerStep#6");

  EXPECT_EQ(IntervalCount(rank, IntervalKind::kCpuCommOp), 3u);
  EXPECT_EQ(IntervalCount(rank, IntervalKind::kCpuOp), 3u);
  ASSERT_EQ(rank.comms.size(), 3u);
  EXPECT_EQ(rank.comms[0].kind, CommKind::kSend);
  EXPECT_EQ(rank.comms[1].kind, CommKind::kRecv);
  EXPECT_EQ(rank.comms[2].kind, CommKind::kAllReduce);
  EXPECT_EQ(rank.comms[2].bytes, 32);
}

TEST(KinetoReaderTest, MemorySamples) {
  const ReadResult result = ReadJson(R"({"traceEvents":[
    {"ph":"X","cat":"cpu_op","name":"aten::empty","pid":1,"tid":1,"ts":1,"dur":1},
    {"ph":"i","cat":"[memory]","name":"[memory]","pid":1,"tid":1,"ts":20,"s":"t",
     "args":{"Device Type":1,"Device Id":0,"Total Allocated":1000,"Total Reserved":2048,
     "Bytes":512,"Addr":123}},
    {"ph":"i","cat":"cpu_instant_event","s":"t","name":"[memory]","pid":1,"tid":1,"ts":10,
     "args":{"Device Id":1,"Total Allocated":5,"Total Reserved":6}},
    {"ph":"i","cat":"[memory]","name":"[memory]","pid":1,"tid":1,"ts":30,
     "args":{"Device Type":0,"Device Id":-1,"Total Allocated":7,"Total Reserved":8}},
    {"ph":"i","cat":"[memory]","name":"[memory]","pid":1,"tid":1,"ts":40,
     "args":{"Device Type":1,"Device Id":0,"Total Allocated":7}}]})");
  ASSERT_TRUE(result.status.ok()) << result.status;
  const Rank& rank = result.rank;
  ASSERT_EQ(rank.memory.size(), 3u);
  EXPECT_EQ(rank.memory[0].time, 10000);
  EXPECT_EQ(rank.memory[0].allocated_bytes, 5);
  EXPECT_EQ(rank.memory[0].reserved_bytes, 6);
  EXPECT_EQ(rank.memory[0].device, 1);
  EXPECT_EQ(rank.memory[1].time, 20000);
  EXPECT_EQ(rank.memory[1].allocated_bytes, 1000);
  EXPECT_EQ(rank.memory[1].reserved_bytes, 2048);
  EXPECT_EQ(rank.memory[1].device, 0);
  EXPECT_FALSE(rank.memory[1].host);
  // Device Type 0: the CPU allocator's memory.
  EXPECT_EQ(rank.memory[2].time, 30000);
  EXPECT_EQ(rank.memory[2].allocated_bytes, 7);
  EXPECT_EQ(rank.memory[2].device, -1);
  EXPECT_TRUE(rank.memory[2].host);
  EXPECT_EQ(rank.stats.count(ImportCounter::kBadMemorySample), 1u);
  EXPECT_EQ(rank.stats.count(ImportCounter::kIgnoredCategory), 0u);
}

// 2021 Kineto (the layout of torch 1.9's profiler, as HTA's and tb_plugin's samples hold it):
// one [memory] event per allocation or free, its size in "Bytes", no totals. Each device's
// events are summed in time order (written out of order here) into a running total, counted
// from its lowest point (a free of memory allocated before the trace began); none is damage.
TEST(KinetoReaderTest, MemoryEventsOfTheOlderFormatAreSummedPerDevice) {
  const ReadResult result = ReadJson(R"({"traceEvents":[
    {"ph":"X","cat":"cpu_op","name":"aten::empty","pid":1,"tid":1,"ts":1,"dur":1},
    {"ph":"i","cat":"cpu_instant_event","s":"t","name":"[memory]","pid":1,"tid":1,"ts":10,
     "args":{"Device Type":1,"Device Id":0,"Bytes":1000}},
    {"ph":"i","cat":"cpu_instant_event","s":"t","name":"[memory]","pid":1,"tid":1,"ts":30,
     "args":{"Device Type":1,"Device Id":0,"Bytes":-1500}},
    {"ph":"i","cat":"cpu_instant_event","s":"t","name":"[memory]","pid":1,"tid":1,"ts":20,
     "args":{"Device Type":1,"Device Id":0,"Bytes":4000}},
    {"ph":"i","cat":"cpu_instant_event","s":"t","name":"[memory]","pid":1,"tid":1,"ts":15,
     "args":{"Device Type":1,"Device Id":1,"Bytes":64}},
    {"ph":"i","cat":"cpu_instant_event","s":"t","name":"[memory]","pid":1,"tid":1,"ts":40,
     "args":{"Device Type":1,"Device Id":0,"Bytes":-4000}},
    {"ph":"i","cat":"cpu_instant_event","s":"t","name":"[memory]","pid":1,"tid":1,"ts":50,
     "args":{"Device Type":1,"Device Id":0,"Bytes":-600}}]})");
  ASSERT_TRUE(result.status.ok()) << result.status;
  const Rank& rank = result.rank;
  EXPECT_EQ(rank.stats.count(ImportCounter::kBadMemorySample), 0u);
  struct Seen {
    TimeNs time;
    int32_t device;
    int64_t allocated;
  };
  std::vector<Seen> seen;
  for (const MemorySample& sample : rank.memory) {
    seen.push_back({sample.time, sample.device, sample.allocated_bytes});
    EXPECT_EQ(sample.reserved_bytes, sample.allocated_bytes);
    EXPECT_FALSE(sample.host);
  }
  // Device 0 in time order: +1000, +4000, -1500, -4000, -600 gives 1000, 5000, 3500, -500,
  // -1100; from its lowest point (-1100): 2100, 6100, 4600, 600, 0. Device 1: 64, lowest 0.
  const std::vector<Seen> expected = {{10000, 0, 2100}, {15000, 1, 64},  {20000, 0, 6100},
                                      {30000, 0, 4600}, {40000, 0, 600}, {50000, 0, 0}};
  ASSERT_EQ(seen.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(seen[i].time, expected[i].time);
    EXPECT_EQ(seen[i].device, expected[i].device);
    EXPECT_EQ(seen[i].allocated, expected[i].allocated);
  }
}

// An MTIA trace's device work (category mtia_ccp_events, placed by pid and tid as Kineto writes
// it) is device activity: a GPU-stream timeline of compute, not ignored events that left a
// "cpu" rank.
TEST(KinetoReaderTest, MtiaDeviceEventsAreDeviceWork) {
  const ReadResult result = ReadJson(R"({"traceEvents":[
    {"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":1,"dur":5},
    {"ph":"X","cat":"mtia_ccp_events","name":"mtia_kernel_mm","pid":2,"tid":3,"ts":10,"dur":4},
    {"ph":"X","cat":"mtia_ccp_events","name":"mtia_kernel_add","pid":2,"tid":3,"ts":20,"dur":2}]})");
  ASSERT_TRUE(result.status.ok()) << result.status;
  EXPECT_TRUE(result.rank.HasGpuActivity());
  std::vector<TimeNs> starts;
  for (const Timeline& timeline : result.rank.timelines) {
    if (timeline.kind != TimelineKind::kGpuStream) continue;
    for (const Interval& interval : timeline.intervals) {
      EXPECT_EQ(interval.kind, IntervalKind::kComputeKernel);
      starts.push_back(interval.start);
    }
  }
  EXPECT_THAT(starts, ElementsAre(10000, 20000));
  EXPECT_EQ(result.rank.stats.count(ImportCounter::kIgnoredCategory), 0u);
}

TEST(KinetoReaderTest, FlowsFillMissingCorrelationIds) {
  const std::string json = R"({"traceEvents":[
    {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":100,"tid":101,"ts":5,"dur":2,"args":{}},
    {"ph":"s","id":77,"pid":100,"tid":101,"ts":5,"cat":"ac2g","name":"ac2g"},
    {"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":10,"dur":3,"args":{"device":0,"stream":7}},
    {"ph":"f","id":77,"pid":0,"tid":7,"ts":10,"cat":"ac2g","name":"ac2g","bp":"e"},
    {"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":20,"dur":3,"args":{"device":0,"stream":7,"correlation":5}},
    {"ph":"f","id":6,"pid":0,"tid":7,"ts":20,"cat":"ac2g","name":"ac2g","bp":"e"},
    {"ph":"f","id":99,"pid":0,"tid":7,"ts":999,"cat":"ac2g","name":"ac2g","bp":"e"}]})";
  const ReadResult result = ReadJson(json);
  ASSERT_TRUE(result.status.ok()) << result.status;
  const Timeline* cpu = FindTimeline(result.rank, TimelineKind::kCpuThread, 100, 101);
  const Timeline* gpu = FindTimeline(result.rank, TimelineKind::kGpuStream, 0, 7);
  ASSERT_NE(cpu, nullptr);
  ASSERT_NE(gpu, nullptr);
  EXPECT_EQ(cpu->intervals[0].correlation, 77);
  ASSERT_EQ(gpu->intervals.size(), 2u);
  EXPECT_EQ(gpu->intervals[0].correlation, 77);
  EXPECT_EQ(gpu->intervals[1].correlation, 5);  // an id it already had stays
  EXPECT_EQ(result.rank.stats.count(ImportCounter::kUnmatchedFlow), 1u);
  EXPECT_EQ(result.rank.stats.first_offset(ImportCounter::kUnmatchedFlow),
            static_cast<int64_t>(json.find(R"({"ph":"f","id":99)")));
}

// Each damaged event is skipped, counted once at its own offset, and the rest is read.
TEST(KinetoReaderTest, EveryDamageCounterAtItsEventOffset) {
  struct Case {
    const char* event;
    ImportCounter counter;
  };
  const std::vector<Case> cases = {
      {R"(42)", ImportCounter::kEventNotObject},
      {R"(["ph","X"])", ImportCounter::kEventNotObject},
      {R"({"ph":"X","cat":"cpu_op","name":"a","pid":1,"tid":1,"ts":1})",
       ImportCounter::kMissingField},
      {R"({"cat":"cpu_op","name":"a","pid":1,"tid":1,"ts":1,"dur":1})",
       ImportCounter::kMissingField},
      {R"({"ph":"X","cat":"kernel","name":"k","ts":1,"dur":1,"args":{}})",
       ImportCounter::kMissingField},
      {R"({"ph":"X","cat":"cpu_op","name":"a","pid":1,"tid":1,"ts":"soon","dur":1})",
       ImportCounter::kWrongFieldType},
      {R"({"ph":"X","cat":"cpu_op","name":7,"pid":1,"tid":1,"ts":1,"dur":1})",
       ImportCounter::kWrongFieldType},
      {R"({"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":1,"dur":1,"args":{"correlation":"x"}})",
       ImportCounter::kWrongFieldType},
      {R"({"ph":"X","cat":"cpu_op","name":"a","pid":1,"tid":1,"ts":1,"dur":-1})",
       ImportCounter::kNegativeDuration},
      {R"({"ph":"X","cat":"cpu_op","name":"a","pid":1,"tid":1,"ts":1e300,"dur":1})",
       ImportCounter::kBadNumber},
      {R"({"ph":"X","cat":"cpu_op","name":"a","pid":1,"tid":1,"ts":12x,"dur":1})",
       ImportCounter::kBadNumber},
      {R"({"ph":"X","cat":"cpu_op","name":"a","pid":1,"tid":1,"ts":9223372036854775.807,"dur":1})",
       ImportCounter::kBadNumber},  // end overflows
      // An id that does not fit 32 bits is an id problem, not a timestamp one.
      {R"({"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":1,"dur":1,"args":{"device":99999999999,"stream":7}})",
       ImportCounter::kBadId},
      // Outside the model's time range (±(2^62 - 1) ns, 4611686018427387.903 µs): start or end.
      {R"({"ph":"X","cat":"cpu_op","name":"a","pid":1,"tid":1,"ts":-9000000000000000,"dur":1})",
       ImportCounter::kTimeOutOfRange},
      {R"({"ph":"X","cat":"cpu_op","name":"a","pid":1,"tid":1,"ts":4611686018427387,"dur":1})",
       ImportCounter::kTimeOutOfRange},
      {R"({"ph":"i","cat":"[memory]","name":"[memory]","pid":1,"tid":1,"ts":5e15,"args":{"Device Type":1,"Device Id":0,"Total Allocated":1,"Total Reserved":1}})",
       ImportCounter::kTimeOutOfRange},
      {R"({"ph":"B","name":"a","pid":1,"tid":1,"ts":1})", ImportCounter::kUnknownPhase},
      {R"({"ph":"X","cat":"python_function","name":"f","pid":1,"tid":1,"ts":1,"dur":1})",
       ImportCounter::kIgnoredCategory},
      {R"({"ph":"i","name":"Iteration Start","pid":"Traces","tid":"x","ts":1})",
       ImportCounter::kIgnoredCategory},
      {R"({"ph":"i","cat":"[memory]","name":"[memory]","pid":1,"tid":1,"ts":1,"args":{"Device Type":1,"Device Id":0,"Total Allocated":"x","Total Reserved":1}})",
       ImportCounter::kBadMemorySample},
      {R"({"ph":"f","id":1,"pid":1,"tid":1,"ts":1,"cat":"ac2g","name":"ac2g"})",
       ImportCounter::kUnmatchedFlow},
  };
  const std::string good =
      R"({"ph":"X","cat":"cpu_op","name":"ok","pid":1,"tid":1,"ts":5,"dur":1})";
  for (const Case& c : cases) {
    std::string json = "{\"traceEvents\": [" + good + ",\n  ";
    const int64_t offset = static_cast<int64_t>(json.size());
    json += c.event;
    json += ", " + good + "]}";
    const ReadResult result = ReadJson(json);
    ASSERT_TRUE(result.status.ok()) << c.event << ": " << result.status;
    EXPECT_EQ(IntervalCount(result.rank, IntervalKind::kCpuOp), 2u) << c.event;
    for (size_t i = 0; i < kImportCounterCount; ++i) {
      const auto counter = static_cast<ImportCounter>(i);
      EXPECT_EQ(result.rank.stats.count(counter), counter == c.counter ? 1u : 0u)
          << c.event << " counter " << CounterSpec(counter).name;
    }
    EXPECT_EQ(result.rank.stats.first_offset(c.counter), offset) << c.event;
  }
}

// baseTimeNanoseconds can carry a relative time past the range: that event is dropped and
// counted, the rest kept.
TEST(KinetoReaderTest, ABaseTimeThatCarriesTimesOutOfRangeDropsThoseEvents) {
  const ReadResult result = ReadJson(R"({"baseTimeNanoseconds": 4611686018000000000,
    "traceEvents":[
    {"ph":"X","cat":"cpu_op","name":"kept","pid":1,"tid":1,"ts":5,"dur":1},
    {"ph":"X","cat":"cpu_op","name":"past the range","pid":1,"tid":1,"ts":500000,"dur":1}]})");
  ASSERT_TRUE(result.status.ok()) << result.status;
  EXPECT_EQ(IntervalCount(result.rank, IntervalKind::kCpuOp), 1u);
  EXPECT_EQ(result.rank.stats.count(ImportCounter::kTimeOutOfRange), 1u);
}

TEST(KinetoReaderTest, MetadataEventsAreNotCounted) {
  const ReadResult result = ReadJson(R"({"traceEvents":[
    {"name":"process_name","ph":"M","ts":1,"pid":1,"tid":0,"args":{"name":"python3"}},
    {"ph":"M","name":"thread_name","pid":1,"tid":2,"args":{"name":"main"}},
    {"ph":"X","cat":"cpu_op","name":"ok","pid":1,"tid":1,"ts":5,"dur":1}]})");
  ASSERT_TRUE(result.status.ok()) << result.status;
  for (size_t i = 0; i < kImportCounterCount; ++i) {
    EXPECT_EQ(result.rank.stats.count(static_cast<ImportCounter>(i)), 0u);
  }
}

// The collector keeps rank, world size, host, pid and devices in the args of a first "M" event
// of the array form; they fill the same Rank fields as distributedInfo and deviceProperties.
TEST(KinetoReaderTest, CollectorProcessMetadataEventFillsTheRank) {
  const ReadResult result = ReadJson(R"([
    {"ph":"M","name":"bubblescope_process","pid":4242,"tid":0,"args":{
      "distributedInfo":{"rank":3,"world_size":8,"backend":"nccl"},"host":"node-a","pid":4242,
      "local_rank":3,"clock":{"source":"cupti"},
      "deviceProperties":[{"id":1,"name":"H100","totalGlobalMem":85000000000,
                           "computeMajor":9,"computeMinor":0,"numSms":132}]}},
    {"ph":"M","name":"bubblescope_process","pid":1,"tid":0,"args":{"host":7}},
    {"ph":"M","args":{"distributedInfo":{"rank":5}},"name":"bubblescope_process","pid":1,"tid":0},
    {"ph":"X","cat":"kernel","name":"gemm","pid":1,"tid":7,"ts":1,"dur":1,"args":{"device":1,"stream":7}}
  ])");
  ASSERT_TRUE(result.status.ok()) << result.status;
  const Rank& rank = result.rank;
  EXPECT_EQ(rank.rank, 3);  // the third event's args come before its name: not read
  EXPECT_EQ(rank.world_size, 8);
  EXPECT_EQ(rank.backend, "nccl");
  EXPECT_EQ(rank.host, "node-a");  // the second event's number is counted, not taken
  EXPECT_EQ(rank.pid, 4242);
  ASSERT_EQ(rank.devices.size(), 1u);
  EXPECT_EQ(rank.devices[0].id, 1);
  EXPECT_EQ(rank.devices[0].name, "H100");
  EXPECT_EQ(rank.devices[0].total_memory_bytes, 85000000000);
  EXPECT_EQ(rank.devices[0].compute_major, 9);
  EXPECT_EQ(rank.devices[0].multiprocessors, 132);
  EXPECT_EQ(rank.stats.count(ImportCounter::kWrongFieldType), 1u);
  EXPECT_EQ(rank.stats.count(ImportCounter::kUnterminatedArray), 0u);
  EXPECT_EQ(IntervalCount(rank), 1u);
}

// The collector writes its loss totals at every flush where one grew; each loss is counted once,
// as a warning, from the first event that shows it.
TEST(KinetoReaderTest, CollectorDroppedTotalsCountEachLossOnce) {
  const std::string json = R"([
    {"ph":"X","cat":"kernel","name":"gemm","pid":1,"tid":7,"ts":1,"dur":1,"args":{"device":1,"stream":7}},
    {"ph":"M","name":"bubblescope_dropped","pid":1,"tid":0,"args":{"cupti_records":5,"buffer_requests":0,"nvtx_ranges":0,"nccl_events":0}},
    {"ph":"M","name":"bubblescope_dropped","pid":1,"tid":0,"args":{"cupti_records":12,"buffer_requests":2,"nvtx_ranges":0,"nccl_events":1}},
    {"ph":"M","name":"bubblescope_dropped","pid":1,"tid":0,"args":{"cupti_records":-1,"buffer_requests":"2","nvtx_ranges":0,"nccl_events":1,"future_kind":9}},
    {"ph":"M","args":{"nvtx_ranges":40},"name":"bubblescope_dropped","pid":1,"tid":0}
  ])";
  const ReadResult result = ReadJson(json);
  ASSERT_TRUE(result.status.ok()) << result.status;
  const ImportStats& stats = result.rank.stats;
  EXPECT_EQ(stats.count(ImportCounter::kCollectorDroppedRecords), 12u);  // 5, then 7 more
  EXPECT_EQ(stats.first_offset(ImportCounter::kCollectorDroppedRecords),
            static_cast<int64_t>(json.find("5,\"buffer_requests\"")));
  EXPECT_EQ(stats.count(ImportCounter::kCollectorRefusedBuffers), 2u);
  EXPECT_EQ(stats.count(ImportCounter::kCollectorDroppedNcclEvents), 1u);
  // The last event's args come before its name: not read, as for bubblescope_process.
  EXPECT_EQ(stats.count(ImportCounter::kCollectorDroppedRanges), 0u);
  // A negative total and a quoted one are damage, counted as such; unknown keys are skipped.
  EXPECT_EQ(stats.count(ImportCounter::kBadNumber), 1u);
  EXPECT_EQ(stats.count(ImportCounter::kWrongFieldType), 1u);
  EXPECT_EQ(CounterSpec(ImportCounter::kCollectorDroppedRecords).severity, Severity::kWarning);
  EXPECT_EQ(IntervalCount(result.rank), 1u);
}

// Without NCCL's args a p2p kernel is only "SendRecv", and that is what the reader records: which
// way it went is derived later from the op that launched it (tests/index/rank_index_test.cc).
TEST(KinetoReaderTest, P2pKernelsWithoutArgsStaySendRecv) {
  const ReadResult result = ReadJson(R"json([
    {"ph":"X","cat":"cpu_op","name":"c10d::send","pid":1,"tid":1,"ts":10,"dur":10},
    {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":12,"dur":2,"args":{"correlation":1}},
    {"ph":"X","cat":"kernel","name":"ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)","pid":0,"tid":20,"ts":15,"dur":5,"args":{"device":0,"stream":20,"correlation":1}}
  ])json");
  ASSERT_TRUE(result.status.ok()) << result.status;
  const Rank& rank = result.rank;
  ASSERT_EQ(rank.timelines.front().kind, TimelineKind::kGpuStream);
  const Interval& kernel = rank.timelines.front().intervals.front();
  ASSERT_NE(rank.comm(kernel), nullptr);
  EXPECT_EQ(rank.comm(kernel)->kind, CommKind::kSendRecv);
}

TEST(KinetoReaderTest, ReaderIsReusableAcrossFiles) {
  KinetoReader reader;
  Rank rank;
  const simdjson::padded_string big(std::string(R"({"traceEvents":[
    {"ph":"X","cat":"cpu_op","name":"a","pid":1,"tid":1,"ts":5,"dur":1},
    {"ph":"X","cat":"cpu_op","name":"b","pid":1,"tid":1,"ts":6,"dur":1}]})"));
  const simdjson::padded_string small(
      std::string(R"([{"ph":"X","cat":"cpu_op","name":"c","pid":2,"tid":2,"ts":1,"dur":1}])"));
  ASSERT_TRUE(reader.Read("big", big, &rank).ok());
  EXPECT_EQ(IntervalCount(rank), 2u);
  ASSERT_TRUE(reader.Read("small", small, &rank).ok());
  EXPECT_EQ(IntervalCount(rank), 1u);  // nothing left over from the first file
  EXPECT_EQ(rank.source_path, "small");
  EXPECT_EQ(rank.name(rank.timelines[0].intervals[0].name), "c");
}

}  // namespace
}  // namespace bubblescope::testing
