#include "writers/kineto_writer.h"

#include <zlib.h>

#include <algorithm>
#include <cstdio>
#include <limits>
#include <string_view>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "bubblescope/op_names.h"
#include "common/output_file.h"
#include "text/json_string.h"
#include "text/micros.h"
#include "writers/event_text.h"

namespace bubblescope {
namespace {

constexpr int kCudaLaunchKernelCbid = 211;  // CUPTI callback id Kineto reports for it

// The "Collective name" torch writes for a kind, when the trace did not give one.
std::string_view DefaultCollectiveName(CommKind kind) {
  switch (kind) {
    case CommKind::kSend:
      return "send";
    case CommKind::kRecv:
      return "recv";
    case CommKind::kAllReduce:
      return "allreduce";
    case CommKind::kAllGather:
      return "allgather";
    case CommKind::kReduceScatter:
      return "reduce_scatter";
    case CommKind::kBroadcast:
      return "broadcast";
    case CommKind::kReduce:
      return "reduce";
    case CommKind::kAllToAll:
      return "all_to_allv";
    case CommKind::kBarrier:
      return "barrier";
    case CommKind::kUnknown:
    case CommKind::kSendRecv:
      return "";
  }
  return "";
}

// Deterministic filler for KinetoWriteOptions::bulk_args, cycling through shapes seen in
// transformer traces.
struct InputShape {
  std::string_view dims;
  std::string_view types;
};
constexpr InputShape kInputShapes[] = {
    {"[[8, 2048, 4096], [4096, 4096], [4096]]",
     R"(["c10::BFloat16", "c10::BFloat16", "c10::BFloat16"])"},
    {"[[8, 2048, 4096], [], []]", R"(["c10::BFloat16", "Scalar", "Scalar"])"},
    {"[[16384, 4096]]", R"(["c10::BFloat16"])"},
    {"[[8, 32, 2048, 128], [8, 32, 128, 2048]]", R"(["c10::BFloat16", "c10::BFloat16"])"},
    {"[[], [8, 2048, 4096]]", R"(["Scalar", "float"])"},
};

// Where a rank's times are written from: the metadata events' time (the rank's earliest) and the
// offset every "ts" is relative to.
struct TimeOrigin {
  TimeNs earliest = 0;
  TimeNs offset = 0;
};

EventStyle StyleOf(const KinetoWriteOptions& options) {
  return options.layout == KinetoLayout::kRelativeWithBase ? EventStyle::kKinetoMultiLine
                                                           : EventStyle::kPythonOneLine;
}

TimeSpelling SpellingOf(const KinetoWriteOptions& options) {
  return options.layout == KinetoLayout::kRelativeWithBase ? TimeSpelling::kFixed3
                                                           : TimeSpelling::kCompact;
}

class RankWriter {
 public:
  // Writes `rank` into `out` through `events` (which appends to `out`), its times from `origin`.
  RankWriter(const Rank& rank, const KinetoWriteOptions& options, std::string* out,
             EventText* events, TimeOrigin origin)
      : rank_(rank),
        options_(options),
        out_(out),
        earliest_(origin.earliest),
        offset_(origin.offset),
        events_(*events) {}

  static TimeOrigin OriginOf(const Rank& rank, const KinetoWriteOptions& options) {
    const TimeNs earliest = EarliestTime(rank);
    const TimeNs offset = options.layout == KinetoLayout::kRelativeWithBase
                              ? options.base_time_ns.value_or(earliest)
                              : (Legacy(options) ? earliest : 0);
    return TimeOrigin{.earliest = earliest, .offset = offset};
  }

  void Write() {
    out_->reserve(out_->size() + EstimateBytes());
    if (options_.layout == KinetoLayout::kBareArray) {
      out_->append("[");
    } else {
      WriteHeader();
    }
    WriteEvents();
    WriteMetadata();
    if (options_.layout == KinetoLayout::kBareArray) {
      if (options_.close_array) out_->append("]\n");
    } else {
      WriteProfilerSpan();
      WriteFooter();
    }
  }

