#include "writers/kineto_writer.h"

#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "gtest/gtest.h"
#include "simdjson.h"
#include "support/test_files.h"
#include "writers/writer_test_rank.h"

namespace bubblescope {
namespace {

using testing::kBase;
using testing::MakeWriterTestRank;

// Parses `text` with the simdjson DOM API (a different parser from the reader's On-Demand one).
class ParsedTrace {
 public:
  explicit ParsedTrace(const std::string& text) {
    error_ = parser_.parse(text).get(root_);
    if (error_) return;
    simdjson::dom::array events;
    if (root_.is_array()) {
      events = root_.get_array().value_unsafe();
    } else {
      error_ = root_["traceEvents"].get(events);
      if (error_) return;
    }
    for (simdjson::dom::element event : events) events_.push_back(event);
  }

  bool ok() const { return error_ == simdjson::SUCCESS; }
  simdjson::dom::element root() const { return root_; }
  const std::vector<simdjson::dom::element>& events() const { return events_; }

  // Events with this phase and name (and category unless `category` is empty).
  std::vector<simdjson::dom::element> Find(std::string_view phase, std::string_view name,
                                           std::string_view category = "") const {
    std::vector<simdjson::dom::element> found;
    for (simdjson::dom::element event : events_) {
      std::string_view ph;
      std::string_view event_name;
      if (event["ph"].get(ph) || ph != phase) continue;
      if (event["name"].get(event_name) || event_name != name) continue;
      std::string_view cat;
      if (!category.empty() && (event["cat"].get(cat) || cat != category)) continue;
      found.push_back(event);
    }
    return found;
  }

