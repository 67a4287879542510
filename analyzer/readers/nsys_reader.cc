#include "readers/nsys_reader.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <optional>
#include <tuple>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "bubblescope/rank_finish.h"
#include "bubblescope/op_names.h"
#include "readers/nsys_database.h"
#include "readers/nsys_nccl_payload.h"
#include "readers/nsys_ranks.h"

namespace bubblescope {
namespace {

using nsys::Database;
using nsys::Statement;

// globalTid / globalPid serialise the process and thread ids in 24-bit fields (the export
// documentation's "Serialized process and thread identifiers"): PID = globalTid / 0x1000000 %
// 0x1000000, TID = globalTid % 0x1000000. A globalPid is a globalTid without its thread field.
constexpr int64_t kIdField = 0x1000000;
int64_t ProcessKey(int64_t global_tid) { return global_tid / kIdField * kIdField; }
int64_t PidOf(int64_t global_id) { return global_id / kIdField % kIdField; }
int64_t TidOf(int64_t global_tid) { return global_tid % kIdField; }

// NVTX event types (ENUM_NSYS_EVENT_TYPE): push/pop and start/end ranges of the C API and of
// NVTXT, and the creation of a named domain.
constexpr int64_t kNvtxPushPopRange = 59;
constexpr int64_t kNvtxStartEndRange = 60;
constexpr int64_t kNvtxtPushPopRange = 70;
constexpr int64_t kNvtxtStartEndRange = 71;
constexpr int64_t kNvtxDomainCreate = 75;

constexpr std::string_view kSqliteMagic("SQLite format 3\0", 16);

// CUDA runtime and driver calls carry the API version that introduced them
// ("cudaLaunchKernel_v7000"); Kineto, and so every name bubblescope knows, has the bare name.
std::string_view BareApiName(std::string_view name) {
  const size_t mark = name.rfind("_v");
  if (mark == std::string_view::npos || mark + 2 == name.size()) return name;
  for (size_t i = mark + 2; i < name.size(); ++i) {
    if (name[i] < '0' || name[i] > '9') return name;
  }
  return name.substr(0, mark);
}

// torch.autograd.profiler.emit_nvtx names each operator's range "aten::mm, seq = 12, op_id =
// 40, sizes = [...]": the operator's name is what comes before the first of those fields.
std::string_view TorchOperatorName(std::string_view name) {
  size_t cut = name.size();
  for (std::string_view field : {", seq = ", ", op_id = ", ", sizes = ", ", input_op_ids = "}) {
    cut = std::min(cut, name.find(field));
  }
  return name.substr(0, cut);
}

// CUPTI's copy kinds (ENUM_CUDA_MEMCPY_OPER), spelled as Kineto spells them in "Memcpy HtoD".
std::string MemcpyName(int64_t copy_kind) {
  static constexpr std::string_view kKinds[] = {"Unknown", "HtoD", "DtoH", "HtoA", "AtoH",
                                                "AtoA",    "AtoD", "DtoA", "DtoD", "HtoH",
                                                "PtoP"};
  if (copy_kind >= 0 && copy_kind < static_cast<int64_t>(std::size(kKinds))) {
    return absl::StrCat("Memcpy ", std::string(kKinds[copy_kind]));
  }
  return "Memcpy";
}

// The rank each process becomes, while it is read.
struct Process {
  Rank rank;
  absl::flat_hash_map<std::tuple<uint8_t, int64_t, int64_t>, uint32_t> timeline_index;
  nsys::ProcessComms comms;
  bool device_work = false;
  bool runtime_calls = false;

  Timeline& TimelineFor(TimelineKind kind, int32_t device, int64_t pid, int64_t id) {
    const auto key = std::make_tuple(static_cast<uint8_t>(kind),
                                     kind == TimelineKind::kGpuStream ? device : pid, id);
    auto [it, added] = timeline_index.try_emplace(key, rank.timelines.size());
    if (added) {
      Timeline timeline;
      timeline.kind = kind;
      timeline.device = device;
      timeline.pid = pid;
      timeline.id = id;
      rank.timelines.push_back(std::move(timeline));
    }
    return rank.timelines[it->second];
  }
};

class ExportReader {
 public:
  explicit ExportReader(const Database& database) : db_(database) {}

  absl::StatusOr<std::vector<Rank>> Read();