  // The rank's events without its header, metadata or footer: what a slice of a file holds.
  void WriteEvents() {
    CollectCorrelations();
    for (const Timeline& timeline : rank_.timelines) {
      if (timeline.kind == TimelineKind::kCpuThread) WriteCpuTimeline(timeline);
    }
    WriteAnnotations(AnnotationScope::kCpu);
    WriteSteps();
    WriteMemory();
    for (const Timeline& timeline : rank_.timelines) {
      if (timeline.kind == TimelineKind::kGpuStream) WriteGpuTimeline(timeline);
    }
    WriteAnnotations(AnnotationScope::kGpu);
  }

  // The process and thread names of the rank's timelines ("ph": "M").
  void WriteMetadata() {
    std::vector<int64_t> cpu_pids;
    std::vector<int32_t> devices;
    for (const Timeline& timeline : rank_.timelines) {
      if (timeline.kind == TimelineKind::kCpuThread) {
        if (std::find(cpu_pids.begin(), cpu_pids.end(), timeline.pid) == cpu_pids.end()) {
          cpu_pids.push_back(timeline.pid);
        }
      } else if (std::find(devices.begin(), devices.end(), timeline.device) == devices.end()) {
        devices.push_back(timeline.device);
      }
    }
    for (int64_t pid : cpu_pids) {
      WriteMetadataEvent("process_name", pid, 0, "name", "python3");
      WriteMetadataEvent("process_labels", pid, 0, "labels", "CPU");
    }
    for (int32_t device : devices) {
      WriteMetadataEvent("process_name", device, 0, "name", absl::StrCat("GPU ", device));
      WriteMetadataEvent("process_labels", device, 0, "labels", absl::StrCat("GPU ", device));
    }
    for (const Timeline& timeline : rank_.timelines) {
      if (timeline.kind == TimelineKind::kCpuThread) {
        WriteMetadataEvent("thread_name", timeline.pid, timeline.id, "name",
                           absl::StrCat("thread ", timeline.id, " (python3)"));
      } else {
        WriteMetadataEvent("thread_name", timeline.device, timeline.id, "name",
                           absl::StrCat("stream ", timeline.id, " "));
      }
    }
  }

 private:
  static bool Legacy(const KinetoWriteOptions& options) {
    return options.legacy_cpu_functions && options.layout == KinetoLayout::kBareArray;
  }

  // One CPU event as torch's profiler without Kineto exported it: no category, the string pid.
  void WriteLegacyEvent(std::string_view name, int64_t tid, TimeNs start, TimeNs end) {
    events_.Open();
    events_.Str("name", name);
    events_.Str("ph", "X");
    events_.Time("ts", start);
    events_.Duration("dur", end - start);
    events_.Int("tid", tid);
    events_.Str("pid", "CPU functions");
    events_.OpenArgs();
    events_.CloseArgs();
    events_.Close();
  }

  static TimeNs EarliestTime(const Rank& rank) {
    TimeNs earliest = std::numeric_limits<TimeNs>::max();
    for (const Timeline& timeline : rank.timelines) {
      for (const Interval& interval : timeline.intervals)
        earliest = std::min(earliest, interval.start);
    }
    for (const Annotation& annotation : rank.annotations)
      earliest = std::min(earliest, annotation.start);
    for (const ProfilerStep& step : rank.steps) earliest = std::min(earliest, step.start);
    for (const MemorySample& sample : rank.memory) earliest = std::min(earliest, sample.time);
    return earliest == std::numeric_limits<TimeNs>::max() ? 0 : earliest;
  }

  TimeNs LatestTime() const {
    TimeNs latest = earliest_;
    for (const Timeline& timeline : rank_.timelines) {
      for (const Interval& interval : timeline.intervals) latest = std::max(latest, interval.end);
    }
    for (const Annotation& annotation : rank_.annotations)
      latest = std::max(latest, annotation.end);
    for (const ProfilerStep& step : rank_.steps) latest = std::max(latest, step.end);
    for (const MemorySample& sample : rank_.memory) latest = std::max(latest, sample.time);
    return latest;
  }

  size_t EstimateBytes() const {
    size_t events = rank_.annotations.size() + rank_.steps.size() + rank_.memory.size();
    for (const Timeline& timeline : rank_.timelines) events += timeline.intervals.size();
    return events * (options_.bulk_args ? 420 : 240) + 4096;
  }

