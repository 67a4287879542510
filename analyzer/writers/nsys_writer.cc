#include "writers/nsys_writer.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <limits>
#include <optional>
#include <string_view>
#include <variant>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "writers/nsys_schema.h"
#include "writers/sqlite_file.h"

namespace bubblescope {
namespace {

// What nsys writes for these (ENUM_NSYS_EVENT_TYPE, ENUM_NSYS_EVENT_CLASS).
constexpr int64_t kPushPopRange = 59;
constexpr int64_t kDomainCreate = 75;
constexpr int64_t kCudaRuntimeClass = 0;
constexpr int64_t kNcclDomain = 1;
// Serialised ids: 2^48 for the first target, then the pid and tid in 24-bit fields.
constexpr int64_t kTarget = int64_t{1} << 48;
constexpr int64_t kIdField = 0x1000000;

// NCCL's payload schemas as it registers them (src/include/nvtx_payload_schemas.h): field name,
// NVTX entry type (5 int, 18 uint64, 22 size_t), offset; the schemas' ids are the writer's own.
struct Field {
  std::string_view name;
  int64_t type;
  int64_t offset;
};
constexpr int64_t kInitSchema = 0x1000002;
constexpr int64_t kCollectiveSchema = 0x1000004;
constexpr int64_t kPointToPointSchema = 0x100000a;
constexpr Field kInitFields[] = {{"NCCL communicator ID", 18, 0},
                                 {"No. of ranks", 5, 8},
                                 {"Rank", 5, 12},
                                 {"CUDA device", 5, 16}};
constexpr Field kCollectiveFields[] = {{"NCCL communicator ID", 18, 0},
                                       {"Message size [bytes]", 22, 8}};
constexpr Field kPointToPointFields[] = {
    {"NCCL communicator ID", 18, 0}, {"Message size [bytes]", 22, 8}, {"Peer rank", 5, 16}};

// NCCL's API name for a kind of communication; empty for those torch builds from other calls.
std::string_view NcclCall(CommKind kind) {
  switch (kind) {
    case CommKind::kSend:
      return "ncclSend";
    case CommKind::kRecv:
      return "ncclRecv";
    case CommKind::kAllReduce:
      return "ncclAllReduce";
    case CommKind::kAllGather:
      return "ncclAllGather";
    case CommKind::kReduceScatter:
      return "ncclReduceScatter";
    case CommKind::kBroadcast:
      return "ncclBroadcast";
    case CommKind::kReduce:
      return "ncclReduce";
    default:
      return "";
  }
}

uint64_t Fnv1a(std::string_view text) {
  uint64_t hash = 0xcbf29ce484222325ULL;
  for (char c : text) hash = (hash ^ static_cast<unsigned char>(c)) * 0x100000001b3ULL;
  return hash;
}

// A payload cell: the 32-byte header (domain, schema, size, offset), then each field's value at
// its offset, little-endian, 8 bytes for uint64 / size_t and 4 for int.
template <size_t N>
std::string Payload(int64_t schema, const Field (&fields)[N], const std::array<uint64_t, N>& values,
                    size_t size) {
  std::string blob(32 + size, '\0');
  auto put = [&](size_t at, uint64_t value, size_t width) {
    for (size_t i = 0; i < width; ++i) blob[at + i] = static_cast<char>((value >> (8 * i)) & 0xff);
  };
  put(0, kNcclDomain, 8);
  put(8, static_cast<uint64_t>(schema), 8);
  put(16, size, 8);
  put(24, 32, 8);
  for (size_t i = 0; i < N; ++i) {
    put(32 + static_cast<size_t>(fields[i].offset), values[i], fields[i].type == 5 ? 4 : 8);
  }
  return blob;
}

// The capture runs on past the last event by this much (nsys stops a little after the job).
constexpr int64_t kCaptureTail = 100'000'000;

// The rank's first and last times.
std::pair<TimeNs, TimeNs> Extent(const Rank& rank) {
  TimeNs earliest = std::numeric_limits<TimeNs>::max();
  TimeNs latest = std::numeric_limits<TimeNs>::min();
  auto add = [&](TimeNs start, TimeNs end) {
    earliest = std::min(earliest, start);
    latest = std::max(latest, end);
  };
  for (const Timeline& timeline : rank.timelines) {
    for (const Interval& interval : timeline.intervals) add(interval.start, interval.end);
  }
  for (const Annotation& annotation : rank.annotations) add(annotation.start, annotation.end);
  for (const ProfilerStep& step : rank.steps) add(step.start, step.end);
  return {earliest, latest};
}

// The host's own clock (CLOCK_MONOTONIC, which nsys reads as systemClockNs): zero when the host
// booted, a few days before its first session, a different time on every host.
int64_t HostClock(std::string_view host, int64_t utc_ns) {
  uint64_t hash = 0xcbf29ce484222325ULL;
  for (char c : host) hash = (hash ^ static_cast<unsigned char>(c)) * 0x100000001b3ULL;
  constexpr int64_t kDay = int64_t{86'400} * 1'000'000'000;
  const int64_t uptime = kDay + static_cast<int64_t>(hash % static_cast<uint64_t>(5 * kDay));
  // Since a fixed instant (2020-09-13 UTC), so that every session of one host agrees.
  constexpr int64_t kSince = 1'600'000'000'000'000'000;
  return uptime + (utc_ns >= kSince ? utc_ns - kSince : utc_ns);
}

// What the processes of one export share: the file, its strings, its clock, the GPUs and NCCL's
// domain and schemas (written once).
struct ExportFile {
  nsys::SqliteFile* file = nullptr;
  absl::flat_hash_map<std::string, int64_t> strings;
  TimeNs session_start = 0;  // on the ranks' clock: event times are written from it
  absl::flat_hash_set<int32_t> gpus;
  bool nccl_domain = false;
};

// One process of an export.
class RankExporter {
 public:
  RankExporter(const Rank& rank, const NsysWriteOptions& options, ExportFile* out)
      : rank_(rank),
        options_(options),
        out_(*out),
        file_(*out->file),
        session_start_(out->session_start),
        earliest_(Extent(rank).first) {}

  void Write() {
    WriteTarget();
    WriteGpuWork();
    WriteCpuWork();
    WriteRanges();
    WriteNccl();
  }

 private:
  struct Communicator {
    uint64_t id = 0;
    const ProcessGroup* group = nullptr;  // nullptr: the world
  };

  int64_t Raw(TimeNs time) const { return time - session_start_; }
  int64_t GlobalPid() const { return kTarget + (rank_.pid % kIdField) * kIdField; }
  int64_t GlobalTid(int64_t tid) const { return GlobalPid() + tid % kIdField; }
  int64_t MainThread() const {
    for (const Timeline& timeline : rank_.timelines) {
      if (timeline.kind == TimelineKind::kCpuThread) return timeline.id;
    }
    return rank_.pid;
  }
  int64_t StringId(std::string_view text) {
    auto [it, added] =
        out_.strings.try_emplace(std::string(text), static_cast<int64_t>(out_.strings.size()));
    return it->second;
  }

  void WriteTarget() {
    for (const DeviceInfo& device : rank_.devices) {
      if (!out_.gpus.insert(device.id).second) continue;
      file_.Insert("TARGET_INFO_GPU", {{"vmId", kTarget},
                                       {"id", int64_t{device.id}},
                                       {"name", device.name},
                                       {"totalMemory", device.total_memory_bytes},
                                       {"smCount", int64_t{device.multiprocessors}},
                                       {"cuDevice", int64_t{device.id}},
                                       {"computeMajor", int64_t{device.compute_major}},
                                       {"computeMinor", int64_t{device.compute_minor}}});
    }
    file_.Insert(
        "PROCESSES",
        {{"globalPid", GlobalPid()}, {"pid", rank_.pid}, {"name", std::string("python3")}});
  }

  void WriteGpuWork() {
    for (const Timeline& timeline : rank_.timelines) {
      if (timeline.kind != TimelineKind::kGpuStream) continue;
      for (const Interval& interval : timeline.intervals) {
        const int64_t correlation = interval.correlation;
        if (interval.kind == IntervalKind::kComputeKernel ||
            interval.kind == IntervalKind::kCommKernel) {
          const int64_t name = StringId(rank_.name(interval.name));
          file_.Insert("CUPTI_ACTIVITY_KIND_KERNEL",
                       {{"start", Raw(interval.start)},
                        {"end", Raw(interval.end)},
                        {"deviceId", int64_t{timeline.device}},
                        {"contextId", int64_t{1}},
                        {"streamId", timeline.id},
                        {"correlationId", correlation},
                        {"globalPid", GlobalPid()},
                        {"demangledName", name},
                        {"shortName", name},
                        {"registersPerThread", int64_t{128}},
                        {"gridX", int64_t{228}},
                        {"gridY", int64_t{1}},
                        {"gridZ", int64_t{1}},
                        {"blockX", int64_t{256}},
                        {"blockY", int64_t{1}},
                        {"blockZ", int64_t{1}},
                        {"staticSharedMemory", int64_t{0}},
                        {"dynamicSharedMemory", int64_t{0}},
                        {"localMemoryPerThread", int64_t{0}},
                        {"localMemoryTotal", int64_t{0}},
                        {"gridId", correlation},
                        {"tensorSizeMinusOneElements", std::string("")}});
        } else if (interval.kind == IntervalKind::kMemcpy) {
          file_.Insert("CUPTI_ACTIVITY_KIND_MEMCPY",
                       {{"start", Raw(interval.start)},
                        {"end", Raw(interval.end)},
                        {"deviceId", int64_t{timeline.device}},
                        {"contextId", int64_t{1}},
                        {"streamId", timeline.id},
                        {"correlationId", correlation},
                        {"globalPid", GlobalPid()},
                        {"bytes", int64_t{0}},
                        {"copyKind", int64_t{8}}});  // device to device
        } else if (interval.kind == IntervalKind::kMemset) {
          file_.Insert("CUPTI_ACTIVITY_KIND_MEMSET", {{"start", Raw(interval.start)},
                                                      {"end", Raw(interval.end)},
                                                      {"deviceId", int64_t{timeline.device}},
                                                      {"contextId", int64_t{1}},
                                                      {"streamId", timeline.id},
                                                      {"correlationId", correlation},
                                                      {"globalPid", GlobalPid()},
                                                      {"value", int64_t{0}},
                                                      {"bytes", int64_t{0}}});
        }
      }
    }
  }

  // Runtime calls, with the API version nsys appends; operators as torch's emit_nvtx names them.
  void WriteCpuWork() {
    int64_t op_id = 0;
    for (const Timeline& timeline : rank_.timelines) {
      if (timeline.kind != TimelineKind::kCpuThread) continue;
      for (const Interval& interval : timeline.intervals) {
        const std::string_view name = rank_.name(interval.name);
        if (interval.kind == IntervalKind::kRuntime) {
          launches_.try_emplace(interval.correlation,
                                Launch{timeline.id, interval.start, interval.end});
          const std::string versioned =
              name.starts_with("cuda")
                  ? absl::StrCat(std::string(name),
                                 name == "cudaLaunchKernel" ? "_v7000" : "_v3020")
                  : std::string(name);
          file_.Insert("CUPTI_ACTIVITY_KIND_RUNTIME", {{"start", Raw(interval.start)},
                                                       {"end", Raw(interval.end)},
                                                       {"eventClass", kCudaRuntimeClass},
                                                       {"globalTid", GlobalTid(timeline.id)},
                                                       {"correlationId", interval.correlation},
                                                       {"nameId", StringId(versioned)},
                                                       {"returnValue", int64_t{0}}});
          continue;
        }
        Range(timeline.id, interval.start, interval.end,
              absl::StrCat(std::string(name), ", op_id = ", ++op_id));
        const CommInfo* comm = rank_.comm(interval);
        if (comm != nullptr && name == "record_param_comms" &&
            (comm->kind == CommKind::kSend || comm->kind == CommKind::kRecv)) {
          nccl_.push_back(NcclCall_{timeline.id, interval.start, interval.end, comm});
        }
      }
    }
  }

  void Range(int64_t tid, TimeNs start, TimeNs end, std::string text) {
    file_.Insert("NVTX_EVENTS", {{"start", Raw(start)},
                                 {"end", Raw(end)},
                                 {"eventType", kPushPopRange},
                                 {"text", std::move(text)},
                                 {"globalTid", GlobalTid(tid)},
                                 {"domainId", int64_t{0}}});
  }

  // User ranges and profiler steps; the GPU copies Kineto makes of them nsys does not have.
  void WriteRanges() {
    for (const Annotation& annotation : rank_.annotations) {
      const std::string_view name = rank_.name(annotation.name);
      if (annotation.scope != AnnotationScope::kCpu || name.starts_with("ProfilerStep#")) continue;
      Range(annotation.thread_or_stream, annotation.start, annotation.end, std::string(name));
    }
    for (const ProfilerStep& step : rank_.steps) {
      Range(MainThread(), step.start, step.end, absl::StrCat("ProfilerStep#", step.number));
    }
  }

  Communicator CommunicatorOf(const CommInfo& comm) const {
    if (comm.process_group == kNoIndex) return Communicator{world_id_, nullptr};
    const ProcessGroup& group = rank_.process_groups[comm.process_group];
    // A group of every rank in order is torch's default group, whose communicator is the world's.
    bool whole =
        rank_.world_size > 0 && group.ranks.size() == static_cast<size_t>(rank_.world_size);
    for (size_t r = 0; whole && r < group.ranks.size(); ++r)
      whole = group.ranks[r] == static_cast<int32_t>(r);
    if (whole) return Communicator{world_id_, nullptr};
    std::string key = absl::StrCat(group.name, ":");
    for (int32_t member : group.ranks) absl::StrAppend(&key, member, ",");
    return Communicator{Fnv1a(key), &group};
  }
  static int64_t IndexIn(const Communicator& communicator, int32_t rank) {
    if (communicator.group == nullptr) return rank;
    auto it = std::find(communicator.group->ranks.begin(), communicator.group->ranks.end(), rank);
    return it == communicator.group->ranks.end() ? -1 : it - communicator.group->ranks.begin();
  }

  // NCCL's own ranges: each communicator's creation first, then each call, where torch made it.
  void WriteNccl() {
    for (const Timeline& timeline : rank_.timelines) {
      if (timeline.kind != TimelineKind::kGpuStream) continue;
      for (const Interval& interval : timeline.intervals) {
        const CommInfo* comm = rank_.comm(interval);
        auto launch = launches_.find(interval.correlation);
        if (interval.kind != IntervalKind::kCommKernel || comm == nullptr ||
            NcclCall(comm->kind).empty() || launch == launches_.end()) {
          continue;
        }
        nccl_.push_back(
            NcclCall_{launch->second.tid, launch->second.start, launch->second.end, comm});
      }
    }
    if (nccl_.empty() || rank_.rank < 0 || rank_.world_size <= 0) return;
    world_id_ = Fnv1a(absl::StrCat("world:", rank_.world_size));
    if (!out_.nccl_domain) {
      out_.nccl_domain = true;
      file_.Insert("NVTX_EVENTS", {{"start", Raw(earliest_) - 2'000'000},
                                   {"eventType", kDomainCreate},
                                   {"text", std::string("NCCL")},
                                   {"globalTid", GlobalTid(MainThread())},
                                   {"domainId", kNcclDomain}});
      WriteSchema(kInitSchema, kInitFields, 24);
      WriteSchema(kCollectiveSchema, kCollectiveFields, 16);
      WriteSchema(kPointToPointSchema, kPointToPointFields, 24);
    }
    std::vector<Communicator> created = {Communicator{world_id_, nullptr}};
    for (const ProcessGroup& group : rank_.process_groups) {
      CommInfo probe;
      probe.process_group = static_cast<uint32_t>(&group - rank_.process_groups.data());
      const Communicator communicator = CommunicatorOf(probe);
      if (std::none_of(created.begin(), created.end(),
                       [&](const Communicator& c) { return c.id == communicator.id; }) &&
          IndexIn(communicator, rank_.rank) >= 0) {
        created.push_back(communicator);
      }
    }
    TimeNs at = earliest_ - 1'000'000;
    for (const Communicator& communicator : created) {
      const uint64_t size = communicator.group == nullptr ? static_cast<uint64_t>(rank_.world_size)
                                                          : communicator.group->ranks.size();
      NcclRange("ncclCommInitRank", MainThread(), at, at + 1000,
                Payload(kInitSchema, kInitFields,
                        std::array<uint64_t, 4>{
                            communicator.id, size,
                            static_cast<uint64_t>(IndexIn(communicator, rank_.rank)), 0},
                        24));
      at += 2000;
    }
    for (const NcclCall_& call : nccl_) {
      const Communicator communicator = CommunicatorOf(*call.comm);
      const uint64_t bytes = static_cast<uint64_t>(std::max<int64_t>(call.comm->bytes, 0));
      const bool p2p = call.comm->kind == CommKind::kSend || call.comm->kind == CommKind::kRecv;
      std::string payload =
          p2p ? Payload(kPointToPointSchema, kPointToPointFields,
                        std::array<uint64_t, 3>{
                            communicator.id, bytes,
                            static_cast<uint64_t>(IndexIn(communicator, call.comm->peer))},
                        24)
              : Payload(kCollectiveSchema, kCollectiveFields,
                        std::array<uint64_t, 2>{communicator.id, bytes}, 16);
      NcclRange(NcclCall(call.comm->kind), call.tid, call.start, call.end, std::move(payload));
    }
  }

  template <size_t N>
  void WriteSchema(int64_t schema, const Field (&fields)[N], int64_t size) {
    file_.Insert("NVTX_PAYLOAD_SCHEMAS", {{"domainId", kNcclDomain},
                                          {"schemaId", schema},
                                          {"type", int64_t{1}},
                                          {"numEntries", int64_t{N}},
                                          {"payloadSize", size},
                                          {"alignTo", int64_t{8}}});
    for (size_t i = 0; i < N; ++i) {
      file_.Insert("NVTX_PAYLOAD_SCHEMA_ENTRIES",
                   {{"domainId", kNcclDomain},
                    {"schemaId", schema},
                    {"idx", int64_t(i)},
                    {"type", fields[i].type},
                    {"name", std::string(fields[i].name)},
                    {"offset", i == 0 ? nsys::SqliteFile::Value(std::nullopt) : fields[i].offset}});
    }
  }

  void NcclRange(std::string_view name, int64_t tid, TimeNs start, TimeNs end,
                 std::string payload) {
    file_.Insert("NVTX_EVENTS",
                 {{"start", Raw(start)},
                  {"end", Raw(end)},
                  {"eventType", kPushPopRange},
                  {"text", std::string(name)},
                  {"globalTid", GlobalTid(tid)},
                  {"domainId", kNcclDomain},
                  {"binaryData", options_.nccl_payloads
                                     ? nsys::SqliteFile::Value(nsys::Bytes{std::move(payload)})
                                     : nsys::SqliteFile::Value(std::nullopt)}});
  }

  struct Launch {
    int64_t tid;
    TimeNs start;
    TimeNs end;
  };
  struct NcclCall_ {
    int64_t tid;
    TimeNs start;
    TimeNs end;
    const CommInfo* comm;
  };

  const Rank& rank_;
  const NsysWriteOptions& options_;
  ExportFile& out_;
  nsys::SqliteFile& file_;
  const TimeNs session_start_;
  const TimeNs earliest_;
  absl::flat_hash_map<int64_t, Launch> launches_;
  std::vector<NcclCall_> nccl_;
  uint64_t world_id_ = 0;
};

// The export-wide tables around every process's own.
void WriteExport(const std::vector<const Rank*>& ranks, const NsysWriteOptions& options,
                 nsys::SqliteFile* file) {
  ExportFile out;
  out.file = file;
  TimeNs earliest = std::numeric_limits<TimeNs>::max();
  TimeNs latest = std::numeric_limits<TimeNs>::min();
  for (const Rank* rank : ranks) {
    const auto [first, last] = Extent(*rank);
    earliest = std::min(earliest, first);
    latest = std::max(latest, last);
  }
  if (earliest > latest) earliest = latest = 0;
  const Rank* only = ranks.size() == 1 ? ranks.front() : nullptr;
  const int64_t lead =
      options.session_lead_ns +
      (only != nullptr && only->rank > 0 ? only->rank * options.session_lead_step_ns : 0);
  out.session_start = earliest - lead;
  const int64_t duration = latest - out.session_start + kCaptureTail;
  const int64_t utc_start = options.utc_of_zero_ns + out.session_start;
  const std::string host = ranks.empty() ? "" : ranks.front()->host;
  const int64_t host_clock = HostClock(host, utc_start);
  file->Exec(nsys::kExportSchema);
  file->Exec("BEGIN");
  const bool old_export = options.schema == NsysSchema::k2022;
  std::vector<std::pair<std::string_view, std::string>> metadata = {
      {"EXPORT_PRODUCT_NAME", "NVIDIA Nsight Systems"}};
  if (options.schema == NsysSchema::k2022) {
    metadata.insert(metadata.end(), {{"EXPORT_PRODUCT_VERSION", "2022.1.1.61"},
                                     {"EXPORT_SCHEMA_VERSION", "2.9.1"}});
  } else {
    const bool y2024 = options.schema == NsysSchema::k2024;
    metadata.insert(metadata.end(),
                    {{"EXPORT_PRODUCT_VERSION", y2024 ? "2024.5.1.113" : "2026.2.1.210"},
                     {"EXPORT_SCHEMA_VERSION", y2024 ? "3.13.2" : "3.25.0"},
                     {"EXPORT_PARAM_INCLUDE_BLOBS", options.nccl_payloads ? "true" : "false"},
                     {"EXPORT_PARAM_TIME_NORMALIZE", "false"}});
    if (y2024) metadata.emplace_back("EXPORT_PARAM_TIME_SHIFT", "0");
  }
  for (const auto& [name, value] : metadata) {
    file->Insert("META_DATA_EXPORT", {{"name", std::string(name)}, {"value", value}});
  }
  file->Insert("TARGET_INFO_SESSION_START_TIME",
               {{"utcEpochNs", utc_start}, {"systemClockNs", host_clock}});
  file->Insert("ANALYSIS_DETAILS", {{"globalVid", kTarget},
                                    {"duration", duration},
                                    {"startTime", host_clock},
                                    {"stopTime", host_clock + duration}});
  if (!old_export) {
    file->Insert("META_DATA_CAPTURE", {{"name", std::string("RUN_DURATION_MS")},
                                       {"value", std::to_string(duration / 1'000'000)}});
    if (options.environment && only != nullptr && only->rank >= 0) {
      std::vector<std::string> variables = {absl::StrCat("RANK=\"", only->rank, "\""),
                                            absl::StrCat("LOCAL_RANK=\"", only->rank, "\"")};
      if (only->world_size > 0) {
        variables.push_back(absl::StrCat("WORLD_SIZE=\"", only->world_size, "\""));
      }
      for (std::string& variable : variables) {
        file->Insert("META_DATA_CAPTURE", {{"name", std::string("PROCESS_0:ENVIRONMENT_VARIABLE")},
                                           {"value", std::move(variable)}});
      }
    }
  }
  if (!host.empty()) {
    file->Insert("TARGET_INFO_SYSTEM_ENV", {{"globalVid", kTarget},
                                            {"devStateName", std::string("")},
                                            {"name", std::string("Hostname")},
                                            {"nameEnum", int64_t{0}},
                                            {"value", host}});
  }
  for (const Rank* rank : ranks) RankExporter(*rank, options, &out).Write();
  for (const auto& [text, id] : out.strings) {
    file->Insert("StringIds", {{"id", id}, {"value", text}});
  }
  for (std::string_view table : nsys::kExportTables) file->DropIfEmpty(table);
  // Older exports: no systemClockNs before 2025, and the metadata table named EXPORT_META_DATA
  // before 2023.
  if (options.schema != NsysSchema::k2026) {
    file->Exec("ALTER TABLE TARGET_INFO_SESSION_START_TIME DROP COLUMN systemClockNs");
  }
  if (old_export) file->Exec("ALTER TABLE META_DATA_EXPORT RENAME TO EXPORT_META_DATA");
  file->Exec("COMMIT");
  file->Exec("VACUUM");  // the dropped tables' pages go, as in an export
}

}  // namespace

absl::Status WriteNsysSqlite(const std::vector<const Rank*>& ranks, const NsysWriteOptions& options,
                             const std::string& path) {
  const std::string temporary = absl::StrCat(path, ".writing");
  std::remove(temporary.c_str());
  std::string error;
  {
    nsys::SqliteFile file(temporary);
    WriteExport(ranks, options, &file);
    file.Close();
    error = file.error();
  }
  if (error.empty() && std::rename(temporary.c_str(), path.c_str()) != 0) error = "cannot rename";
  if (!error.empty()) {
    std::remove(temporary.c_str());
    return absl::InternalError(absl::StrCat("cannot write ", path, ": ", error));
  }
  return absl::OkStatus();
}

absl::Status WriteNsysSqlite(const Rank& rank, const NsysWriteOptions& options,
                             const std::string& path) {
  return WriteNsysSqlite(std::vector<const Rank*>{&rank}, options, path);
}

}  // namespace bubblescope