 private:
  simdjson::dom::parser parser_;
  simdjson::dom::element root_;
  std::vector<simdjson::dom::element> events_;
  simdjson::error_code error_ = simdjson::SUCCESS;
};

int64_t Int(simdjson::dom::element element, std::string_view key) {
  int64_t value = -999;
  EXPECT_EQ(element[key].get(value), simdjson::SUCCESS) << key;
  return value;
}

double Number(simdjson::dom::element element, std::string_view key) {
  double value = -999;
  EXPECT_EQ(element[key].get(value), simdjson::SUCCESS) << key;
  return value;
}

std::string Str(simdjson::dom::element element, std::string_view key) {
  std::string_view value;
  EXPECT_EQ(element[key].get(value), simdjson::SUCCESS) << key;
  return std::string(value);
}

bool Has(simdjson::dom::element element, std::string_view key) {
  simdjson::dom::element unused;
  return element[key].get(unused) == simdjson::SUCCESS;
}

KinetoWriteOptions Relative() {
  KinetoWriteOptions options;
  options.layout = KinetoLayout::kRelativeWithBase;
  options.base_time_ns = kBase;
  return options;
}

TEST(KinetoWriterTest, RelativeLayoutHeader) {
  ParsedTrace trace(KinetoJson(MakeWriterTestRank(), Relative()));
  ASSERT_TRUE(trace.ok());
  simdjson::dom::element root = trace.root();
  EXPECT_EQ(Int(root, "schemaVersion"), 1);
  EXPECT_EQ(Int(root, "baseTimeNanoseconds"), kBase);
  simdjson::dom::element info = root["distributedInfo"].value();
  EXPECT_EQ(Int(info, "rank"), 3);
  EXPECT_EQ(Int(info, "world_size"), 8);
  EXPECT_EQ(Str(info, "backend"), "nccl");
  simdjson::dom::element device = root["deviceProperties"].at(0).value();
  EXPECT_EQ(Int(device, "id"), 0);
  EXPECT_EQ(Str(device, "name"), "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(Int(device, "totalGlobalMem"), 85029158912);
  EXPECT_EQ(Int(device, "computeMajor"), 9);
  EXPECT_EQ(Int(device, "numSms"), 132);
}

TEST(KinetoWriterTest, RelativeTimesAreExactMicroseconds) {
  std::string text = KinetoJson(MakeWriterTestRank(), Relative());
  ParsedTrace trace(text);
  ASSERT_TRUE(trace.ok());
  auto ops = trace.Find("X", "aten::mm", "cpu_op");
  ASSERT_EQ(ops.size(), 1u);
  // 1700000000000001234 - 1700000000000000000 = 1234 ns = 1.234 µs; 5678 - 1234 = 4444 ns.
  EXPECT_EQ(Number(ops[0], "ts"), 1.234);
  EXPECT_EQ(Number(ops[0], "dur"), 4.444);
  EXPECT_EQ(Int(ops[0], "pid"), 4242);
  EXPECT_EQ(Int(ops[0], "tid"), 4250);
  // Always three decimals, as Kineto prints them: 3000 ns -> "3.000", 1500 ns -> "1.500".
  EXPECT_NE(text.find("\"ts\": 3.000, \"dur\": 1.500"), std::string::npos);
}

TEST(KinetoWriterTest, DefaultBaseIsEarliestTimestamp) {
  ParsedTrace trace(KinetoJson(MakeWriterTestRank(), KinetoWriteOptions{}));
  ASSERT_TRUE(trace.ok());
  // The earliest time in the rank is the step start, kBase + 500.
  EXPECT_EQ(Int(trace.root(), "baseTimeNanoseconds"), kBase + 500);
  auto ops = trace.Find("X", "aten::mm", "cpu_op");
  ASSERT_EQ(ops.size(), 1u);
  EXPECT_EQ(Number(ops[0], "ts"), 0.734);
}

TEST(KinetoWriterTest, KernelsCarryDeviceStreamCorrelation) {
  ParsedTrace trace(KinetoJson(MakeWriterTestRank(), Relative()));
  ASSERT_TRUE(trace.ok());
  auto kernels = trace.Find("X", "gemm_kernel", "kernel");
  ASSERT_EQ(kernels.size(), 1u);
  EXPECT_EQ(Int(kernels[0], "pid"), 0);
  EXPECT_EQ(Int(kernels[0], "tid"), 7);
  EXPECT_EQ(Number(kernels[0], "ts"), 3.0);
  EXPECT_EQ(Number(kernels[0], "dur"), 1.5);
  simdjson::dom::element args = kernels[0]["args"].value();
  EXPECT_EQ(Int(args, "device"), 0);
  EXPECT_EQ(Int(args, "stream"), 7);
  EXPECT_EQ(Int(args, "correlation"), 77);
}

TEST(KinetoWriterTest, CommKernelsCarryNcclArgs) {
  ParsedTrace trace(KinetoJson(MakeWriterTestRank(), Relative()));
  ASSERT_TRUE(trace.ok());
  auto sends =
      trace.Find("X", "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)", "kernel");
  ASSERT_EQ(sends.size(), 1u);
  simdjson::dom::element args = sends[0]["args"].value();
  EXPECT_EQ(Str(args, "Collective name"), "send");
  // 4096 bytes of BFloat16 (2 bytes each) = 2048 elements.
  EXPECT_EQ(Int(args, "In msg nelems"), 2048);
  EXPECT_EQ(Int(args, "Out msg nelems"), 2048);
  EXPECT_EQ(Str(args, "dtype"), "BFloat16");
  EXPECT_EQ(Int(args, "Group size"), 2);
  EXPECT_EQ(Str(args, "Process Group Name"), "pp");
  EXPECT_EQ(Str(args, "Process Group Ranks"), "[3, 4]");
  EXPECT_EQ(Int(args, "Src Rank"), 3);  // this rank sends ...
  EXPECT_EQ(Int(args, "Dst Rank"), 4);  // ... to its peer

  auto recvs = trace.Find("X", "ncclRecvKernel", "kernel");
  ASSERT_EQ(recvs.size(), 1u);
  simdjson::dom::element recv_args = recvs[0]["args"].value();
  EXPECT_EQ(Str(recv_args, "Collective name"), "recv");
  EXPECT_EQ(Int(recv_args, "In msg nelems"), 200);  // 800 bytes of Float (4 bytes)
  EXPECT_EQ(Int(recv_args, "Src Rank"), 2);         // received from the peer
  EXPECT_EQ(Int(recv_args, "Dst Rank"), 3);
  EXPECT_FALSE(Has(recv_args, "Process Group Ranks"));
}

TEST(KinetoWriterTest, NcclArgsCanBeLeftOut) {
  KinetoWriteOptions options = Relative();
  options.nccl_args = false;
  options.distributed_info = false;
  ParsedTrace trace(KinetoJson(MakeWriterTestRank(), options));
  ASSERT_TRUE(trace.ok());
  EXPECT_FALSE(Has(trace.root(), "distributedInfo"));
  auto sends =
      trace.Find("X", "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)", "kernel");
  ASSERT_EQ(sends.size(), 1u);
  simdjson::dom::element args = sends[0]["args"].value();
  EXPECT_FALSE(Has(args, "Collective name"));
  EXPECT_EQ(Int(args, "correlation"), 78);
}

TEST(KinetoWriterTest, CopiesCpuOpsAndRuntime) {
  ParsedTrace trace(KinetoJson(MakeWriterTestRank(), Relative()));
  ASSERT_TRUE(trace.ok());
  auto copies = trace.Find("X", "Memcpy HtoD (Pinned -> Device)", "gpu_memcpy");
  ASSERT_EQ(copies.size(), 1u);
  EXPECT_EQ(Int(copies[0]["args"].value(), "bytes"), 65536);
  auto sets = trace.Find("X", "Memset (Device)", "gpu_memset");
  ASSERT_EQ(sets.size(), 1u);
  EXPECT_FALSE(Has(sets[0]["args"].value(), "bytes"));  // not known, so not invented
  EXPECT_EQ(trace.Find("X", "c10d::send", "cpu_op").size(), 1u);
  auto launches = trace.Find("X", "cudaLaunchKernel", "cuda_runtime");
  ASSERT_EQ(launches.size(), 2u);
  EXPECT_EQ(Int(launches[0]["args"].value(), "correlation"), 77);
  EXPECT_EQ(Int(launches[0]["args"].value(), "cbid"), 211);
}

TEST(KinetoWriterTest, FlowPairsOnlyForLaunchesWithGpuOps) {
  ParsedTrace trace(KinetoJson(MakeWriterTestRank(), Relative()));
  ASSERT_TRUE(trace.ok());
  auto starts = trace.Find("s", "ac2g", "ac2g");
  auto finishes = trace.Find("f", "ac2g", "ac2g");
  ASSERT_EQ(starts.size(), 1u);  // correlation 99 has no GPU op
  ASSERT_EQ(finishes.size(), 1u);
  EXPECT_EQ(Int(starts[0], "id"), 77);
  EXPECT_EQ(Int(starts[0], "pid"), 4242);
  EXPECT_EQ(Int(starts[0], "tid"), 4250);
  EXPECT_EQ(Number(starts[0], "ts"), 2.0);
  EXPECT_EQ(Int(finishes[0], "id"), 77);
  EXPECT_EQ(Int(finishes[0], "pid"), 0);
  EXPECT_EQ(Int(finishes[0], "tid"), 7);
  EXPECT_EQ(Number(finishes[0], "ts"), 3.0);
  EXPECT_EQ(Str(finishes[0], "bp"), "e");
}

TEST(KinetoWriterTest, AnnotationsStepsAndMemory) {
  ParsedTrace trace(KinetoJson(MakeWriterTestRank(), Relative()));
  ASSERT_TRUE(trace.ok());
  auto forward = trace.Find("X", "forward", "user_annotation");
  ASSERT_EQ(forward.size(), 1u);
  EXPECT_EQ(Number(forward[0], "dur"), 7.0);
  auto gpu = trace.Find("X", "gpu_forward", "gpu_user_annotation");
  ASSERT_EQ(gpu.size(), 1u);
  EXPECT_EQ(Int(gpu[0]["args"].value(), "device"), 0);
  EXPECT_EQ(Int(gpu[0]["args"].value(), "stream"), 7);
  auto steps = trace.Find("X", "ProfilerStep#5", "user_annotation");
  ASSERT_EQ(steps.size(), 1u);
  EXPECT_EQ(Number(steps[0], "ts"), 0.5);
  EXPECT_EQ(Number(steps[0], "dur"), 9.5);
  auto memory = trace.Find("i", "[memory]");
  ASSERT_EQ(memory.size(), 2u);
  simdjson::dom::element args = memory[1]["args"].value();
  EXPECT_EQ(Number(memory[1], "ts"), 3.5);
  EXPECT_EQ(Int(args, "Device Type"), 1);
  EXPECT_EQ(Int(args, "Device Id"), 0);
  EXPECT_EQ(Int(args, "Total Allocated"), 1572864);
  EXPECT_EQ(Int(args, "Total Reserved"), 4194304);
  EXPECT_EQ(Int(args, "Bytes"), 1572864 - 1048576);
}

TEST(KinetoWriterTest, AStepReadAlsoAsAnAnnotationIsWrittenOnce) {
  Rank rank = MakeWriterTestRank();
  // What the reader makes of a ProfilerStep#5 range: the step and a CPU annotation of it.
  Annotation step_annotation;
  step_annotation.name = rank.names.Intern("ProfilerStep#5");
  step_annotation.start = rank.steps.at(0).start;
  step_annotation.end = rank.steps.at(0).end;
  step_annotation.scope = AnnotationScope::kCpu;
  rank.annotations.push_back(step_annotation);
  ParsedTrace trace(KinetoJson(rank, Relative()));
  ASSERT_TRUE(trace.ok());
  EXPECT_EQ(trace.Find("X", "ProfilerStep#5", "user_annotation").size(), 1u);
  EXPECT_EQ(trace.Find("X", "forward", "user_annotation").size(), 1u);
}

TEST(KinetoWriterTest, ProcessAndThreadNames) {
  ParsedTrace trace(KinetoJson(MakeWriterTestRank(), Relative()));
  ASSERT_TRUE(trace.ok());
  EXPECT_EQ(trace.Find("M", "process_name").size(), 2u);  // the CPU process and GPU 0
  auto threads = trace.Find("M", "thread_name");
  ASSERT_EQ(threads.size(), 3u);  // one CPU thread, streams 7 and 20
  EXPECT_EQ(Str(threads[1]["args"].value(), "name"), "stream 7 ");
}

TEST(KinetoWriterTest, AbsoluteLayoutSpellsMicroseconds) {
  KinetoWriteOptions options;
  options.layout = KinetoLayout::kAbsoluteMicros;
  std::string text = KinetoJson(MakeWriterTestRank(), options);
  ParsedTrace trace(text);
  ASSERT_TRUE(trace.ok());
  EXPECT_FALSE(Has(trace.root(), "baseTimeNanoseconds"));
  EXPECT_EQ(Int(trace.root()["distributedInfo"].value(), "rank"), 3);
  // aten::mm: 1700000000000001234 ns = 1700000000000001.234 µs, dur 4444 ns = 4.444 µs.
  EXPECT_NE(text.find("\"ts\": 1700000000000001.234, \"dur\": 4.444,"), std::string::npos);
  // c10d::send starts on a whole microsecond: integer spelling, dur 1000 ns = 1.
  EXPECT_NE(text.find("\"name\": \"c10d::send\", \"pid\": 4242, \"tid\": 4250, "
                      "\"ts\": 1700000000000006, \"dur\": 1,"),
            std::string::npos);
  // The gemm kernel (start kBase + 3000) as an integer: exactly representable check via int64.
  auto kernels = trace.Find("X", "gemm_kernel", "kernel");
  ASSERT_EQ(kernels.size(), 1u);
  EXPECT_EQ(Int(kernels[0], "ts"), 1700000000000003);
  auto memory = trace.Find("i", "[memory]", "[memory]");
  EXPECT_EQ(memory.size(), 2u);
}

TEST(KinetoWriterTest, BareArrayWithAndWithoutClosingBracket) {
  KinetoWriteOptions options;
  options.layout = KinetoLayout::kBareArray;
  std::string closed = KinetoJson(MakeWriterTestRank(), options);
  ParsedTrace trace(closed);
  ASSERT_TRUE(trace.ok());
  ASSERT_TRUE(trace.root().is_array());
  // 4 CPU intervals + 1 flow start + 5 GPU ops + 1 flow finish + 2 annotations + 1 step
  // + 2 memory samples + 7 metadata events (2 process_name, 2 process_labels, 3 thread_name).
  EXPECT_EQ(trace.events().size(), 23u);
  EXPECT_EQ(trace.Find("X", "PyTorch Profiler (0)", "Trace").size(), 0u);

  options.close_array = false;
  std::string open = KinetoJson(MakeWriterTestRank(), options);
  ASSERT_FALSE(open.empty());
  EXPECT_EQ(open.find(']', open.find_last_of('}')), std::string::npos);
  EXPECT_FALSE(ParsedTrace(open).ok());
  ParsedTrace repaired(open + "]");
  ASSERT_TRUE(repaired.ok());
  EXPECT_EQ(repaired.events().size(), 23u);
}

// The lines of `text`, without their '\n'.
std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  size_t start = 0;
  for (size_t end = text.find('\n'); end != std::string::npos; end = text.find('\n', start)) {
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  if (start < text.size()) lines.push_back(text.substr(start));
  return lines;
}

TEST(KinetoWriterTest, ArrayPiecesAreTheCollectorsLayout) {
  const Rank rank = MakeWriterTestRank();
  KinetoArrayPieces pieces(rank, KinetoWriteOptions{});
  const std::string head = pieces.Head();
  // "[" and the 7 metadata events, one a line, ending after a whole event.
  const std::vector<std::string> head_lines = Lines(head);
  ASSERT_EQ(head_lines.size(), 8u);
  EXPECT_EQ(head_lines[0], "[");
  EXPECT_TRUE(head.ends_with("}"));
  ParsedTrace head_alone(head + "\n]");
  ASSERT_TRUE(head_alone.ok());
  EXPECT_EQ(head_alone.events().size(), 7u);
  for (simdjson::dom::element event : head_alone.events()) EXPECT_EQ(Str(event, "ph"), "M");

  // The events come after a separator and a line break each: 16 more lines, the 23 events of
  // the whole file (BareArrayWithAndWithoutClosingBracket) once closed.
  const std::string events = pieces.Events(rank);
  EXPECT_TRUE(events.starts_with(",\n{"));
  EXPECT_TRUE(events.ends_with("}"));
  EXPECT_EQ(Lines(events).size(), 17u);  // the first line: the comma after the head's last event
  const std::string whole = head + events + KinetoArrayPieces::Tail();
  EXPECT_TRUE(whole.ends_with("}\n]\n"));
  ParsedTrace trace(whole);
  ASSERT_TRUE(trace.ok());
  EXPECT_EQ(trace.events().size(), 23u);
  EXPECT_EQ(Lines(whole).size(), 25u);
}

TEST(KinetoWriterTest, ArrayPiecesTimeASliceAsTheWholeRank) {
  // Legacy CPU times count from the rank's first event (its step, LegacyCpuFunctionsFlavour): a
  // slice without that step still counts from it.
  const Rank rank = MakeWriterTestRank();
  Rank slice = MakeWriterTestRank();
  slice.steps.clear();
  KinetoWriteOptions options;
  options.legacy_cpu_functions = true;
  KinetoArrayPieces pieces(rank, options);
  const std::string head = pieces.Head();
  ParsedTrace trace(head + pieces.Events(slice) + KinetoArrayPieces::Tail());
  ASSERT_TRUE(trace.ok());
  const auto ops = trace.Find("X", "aten::mm");
  ASSERT_EQ(ops.size(), 1u);
  EXPECT_DOUBLE_EQ(Number(ops[0], "ts"), 0.734);
  EXPECT_TRUE(trace.Find("X", "ProfilerStep#5").empty());
}

TEST(KinetoWriterTest, LegacyCpuFunctionsFlavour) {
  KinetoWriteOptions options;
  options.layout = KinetoLayout::kBareArray;
  options.legacy_cpu_functions = true;
  ParsedTrace trace(KinetoJson(MakeWriterTestRank(), options));
  ASSERT_TRUE(trace.ok());
  auto ops = trace.Find("X", "aten::mm");
  ASSERT_EQ(ops.size(), 1u);
  EXPECT_FALSE(Has(ops[0], "cat"));
  EXPECT_EQ(Str(ops[0], "pid"), "CPU functions");
  EXPECT_EQ(Int(ops[0], "tid"), 4250);
  // The CPU annotation and the step are catless events too; times count from the rank's first
  // event (the step's start, 500 ns after kBase): aten::mm starts 734 ns = 0.734 us later.
  const auto annotations = trace.Find("X", "forward");
  ASSERT_EQ(annotations.size(), 1u);
  EXPECT_FALSE(Has(annotations[0], "cat"));
  EXPECT_EQ(Str(annotations[0], "pid"), "CPU functions");
  const auto steps = trace.Find("X", "ProfilerStep#5");
  ASSERT_EQ(steps.size(), 1u);
  EXPECT_FALSE(Has(steps[0], "cat"));
  EXPECT_DOUBLE_EQ(Number(steps[0], "ts"), 0.0);
  EXPECT_DOUBLE_EQ(Number(ops[0], "ts"), 0.734);
  // GPU ops keep their Kineto form.
  EXPECT_EQ(trace.Find("X", "gemm_kernel", "kernel").size(), 1u);
}

TEST(KinetoWriterTest, ObjectLayoutsHaveProfilerSpan) {
  ParsedTrace trace(KinetoJson(MakeWriterTestRank(), Relative()));
  ASSERT_TRUE(trace.ok());
  auto spans = trace.Find("X", "PyTorch Profiler (0)", "Trace");
  ASSERT_EQ(spans.size(), 1u);
  EXPECT_EQ(Str(spans[0], "pid"), "Spans");
  // From the earliest (step start, +500) to the latest (step end, +10000) timestamp.
  EXPECT_EQ(Number(spans[0], "dur"), 9.5);
}

TEST(KinetoWriterTest, BulkArgs) {
  KinetoWriteOptions options = Relative();
  options.bulk_args = true;
  ParsedTrace trace(KinetoJson(MakeWriterTestRank(), options));
  ASSERT_TRUE(trace.ok());
  auto ops = trace.Find("X", "aten::mm", "cpu_op");
  ASSERT_EQ(ops.size(), 1u);
  simdjson::dom::element args = ops[0]["args"].value();
  EXPECT_TRUE(Has(args, "External id"));
  EXPECT_EQ(Int(args, "Ev Idx"), 0);
  EXPECT_TRUE(args["Input Dims"].is_array());
  EXPECT_TRUE(args["Input type"].is_array());
  EXPECT_TRUE(Has(args, "Sequence number"));
  auto kernels = trace.Find("X", "gemm_kernel", "kernel");
  ASSERT_EQ(kernels.size(), 1u);
  EXPECT_TRUE(kernels[0]["args"]["grid"].is_array());
  EXPECT_EQ(Int(kernels[0]["args"].value(), "correlation"), 77);
}

TEST(KinetoWriterTest, EscapesNames) {
  Rank rank = MakeWriterTestRank();
  // Quote, backslash, newline, tab, a raw control byte, valid 2- and 3-byte UTF-8 and one
  // invalid byte (0xFF), which must become U+FFFD.
  std::string raw = "say \"hi\" C:\\tmp\nx\ty\x01 caf\xc3\xa9 \xe6\x97\xa5 bad\xff!";
  rank.timelines[0].intervals[0].name = rank.names.Intern(raw);
  std::string text = KinetoJson(rank, Relative());
  EXPECT_NE(text.find(R"("say \"hi\" C:\\tmp\nx\ty\u0001 caf)"), std::string::npos);
  ParsedTrace trace(text);
  ASSERT_TRUE(trace.ok());
  std::string expected = "say \"hi\" C:\\tmp\nx\ty\x01 caf\xc3\xa9 \xe6\x97\xa5 bad\xef\xbf\xbd!";
  EXPECT_EQ(trace.Find("X", expected, "cpu_op").size(), 1u);
}

std::string ReadPlainPrefix(const std::string& path, size_t bytes) {
  std::string text(bytes, '\0');
  std::FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr) return "";
  text.resize(std::fread(text.data(), 1, bytes, file));
  std::fclose(file);
  return text;
}

TEST(KinetoWriterTest, GzipRoundTrip) {
  Rank rank = MakeWriterTestRank();
  std::string path = ::testing::TempDir() + "/writer_round_trip.json.gz";
  ASSERT_TRUE(WriteKinetoFile(rank, Relative(), path).ok());
  // gzip magic bytes, then the same text KinetoJson produces.
  std::string head = ReadPlainPrefix(path, 2);
  ASSERT_EQ(head.size(), 2u);
  EXPECT_EQ(static_cast<unsigned char>(head[0]), 0x1f);
  EXPECT_EQ(static_cast<unsigned char>(head[1]), 0x8b);
  EXPECT_EQ(testing::Gunzip(testing::ReadFile(path)), KinetoJson(rank, Relative()));
  std::remove(path.c_str());
}

TEST(KinetoWriterTest, PlainFileAndWriteErrors) {
  Rank rank = MakeWriterTestRank();
  std::string path = ::testing::TempDir() + "/writer_plain.json";
  ASSERT_TRUE(WriteKinetoFile(rank, Relative(), path).ok());
  EXPECT_EQ(ReadPlainPrefix(path, 1 << 20), KinetoJson(rank, Relative()));
  std::remove(path.c_str());
  EXPECT_FALSE(WriteKinetoFile(rank, Relative(), "/nonexistent-dir/x.json").ok());
  EXPECT_FALSE(WriteKinetoFile(rank, Relative(), "/nonexistent-dir/x.json.gz").ok());
}

}  // namespace
}  // namespace bubblescope