  // Correlation ids present on both sides, so flow arrows are only written for launches whose
  // GPU op is in the trace, as Kineto does.
  void CollectCorrelations() {
    absl::flat_hash_set<int64_t> device;
    absl::flat_hash_set<int64_t> launched;
    for (const Timeline& timeline : rank_.timelines) {
      for (const Interval& interval : timeline.intervals) {
        if (interval.correlation == 0) continue;
        if (IsDeviceKind(interval.kind)) device.insert(interval.correlation);
        if (interval.kind == IntervalKind::kRuntime) launched.insert(interval.correlation);
      }
    }
    for (int64_t correlation : launched) {
      if (device.contains(correlation)) linked_.insert(correlation);
    }
  }

  // The CPU thread steps and memory samples are attributed to: the first CPU thread, as the
  // profiler records them on the thread that drives the model.
  int64_t MainThreadId() const {
    for (const Timeline& timeline : rank_.timelines) {
      if (timeline.kind == TimelineKind::kCpuThread) return timeline.id;
    }
    return rank_.pid;
  }

  void WriteHeader() {
    out_->append("{\n  \"schemaVersion\": 1,\n  \"deviceProperties\": [");
    for (size_t i = 0; i < rank_.devices.size(); ++i) {
      const DeviceInfo& device = rank_.devices[i];
      out_->append(i == 0 ? "\n    {\n      \"id\": " : ",\n    {\n      \"id\": ");
      text::AppendInt(device.id, out_);
      out_->append(", \"name\": ");
      text::AppendJsonString(device.name, out_);
      out_->append(", \"totalGlobalMem\": ");
      text::AppendInt(device.total_memory_bytes, out_);
      out_->append(",\n      \"computeMajor\": ");
      text::AppendInt(device.compute_major, out_);
      out_->append(", \"computeMinor\": ");
      text::AppendInt(device.compute_minor, out_);
      out_->append(",\n      \"maxThreadsPerBlock\": 1024, \"warpSize\": 32, \"numSms\": ");
      text::AppendInt(device.multiprocessors, out_);
      out_->append("\n    }");
    }
    out_->append(rank_.devices.empty() ? "],\n" : "\n  ],\n");
    if (options_.distributed_info) {
      out_->append("  \"distributedInfo\": {");
      if (!rank_.backend.empty()) {
        out_->append("\"backend\": ");
        text::AppendJsonString(rank_.backend, out_);
        out_->append(", ");
      }
      out_->append("\"rank\": ");
      text::AppendInt(rank_.rank, out_);
      out_->append(", \"world_size\": ");
      text::AppendInt(rank_.world_size, out_);
      WritePgConfig();
      out_->append("},\n");
    }
    if (!rank_.host.empty()) {
      // Kineto writes the machine's name since 2026 (kineto #1323); older traces have none.
      out_->append("  \"host_name\": ");
      text::AppendJsonString(rank_.host, out_);
      out_->append(",\n");
    }
    out_->append("  \"record_shapes\": 1,\n  \"traceEvents\": [\n");
  }

  // torch lists the rank's process groups in distributedInfo.pg_config; written for ranks whose
  // groups carry descriptions (torch >= 2.4), so older-style sets stay as they were.
  void WritePgConfig() {
    const bool described =
        std::any_of(rank_.process_groups.begin(), rank_.process_groups.end(),
                    [](const ProcessGroup& group) { return !group.description.empty(); });
    if (!described) return;
    out_->append(", \"pg_count\": ");
    text::AppendInt(static_cast<int64_t>(rank_.process_groups.size()), out_);
    out_->append(", \"pg_config\": [");
    for (size_t g = 0; g < rank_.process_groups.size(); ++g) {
      const ProcessGroup& group = rank_.process_groups[g];
      out_->append(g == 0 ? "{\"pg_name\": " : ", {\"pg_name\": ");
      text::AppendJsonString(group.name, out_);
      out_->append(", \"pg_desc\": ");
      text::AppendJsonString(group.description, out_);
      out_->append(", \"backend_config\": \"cuda:nccl\", \"pg_size\": ");
      text::AppendInt(static_cast<int64_t>(group.ranks.size()), out_);
      out_->append(", \"ranks\": [");
      for (size_t r = 0; r < group.ranks.size(); ++r) {
        if (r > 0) out_->append(", ");
        text::AppendInt(group.ranks[r], out_);
      }
      out_->append("]}");
    }
    out_->append("]");
  }