 private:
  absl::Status ReadStrings();
  absl::Status ReadClock();
  absl::Status ReadSystem();
  absl::Status ReadDeviceOps(std::string_view table, IntervalKind kind);
  absl::Status ReadRuntime();
  absl::Status ReadNvtx();
  void AddNvtxRange(Process& process, int64_t global_tid, TimeNs start, TimeNs end,
                    std::string_view name);
  // An optional column's name, or NULL where this export's table lacks it.
  std::string Column(std::string_view table, std::string_view column) const {
    return db_.HasColumn(table, column) ? absl::StrCat("\"", std::string(column), "\"") : "NULL";
  }
  std::string_view String(int64_t id) const {
    auto it = strings_.find(id);
    return it == strings_.end() ? std::string_view() : std::string_view(it->second);
  }
  Process& ProcessFor(int64_t global_pid);
  // [start, end) on the wall clock; false (counted) for an unusable pair.
  bool Span(int64_t start, int64_t end, bool has_end, Process& process, TimeNs* from, TimeNs* to);

  const Database& db_;
  absl::flat_hash_map<int64_t, std::string> strings_;
  absl::flat_hash_map<int64_t, std::unique_ptr<Process>> processes_;  // by globalPid
  std::vector<int64_t> process_order_;
  int64_t clock_shift_ = 0;
  std::string host_;
  std::vector<DeviceInfo> gpus_;
  nsys::PayloadSchemas payloads_;
};

Process& ExportReader::ProcessFor(int64_t global_pid) {
  auto [it, added] = processes_.try_emplace(global_pid);
  if (added) {
    it->second = std::make_unique<Process>();
    it->second->rank.pid = PidOf(global_pid);
    process_order_.push_back(global_pid);
  }
  return *it->second;
}

bool ExportReader::Span(int64_t start, int64_t end, bool has_end, Process& process, TimeNs* from,
                        TimeNs* to) {
  if (!has_end) {
    process.rank.stats.Bump(ImportCounter::kMissingField, -1);  // a range never closed
    return false;
  }
  const std::optional<int64_t> a = CheckedAdd(start, clock_shift_);
  const std::optional<int64_t> b = CheckedAdd(end, clock_shift_);
  std::optional<ImportCounter> problem = ImportCounter::kTimeOutOfRange;
  if (a.has_value() && b.has_value()) problem = SpanProblem(*a, *b);
  if (problem.has_value()) {
    process.rank.stats.Bump(*problem, -1);
    return false;
  }
  *from = *a;
  *to = *b;
  return true;
}

absl::Status ExportReader::ReadStrings() {
  absl::StatusOr<Statement> rows = db_.Prepare(absl::StrCat("SELECT id, value FROM ", db_.Table("StringIds")));
  if (!rows.ok()) return rows.status();
  while (rows->Step()) strings_.try_emplace(rows->Int(0), rows->Text(1));
  return rows->status();
}

// Event times are on the target's clock; TARGET_INFO_SESSION_START_TIME gives the same instant
// on that clock (systemClockNs) and on the UTC epoch (utcEpochNs), so every rank's times land on
// the wall clock, as Kineto's absolute times do. An export made with --ts-normalize counts from
// the session's start instead.
absl::Status ExportReader::ReadClock() {
  if (!db_.HasTable("TARGET_INFO_SESSION_START_TIME")) return absl::OkStatus();
  bool normalized = false;
  if (db_.HasTable("META_DATA_EXPORT")) {
    absl::StatusOr<Statement> meta = db_.Prepare(
        absl::StrCat("SELECT value FROM ", db_.Table("META_DATA_EXPORT"),
                     " WHERE name = 'EXPORT_PARAM_TIME_NORMALIZE'"));
    if (!meta.ok()) return meta.status();
    while (meta->Step()) normalized = meta->Text(0) == "true";
    if (!meta->status().ok()) return meta->status();
  }
  absl::StatusOr<Statement> start = db_.Prepare(absl::StrCat(
      "SELECT utcEpochNs, ", Column("TARGET_INFO_SESSION_START_TIME", "systemClockNs"),
      " FROM ", db_.Table("TARGET_INFO_SESSION_START_TIME")));
  if (!start.ok()) return start.status();
  if (start->Step()) {
    const int64_t utc = start->Int(0);
    const int64_t clock = normalized ? 0 : start->Int(1);
    if (__builtin_sub_overflow(utc, clock, &clock_shift_)) clock_shift_ = 0;
  }
  return start->status();
}

absl::Status ExportReader::ReadSystem() {
  if (db_.HasTable("TARGET_INFO_SYSTEM_ENV")) {
    absl::StatusOr<Statement> env =
        db_.Prepare(absl::StrCat("SELECT value FROM ", db_.Table("TARGET_INFO_SYSTEM_ENV"),
                                 " WHERE name = 'Hostname'"));
    if (!env.ok()) return env.status();
    while (env->Step()) host_ = std::string(env->Text(0));
    if (!env->status().ok()) return env->status();
  }
  if (!db_.HasTable("TARGET_INFO_GPU")) return absl::OkStatus();
  absl::StatusOr<Statement> gpus = db_.Prepare(absl::StrCat(
      "SELECT id, name, ", Column("TARGET_INFO_GPU", "totalMemory"), ", ",
      Column("TARGET_INFO_GPU", "computeMajor"), ", ", Column("TARGET_INFO_GPU", "computeMinor"),
      ", ", Column("TARGET_INFO_GPU", "smCount"), " FROM ", db_.Table("TARGET_INFO_GPU")));
  if (!gpus.ok()) return gpus.status();
  while (gpus->Step()) {
    gpus_.push_back(DeviceInfo{static_cast<int32_t>(gpus->Int(0)), std::string(gpus->Text(1)),
                               gpus->Int(2), static_cast<int32_t>(gpus->Int(3)),
                               static_cast<int32_t>(gpus->Int(4)),
                               static_cast<int32_t>(gpus->Int(5))});
  }
  return gpus->status();
}

absl::Status ExportReader::ReadDeviceOps(std::string_view table, IntervalKind kind) {
  if (!db_.HasTable(table)) return absl::OkStatus();
  // Kernels are named by their demangled name, as Kineto names them; copies by their kind.
  std::string name_column = "NULL";
  if (kind == IntervalKind::kComputeKernel) {
    name_column = db_.HasColumn(table, "demangledName") ? "demangledName" : "shortName";
  } else if (kind == IntervalKind::kMemcpy) {
    name_column = Column(table, "copyKind");
  }
  absl::StatusOr<Statement> rows = db_.Prepare(absl::StrCat(
      "SELECT start, \"end\", deviceId, streamId, ", Column(table, "correlationId"), ", ",
      Column(table, "globalPid"), ", ", name_column, " FROM ", db_.Table(table)));
  if (!rows.ok()) return rows.status();
  while (rows->Step()) {
    Process& process = ProcessFor(ProcessKey(rows->Int(5)));
    process.device_work = true;
    Interval interval;
    if (!Span(rows->Int(0), rows->Int(1), true, process, &interval.start, &interval.end)) continue;
    const int64_t device = rows->Int(2);
    if (device < 0 || device > INT32_MAX) {
      process.rank.stats.Bump(ImportCounter::kBadId, -1);
      continue;
    }
    interval.correlation = rows->Int(4);
    interval.kind = kind;
    Rank& rank = process.rank;
    if (kind == IntervalKind::kComputeKernel) {
      const std::string_view name = String(rows->Int(6));
      interval.name = rank.names.Intern(name);
      if (std::optional<CommKind> comm = op_names::CommKernelKind(name); comm.has_value()) {
        interval.kind = IntervalKind::kCommKernel;
        interval.comm = static_cast<uint32_t>(rank.comms.size());
        rank.comms.push_back(CommInfo{.kind = *comm});
      }
    } else if (kind == IntervalKind::kMemcpy) {
      interval.name = rank.names.Intern(MemcpyName(rows->Int(6)));
    } else {
      interval.name = rank.names.Intern("Memset (Device)");
    }
    process.TimelineFor(TimelineKind::kGpuStream, static_cast<int32_t>(device), process.rank.pid,
                        rows->Int(3))
        .intervals.push_back(interval);
  }
  return rows->status();
}

absl::Status ExportReader::ReadRuntime() {
  constexpr std::string_view kTable = "CUPTI_ACTIVITY_KIND_RUNTIME";
  if (!db_.HasTable(kTable)) return absl::OkStatus();
  absl::StatusOr<Statement> rows = db_.Prepare(absl::StrCat(
      "SELECT start, \"end\", globalTid, ", Column(kTable, "correlationId"), ", nameId FROM ",
      db_.Table(kTable)));
  if (!rows.ok()) return rows.status();
  while (rows->Step()) {
    const int64_t global_tid = rows->Int(2);
    Process& process = ProcessFor(ProcessKey(global_tid));
    process.runtime_calls = true;
    Interval interval;
    if (!Span(rows->Int(0), rows->Int(1), true, process, &interval.start, &interval.end)) continue;
    interval.kind = IntervalKind::kRuntime;
    interval.correlation = rows->Int(3);
    interval.name = process.rank.names.Intern(BareApiName(String(rows->Int(4))));
    process.TimelineFor(TimelineKind::kCpuThread, -1, process.rank.pid, TidOf(global_tid))
        .intervals.push_back(interval);
  }
  return rows->status();
}

// A user range becomes what Kineto would have made of the same RecordFunction: an operator
// ("aten::mm", "c10d::send", under emit_nvtx) an op, communication ops communication;
// "ProfilerStep#N" a step; anything else ("PP:F3", Megatron's ranges) a CPU annotation.
void ExportReader::AddNvtxRange(Process& process, int64_t global_tid, TimeNs start, TimeNs end,
                                std::string_view text) {
  Rank& rank = process.rank;
  const std::string_view name = TorchOperatorName(text);
  const int64_t tid = TidOf(global_tid);
  if (op_names::IsOperatorName(name) || name == "record_param_comms") {
    Interval interval;
    interval.start = start;
    interval.end = end;
    interval.name = rank.names.Intern(name);
    interval.kind = IntervalKind::kCpuOp;
    if (std::optional<CommKind> comm = op_names::CpuCommOpKind(name); comm.has_value()) {
      interval.kind = IntervalKind::kCpuCommOp;
      interval.comm = static_cast<uint32_t>(rank.comms.size());
      rank.comms.push_back(CommInfo{.kind = *comm});
    }
    process.TimelineFor(TimelineKind::kCpuThread, -1, rank.pid, tid).intervals.push_back(interval);
    return;
  }
  if (std::optional<int64_t> step = op_names::ProfilerStepNumber(name); step.has_value()) {
    rank.steps.push_back(ProfilerStep{*step, start, end});
  }
  rank.annotations.push_back(Annotation{.start = start,
                                        .end = end,
                                        .name = rank.names.Intern(name),
                                        .scope = AnnotationScope::kCpu,
                                        .thread_or_stream = tid});
}

absl::Status ExportReader::ReadNvtx() {
  constexpr std::string_view kTable = "NVTX_EVENTS";
  if (!db_.HasTable(kTable)) return absl::OkStatus();
  if (absl::Status loaded = payloads_.Load(db_); !loaded.ok()) return loaded;
  const std::string domain_column = Column(kTable, "domainId");
  const std::string text_id_column = Column(kTable, "textId");
  absl::flat_hash_map<int64_t, std::string> domains;
  {
    absl::StatusOr<Statement> rows = db_.Prepare(absl::StrCat(
        "SELECT ", domain_column, ", text FROM ", db_.Table(kTable), " WHERE eventType = ",
        kNvtxDomainCreate));
    if (!rows.ok()) return rows.status();
    while (rows->Step()) domains.try_emplace(rows->Int(0), rows->Text(1));
    if (!rows->status().ok()) return rows->status();
  }
  absl::StatusOr<Statement> rows = db_.Prepare(absl::StrCat(
      "SELECT start, \"end\", globalTid, text, ", text_id_column, ", ", domain_column, ", ",
      Column(kTable, "binaryData"), " FROM ", db_.Table(kTable), " WHERE eventType IN (", kNvtxPushPopRange,
      ", ", kNvtxStartEndRange, ", ", kNvtxtPushPopRange, ", ", kNvtxtStartEndRange, ")"));
  if (!rows.ok()) return rows.status();
  while (rows->Step()) {
    const int64_t global_tid = rows->Int(2);
    Process& process = ProcessFor(ProcessKey(global_tid));
    TimeNs start = 0;
    TimeNs end = 0;
    if (!Span(rows->Int(0), rows->Int(1), !rows->IsNull(1), process, &start, &end)) continue;
    const std::string_view name = rows->IsNull(3) ? String(rows->Int(4)) : rows->Text(3);
    auto domain = domains.find(rows->Int(5));
    if (domain != domains.end() && domain->second == "NCCL") {
      std::optional<nsys::NcclPayload> payload;
      if (!rows->IsNull(6)) payload = payloads_.Decode(rows->Blob(6));
      process.comms.Add(TidOf(global_tid), start, end, name, payload);
      continue;
    }
    AddNvtxRange(process, global_tid, start, end, name);
  }
  return rows->status();
}

absl::StatusOr<std::vector<Rank>> ExportReader::Read() {
  // Every export holds StringIds (the names of everything) and META_DATA_EXPORT; an SQLite file
  // without both is someone else's.
  if (!db_.HasTable("StringIds")) {
    return absl::InvalidArgumentError(absl::StrCat(
        db_.path(), ": an SQLite database, but no Nsight Systems export (no StringIds table)"));
  }
  for (absl::Status status : {ReadStrings(), ReadClock(), ReadSystem()}) {
    if (!status.ok()) return status;
  }
  for (absl::Status status :
       {ReadDeviceOps("CUPTI_ACTIVITY_KIND_KERNEL", IntervalKind::kComputeKernel),
        ReadDeviceOps("CUPTI_ACTIVITY_KIND_MEMCPY", IntervalKind::kMemcpy),
        ReadDeviceOps("CUPTI_ACTIVITY_KIND_MEMSET", IntervalKind::kMemset), ReadRuntime(),
        ReadNvtx()}) {
    if (!status.ok()) return status;
  }
  // The ranks are the processes that ran GPU work; where none did (a capture cut before the
  // first kernel), the processes that called CUDA.
  const bool any_device_work = std::any_of(processes_.begin(), processes_.end(),
                                           [](const auto& p) { return p.second->device_work; });
  std::vector<Process*> kept;
  for (int64_t key : process_order_) {
    Process& process = *processes_[key];
    if (any_device_work ? process.device_work : process.runtime_calls) kept.push_back(&process);
  }
  if (kept.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        db_.path(), ": an Nsight Systems export without CUDA kernels, copies or API calls "
                    "(profile with nsys profile -t cuda,nvtx)"));
  }
  std::vector<nsys::ProcessComms*> comms;
  for (Process* process : kept) comms.push_back(&process->comms);
  nsys::ResolveRanks(comms);
  std::vector<Rank> ranks;
  for (Process* process : kept) {
    Rank& rank = process->rank;
    rank.source_path = db_.path();
    rank.host = host_;
    rank.backend = process->comms.any() ? "nccl" : "";
    process->comms.Fill(&rank, [&](int64_t tid) -> Timeline& {
      return process->TimelineFor(TimelineKind::kCpuThread, -1, rank.pid, tid);
    });
    for (const DeviceInfo& gpu : gpus_) {
      const bool used = std::any_of(rank.timelines.begin(), rank.timelines.end(),
                                    [&](const Timeline& t) {
                                      return t.kind == TimelineKind::kGpuStream &&
                                             t.device == gpu.id;
                                    });
      if (used) rank.devices.push_back(gpu);
    }
    FinishRank(FinishOptions{}, &rank);  // times are on the wall clock already
    nsys::DescribeLaunchedKernels(&rank);
    ranks.push_back(std::move(rank));
  }
  nsys::NumberByDevice(&ranks);
  return ranks;
}

}  // namespace

bool IsSqliteHead(std::string_view head) { return head.starts_with(kSqliteMagic); }

absl::Status NsysTraceReader::Read(const std::string& path, const ReaderOptions& options,
                                   FileRanks* out) {
  absl::StatusOr<std::vector<Rank>> ranks = ReadNsysSqlite(path, NsysReadOptions{options.max_bytes});
  if (!ranks.ok()) return ranks.status();
  out->ranks = std::move(*ranks);
  // Several processes in one export name their ranks themselves (NCCL's ids, or their GPUs).
  out->named_by_file = out->ranks.size() > 1;
  return absl::OkStatus();
}

absl::StatusOr<std::vector<Rank>> ReadNsysSqlite(const std::string& path,
                                                 const NsysReadOptions& options) {
  absl::StatusOr<Database> database = Database::Open(path, options.max_bytes);
  if (!database.ok()) return database.status();
  return ExportReader(*database).Read();
}

}  // namespace bubblescope