  void WriteFooter() {
    out_->append("\n  ],\n  \"traceName\": ");
    text::AppendJsonString(rank_.source_path, out_);
    out_->append(",\n  \"displayTimeUnit\": \"ms\"");
    if (options_.layout == KinetoLayout::kRelativeWithBase) {
      // Newer Kineto writes the base after the events, so readers must not need it up front.
      out_->append(",\n  \"baseTimeNanoseconds\": ");
      text::AppendInt(offset_, out_);
    }
    out_->append("\n}\n");
  }

  void OpenCompleteEvent(std::string_view category, std::string_view name, int64_t pid, int64_t tid,
                         TimeNs start, TimeNs end) {
    events_.Open();
    events_.Str("ph", "X");
    if (!category.empty()) events_.Str("cat", category);
    events_.Str("name", name);
    events_.Int("pid", pid);
    events_.Int("tid", tid);
    events_.Time("ts", start);
    events_.Duration("dur", end - start);
  }

  void WriteFlow(char phase, int64_t correlation, int64_t pid, int64_t tid, TimeNs time) {
    events_.Open();
    events_.Str("ph", phase == 's' ? "s" : "f");
    events_.Int("id", correlation);
    events_.Int("pid", pid);
    events_.Int("tid", tid);
    events_.Time("ts", time);
    events_.Str("cat", "ac2g");
    events_.Str("name", "ac2g");
    if (phase == 'f') events_.Str("bp", "e");
    events_.Close();
  }

  void WriteCpuTimeline(const Timeline& timeline) {
    const bool legacy = Legacy(options_);
    for (const Interval& interval : timeline.intervals) {
      std::string_view name = rank_.name(interval.name);
      if (interval.kind == IntervalKind::kRuntime) {
        OpenCompleteEvent("cuda_runtime", name, timeline.pid, timeline.id, interval.start,
                          interval.end);
        events_.OpenArgs();
        if (options_.bulk_args) events_.Int("External id", interval.correlation);
        if (name == "cudaLaunchKernel") events_.Int("cbid", kCudaLaunchKernelCbid);
        events_.Int("correlation", interval.correlation);
        // Kineto on ROCm (roctracer) spells the HIP call's stream as a handle in text.
        if (name.starts_with("hip")) events_.Str("stream", "0x0");
        events_.CloseArgs();
        events_.Close();
        if (linked_.contains(interval.correlation)) {
          WriteFlow('s', interval.correlation, timeline.pid, timeline.id, interval.start);
        }
        continue;
      }
      if (legacy) {
        WriteLegacyEvent(name, timeline.id, interval.start, interval.end);
        continue;
      }
      // CPU communication ops (c10d::send, gloo:*) are ordinary cpu_op events in real traces.
      OpenCompleteEvent("cpu_op", name, timeline.pid, timeline.id, interval.start, interval.end);
      events_.OpenArgs();
      if (options_.bulk_args) WriteCpuOpBulkArgs();
      // Torch puts a transfer's metadata (peer, size, group) on record_param_comms, not on the
      // c10d op around it.
      const CommInfo* comm = rank_.comm(interval);
      if (comm != nullptr && options_.nccl_args && name == "record_param_comms") {
        WriteNcclArgs(*comm);
      }
      events_.CloseArgs();
      events_.Close();
    }
  }

  void WriteCpuOpBulkArgs() {
    const InputShape& shape = kInputShapes[cpu_ops_ % std::size(kInputShapes)];
    events_.Int("External id", 1000000 + cpu_ops_);
    events_.Int("Ev Idx", cpu_ops_);
    events_.Raw("Input Dims", shape.dims);
    events_.Raw("Input type", shape.types);
    events_.Int("Sequence number", 500000 + cpu_ops_ / 3);
    ++cpu_ops_;
  }

  void WriteGpuTimeline(const Timeline& timeline) {
    for (const Interval& interval : timeline.intervals) {
      std::string_view category = "kernel";
      if (interval.kind == IntervalKind::kMemcpy) category = "gpu_memcpy";
      if (interval.kind == IntervalKind::kMemset) category = "gpu_memset";
      if (!IsDeviceKind(interval.kind)) continue;  // host kinds never sit on a stream
      OpenCompleteEvent(category, rank_.name(interval.name), timeline.device, timeline.id,
                        interval.start, interval.end);
      events_.OpenArgs();
      if (options_.bulk_args) {
        events_.Int("External id", interval.correlation);
        events_.Int("queued", 0);
      }
      events_.Int("device", timeline.device);
      if (options_.bulk_args) events_.Int("context", 1);
      events_.Int("stream", timeline.id);
      events_.Int("correlation", interval.correlation);
      const CommInfo* comm = rank_.comm(interval);
      bool is_kernel = interval.kind == IntervalKind::kComputeKernel ||
                       interval.kind == IntervalKind::kCommKernel;
      if (!is_kernel && comm != nullptr && comm->bytes >= 0) events_.Int("bytes", comm->bytes);
      if (is_kernel && options_.bulk_args) WriteKernelBulkArgs();
      if (interval.kind == IntervalKind::kCommKernel && comm != nullptr && options_.nccl_args &&
          !NamesNothing(*comm)) {
        WriteNcclArgs(*comm);
      }
      events_.CloseArgs();
      events_.Close();
      if (linked_.contains(interval.correlation)) {
        WriteFlow('f', interval.correlation, timeline.device, timeline.id, interval.start);
      }
    }
  }

  void WriteKernelBulkArgs() {
    events_.Int("registers per thread", 128);
    events_.Int("shared memory", 49152);
    events_.Raw("blocks per SM", "1.6888889");
    events_.Raw("warps per SM", "13.511111");
    events_.Raw("grid", "[228, 1, 1]");
    events_.Raw("block", "[256, 1, 1]");
    events_.Int("est. achieved occupancy %", 13);
  }

  // A kernel's record with its kind only (from its name), as a reader makes of a kernel that
  // carries no args (a coalesced collective's): written without args.
  static bool NamesNothing(const CommInfo& comm) {
    return comm.collective == kNoName && comm.process_group == kNoIndex && comm.bytes < 0 &&
           comm.peer < 0 && comm.group_size < 0 && comm.dtype == kNoName && comm.seq < 0;
  }

  void WriteNcclArgs(const CommInfo& comm) {
    std::string_view collective =
        comm.collective != kNoName ? rank_.name(comm.collective) : DefaultCollectiveName(comm.kind);
    if (!collective.empty()) events_.Str("Collective name", collective);
    std::string_view dtype = rank_.name(comm.dtype);
    const int64_t element_size = op_names::DtypeSize(dtype);
    // Torch reports element counts, not bytes; without a known element size the payload can't
    // be expressed faithfully, so it is left out rather than guessed.
    if (comm.bytes >= 0 && element_size > 0) {
      events_.Int("In msg nelems", comm.bytes / element_size);
      events_.Int("Out msg nelems", comm.bytes / element_size);
    }
    if (!dtype.empty()) events_.Str("dtype", dtype);
    const ProcessGroup* group =
        comm.process_group == kNoIndex ? nullptr : &rank_.process_groups[comm.process_group];
    int64_t group_size = comm.group_size;
    if (group_size < 0 && group != nullptr) group_size = static_cast<int64_t>(group->ranks.size());
    if (group_size >= 0) events_.Int("Group size", group_size);
    if (group != nullptr) {
      if (!group->name.empty()) events_.Str("Process Group Name", group->name);
      if (!group->description.empty()) {
        events_.Str("Process Group Description", group->description);
      }
      events_.Str("Process Group Ranks", absl::StrCat("[", absl::StrJoin(group->ranks, ", "), "]"));
    }
    if (comm.peer >= 0) {
      // Torch names the global source and destination; a reader takes the one that is not its
      // own rank as the peer. A receive flips them; any other p2p op is written send-like, which
      // still yields the right peer.
      bool receive = comm.kind == CommKind::kRecv || collective == "recv";
      events_.Int("Src Rank", receive ? comm.peer : rank_.rank);
      events_.Int("Dst Rank", receive ? rank_.rank : comm.peer);
    }
  }

  void WriteAnnotations(AnnotationScope scope) {
    for (const Annotation& annotation : rank_.annotations) {
      if (annotation.scope != scope) continue;
      // The reader keeps each ProfilerStep#N range both as a step and as a CPU annotation (so an
      // iteration marker can name it); WriteSteps writes it once.
      if (scope == AnnotationScope::kCpu &&
          rank_.name(annotation.name).starts_with("ProfilerStep#")) {
        continue;
      }
      if (scope == AnnotationScope::kCpu && Legacy(options_)) {
        WriteLegacyEvent(rank_.name(annotation.name), annotation.thread_or_stream, annotation.start,
                         annotation.end);
        continue;
      }
      if (scope == AnnotationScope::kCpu) {
        OpenCompleteEvent("user_annotation", rank_.name(annotation.name), rank_.pid,
                          annotation.thread_or_stream, annotation.start, annotation.end);
        events_.OpenArgs();
      } else {
        OpenCompleteEvent("gpu_user_annotation", rank_.name(annotation.name), annotation.device,
                          annotation.thread_or_stream, annotation.start, annotation.end);
        events_.OpenArgs();
        events_.Int("device", annotation.device);
        events_.Int("stream", annotation.thread_or_stream);
      }
      events_.CloseArgs();
      events_.Close();
    }
  }

  void WriteSteps() {
    int64_t thread = MainThreadId();
    for (const ProfilerStep& step : rank_.steps) {
      if (Legacy(options_)) {
        WriteLegacyEvent(absl::StrCat("ProfilerStep#", step.number), thread, step.start, step.end);
        continue;
      }
      OpenCompleteEvent("user_annotation", absl::StrCat("ProfilerStep#", step.number), rank_.pid,
                        thread, step.start, step.end);
      events_.OpenArgs();
      events_.CloseArgs();
      events_.Close();
    }
  }

  void WriteMemory() {
    int64_t thread = MainThreadId();
    // Newer Kineto files the samples under "cpu_instant_event"; older ones under "[memory]".
    std::string_view category =
        options_.layout == KinetoLayout::kRelativeWithBase ? "cpu_instant_event" : "[memory]";
    std::vector<std::pair<int32_t, int64_t>> last_allocated;  // per device, for "Bytes"
    for (const MemorySample& sample : rank_.memory) {
      int64_t previous = 0;
      auto it = std::find_if(last_allocated.begin(), last_allocated.end(),
                             [&](const auto& entry) { return entry.first == sample.device; });
      if (it == last_allocated.end()) {
        last_allocated.emplace_back(sample.device, sample.allocated_bytes);
      } else {
        previous = it->second;
        it->second = sample.allocated_bytes;
      }
      events_.Open();
      events_.Str("ph", "i");
      events_.Str("cat", category);
      events_.Str("s", "t");
      events_.Str("name", "[memory]");
      events_.Int("pid", rank_.pid);
      events_.Int("tid", thread);
      events_.Time("ts", sample.time);
      events_.OpenArgs();
      events_.Int("Total Reserved", sample.reserved_bytes);
      events_.Int("Total Allocated", sample.allocated_bytes);
      events_.Int("Bytes", sample.allocated_bytes - previous);
      if (options_.bulk_args) events_.Int("Addr", 0x7f0000000000 + (sample.time & 0xffffff00));
      events_.Int("Device Id", sample.host ? -1 : sample.device);
      events_.Int("Device Type", sample.host ? 0 : 1);
      events_.CloseArgs();
      events_.Close();
    }
  }

  void WriteMetadataEvent(std::string_view name, int64_t pid, int64_t tid, std::string_view key,
                          std::string_view value) {
    events_.Open();
    events_.Str("name", name);
    events_.Str("ph", "M");
    events_.Time("ts", earliest_);
    events_.Int("pid", pid);
    events_.Int("tid", tid);
    events_.OpenArgs();
    events_.Str(key, value);
    events_.CloseArgs();
    events_.Close();
  }

  // The profiler's own span, with string pid/tid, as every Kineto file has.
  void WriteProfilerSpan() {
    events_.Open();
    events_.Str("ph", "X");
    events_.Str("cat", "Trace");
    events_.Str("name", "PyTorch Profiler (0)");
    events_.Str("pid", "Spans");
    events_.Str("tid", "PyTorch Profiler");
    events_.Time("ts", earliest_);
    events_.Duration("dur", LatestTime() - earliest_);
    events_.OpenArgs();
    events_.Int("Op count", 0);
    events_.CloseArgs();
    events_.Close();
  }

  const Rank& rank_;
  const KinetoWriteOptions& options_;
  std::string* out_;
  TimeNs earliest_;
  TimeNs offset_;
  EventText& events_;
  absl::flat_hash_set<int64_t> linked_;
  int64_t cpu_ops_ = 0;
};

// `text` as one gzip member at deflate `level` (0-9), or an error for a bad level.
absl::StatusOr<std::string> GzipBytes(std::string_view text, int level) {
  z_stream stream{};
  // 15 window bits + 16: a gzip header and trailer rather than zlib's.
  if (deflateInit2(&stream, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
    return absl::InvalidArgumentError(absl::StrCat("bad gzip level ", level));
  }
  std::string out;
  out.resize(deflateBound(&stream, static_cast<uLong>(text.size())));
  // deflate takes unsigned lengths, so large documents go in chunks.
  constexpr size_t kChunk = size_t{1} << 30;
  size_t consumed = 0;
  int result = Z_OK;
  stream.next_out = reinterpret_cast<Bytef*>(out.data());
  while (result == Z_OK) {
    const size_t chunk = std::min(kChunk, text.size() - consumed);
    stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data() + consumed));
    stream.avail_in = static_cast<uInt>(chunk);
    const size_t produced = stream.total_out;
    stream.avail_out = static_cast<uInt>(std::min(kChunk, out.size() - produced));
    const bool last = consumed + chunk == text.size();
    result = deflate(&stream, last ? Z_FINISH : Z_NO_FLUSH);
    consumed += chunk - stream.avail_in;
  }
  deflateEnd(&stream);
  if (result != Z_STREAM_END) return absl::InternalError("gzip compression failed");
  out.resize(stream.total_out);
  return out;
}

}  // namespace

std::string KinetoJson(const Rank& rank, const KinetoWriteOptions& options) {
  std::string out;
  const TimeOrigin origin = RankWriter::OriginOf(rank, options);
  EventText events(&out, StyleOf(options), SpellingOf(options), origin.offset);
  RankWriter(rank, options, &out, &events, origin).Write();
  return out;
}

KinetoArrayPieces::KinetoArrayPieces(const Rank& rank, const KinetoWriteOptions& options)
    : rank_(rank), options_(options) {
  options_.layout = KinetoLayout::kBareArray;
  const TimeOrigin origin = RankWriter::OriginOf(rank_, options_);
  earliest_ = origin.earliest;
  offset_ = origin.offset;
  events_ = std::make_unique<EventText>(&text_, EventStyle::kOneLinePerEvent, SpellingOf(options_),
                                        offset_);
}

KinetoArrayPieces::~KinetoArrayPieces() = default;

std::string KinetoArrayPieces::Head() {
  text_ = "[\n";
  RankWriter(rank_, options_, &text_, events_.get(), TimeOrigin{earliest_, offset_})
      .WriteMetadata();
  return std::exchange(text_, {});
}

std::string KinetoArrayPieces::Events(const Rank& slice) {
  RankWriter(slice, options_, &text_, events_.get(), TimeOrigin{earliest_, offset_}).WriteEvents();
  return std::exchange(text_, {});
}

std::string KinetoArrayPieces::Tail() { return "\n]\n"; }

absl::Status WriteKinetoFile(const Rank& rank, const KinetoWriteOptions& options,
                             const std::string& path) {
  std::string text = KinetoJson(rank, options);
  if (!std::string_view(path).ends_with(".gz")) return WriteOutputFile(path, text);
  absl::StatusOr<std::string> compressed = GzipBytes(text, options.gzip_level);
  if (!compressed.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": ", compressed.status().message()));
  }
  return WriteOutputFile(path, *compressed);
}

}  // namespace bubblescope
