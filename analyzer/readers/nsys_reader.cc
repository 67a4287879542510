#include "readers/nsys_reader.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <optional>
#include <tuple>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "bubblescope/op_names.h"
#include "bubblescope/rank_finish.h"
#include "common/status_macros.h"
#include "readers/nsys_clock.h"
#include "readers/nsys_database.h"
#include "readers/nsys_nccl_payload.h"
#include "readers/nsys_ranks.h"
#include "text/utf8.h"

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
  static constexpr std::string_view kKinds[] = {"Unknown", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA",
                                                "AtoD",    "DtoA", "DtoD", "HtoH", "PtoP"};
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

// One environment variable's value in META_DATA_CAPTURE's spelling, NAME="value": the value
// without its quotes, or nullopt when the row is another variable's.
std::optional<std::string_view> EnvironmentValue(std::string_view row, std::string_view name) {
  if (!row.starts_with(name) || row.size() <= name.size() || row[name.size()] != '=') {
    return std::nullopt;
  }
  std::string_view value = row.substr(name.size() + 1);
  if (value.size() >= 2 && value.front() == '"' && value.back() == '"') {
    value = value.substr(1, value.size() - 2);
  }
  return value;
}

// The launchers' variables that name a process's rank, each with the one naming the world's
// size, in the order they are believed: torchrun's, Open MPI's, Slurm's, then any PMI's.
struct RankVariable {
  std::string_view rank;
  std::string_view size;
  std::string_view other_size;  // a second spelling of the size, or empty
};
constexpr RankVariable kRankVariables[] = {{"RANK", "WORLD_SIZE", ""},
                                           {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", ""},
                                           {"SLURM_PROCID", "SLURM_NTASKS", "SLURM_NPROCS"},
                                           {"PMI_RANK", "PMI_SIZE", ""}};

// The rank the launched process's environment names, as rank_assigner's words.
struct EnvironmentRank {
  int32_t rank = -1;
  int32_t world_size = -1;
  std::string_view variable;
};

// Where a cell's problem is counted: its table and row ("CUPTI_ACTIVITY_KIND_KERNEL row 12").
std::string RowWhere(std::string_view table, int64_t row) {
  return absl::StrCat(std::string(table), " row ", row);
}

// Counts the rows a scan stepped over (Database::PrepareScan: a cell longer than SQLite may load),
// each naming its table and rowid and what it cost: "the event", "the string".
void CountOversizedRows(const Statement& rows, std::string_view table, std::string_view lost,
                        ImportStats& stats) {
  for (int64_t rowid : rows.skipped_rows()) {
    stats.BumpAt(
        ImportCounter::kWrongFieldType,
        absl::StrCat(std::string(table), " rowid ", rowid, " (a cell over ",
                     nsys::kMaxCellBytes >> 20, " MiB: ", std::string(lost), " is skipped)"));
  }
}

// A text cell as UTF-8: ill-formed bytes become U+FFFD (in `fixed`), and `*ill_formed` says so.
std::string_view WellFormed(std::string_view text, std::string* fixed, bool* ill_formed) {
  *ill_formed = false;
  for (size_t i = 0; i < text.size();) {
    const size_t length = text::Utf8SequenceLength(text, i);
    if (length == 0) {
      *ill_formed = true;
      break;
    }
    i += length;
  }
  if (!*ill_formed) return text;
  fixed->clear();
  for (size_t i = 0; i < text.size();) {
    const size_t length = text::Utf8SequenceLength(text, i);
    if (length == 0) {
      fixed->append(text::kReplacementCharacter);
      ++i;
    } else {
      fixed->append(text.substr(i, length));
      i += length;
    }
  }
  return *fixed;
}

class ExportReader {
 public:
  explicit ExportReader(const Database& database) : db_(database) {}

  absl::StatusOr<std::vector<Rank>> Read();

 private:
  absl::Status ReadStrings();
  absl::Status ReadMetadata();
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
  // The name `id` stands for; nullopt for an id StringIds lacks.
  std::optional<std::string_view> String(int64_t id) const {
    auto it = strings_.find(id);
    if (it == strings_.end()) return std::nullopt;
    return std::string_view(it->second);
  }
  Process& ProcessFor(int64_t global_pid);
  // Whether column `column` of the row holds an integer; a NULL (missing_field) or any other
  // type (wrong_field_type) is counted on `stats`, naming the row.
  bool IntCell(const Statement& row, int column, std::string_view table, int64_t row_number,
               ImportStats& stats);
  // [start, end) on the UTC epoch; false (counted, naming the row) for an unusable pair.
  bool Span(const Statement& row, int start_column, int end_column, std::string_view table,
            int64_t row_number, ImportStats& stats, TimeNs* from, TimeNs* to);

  const Database& db_;
  absl::flat_hash_map<int64_t, std::string> strings_;
  absl::flat_hash_map<int64_t, std::unique_ptr<Process>> processes_;  // by globalPid
  std::vector<int64_t> process_order_;
  // What the file as a whole got wrong (a name, an unreadable process id), before any process
  // is known: given to the first rank, so that --strict sees it.
  ImportStats file_stats_;
  nsys::SessionRecord session_;
  nsys::ClockChoice clock_;
  EnvironmentRank environment_;
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

bool ExportReader::IntCell(const Statement& row, int column, std::string_view table,
                           int64_t row_number, ImportStats& stats) {
  if (row.IsInteger(column)) return true;
  stats.BumpAt(row.IsNull(column) ? ImportCounter::kMissingField : ImportCounter::kWrongFieldType,
               RowWhere(table, row_number));
  return false;
}

bool ExportReader::Span(const Statement& row, int start_column, int end_column,
                        std::string_view table, int64_t row_number, ImportStats& stats,
                        TimeNs* from, TimeNs* to) {
  if (!IntCell(row, start_column, table, row_number, stats) ||
      !IntCell(row, end_column, table, row_number, stats)) {
    return false;  // a range never closed has a NULL end
  }
  const std::optional<int64_t> a = CheckedAdd(row.Int(start_column), clock_.offset);
  const std::optional<int64_t> b = CheckedAdd(row.Int(end_column), clock_.offset);
  std::optional<ImportCounter> problem = ImportCounter::kTimeOutOfRange;
  if (a.has_value() && b.has_value()) problem = SpanProblem(*a, *b);
  if (problem.has_value()) {
    stats.BumpAt(*problem, RowWhere(table, row_number));
    return false;
  }
  *from = *a;
  *to = *b;
  return true;
}

absl::Status ExportReader::ReadStrings() {
  BUBBLESCOPE_ASSIGN_OR_RETURN(Statement rows,
                               db_.PrepareScan("id, value", db_.Table("StringIds"), "1"));
  std::string fixed;
  for (int64_t row = 1; rows.Step(); ++row) {
    if (!IntCell(rows, 0, "StringIds", row, file_stats_)) continue;
    bool ill_formed = false;
    const std::string_view value = WellFormed(rows.Text(1), &fixed, &ill_formed);
    if (ill_formed) file_stats_.BumpAt(ImportCounter::kWrongFieldType, RowWhere("StringIds", row));
    strings_.try_emplace(rows.Int(0), value);
  }
  CountOversizedRows(rows, "StringIds", "the string", file_stats_);
  return rows.status();
}

// The export's own words on its times (META_DATA_EXPORT since 2023, EXPORT_META_DATA before)
// and the capture's launched process (META_DATA_CAPTURE): its environment and how long it ran.
absl::Status ExportReader::ReadMetadata() {
  for (std::string_view table : {"META_DATA_EXPORT", "EXPORT_META_DATA"}) {
    if (!db_.HasTable(table)) continue;
    BUBBLESCOPE_ASSIGN_OR_RETURN(
        Statement rows,
        db_.Prepare(absl::StrCat(
            "SELECT name, value FROM ", db_.Table(table),
            " WHERE name IN ('EXPORT_PARAM_TIME_NORMALIZE', 'EXPORT_PARAM_TIME_SHIFT')")));
    while (rows.Step()) {
      if (rows.Text(0) == "EXPORT_PARAM_TIME_NORMALIZE") {
        session_.normalized = rows.Text(1) == "true";
      } else if (int64_t shift = 0; absl::SimpleAtoi(std::string(rows.Text(1)), &shift)) {
        session_.shift = shift;
      }
    }
    BUBBLESCOPE_RETURN_IF_ERROR(rows.status());
    break;
  }
  if (!db_.HasTable("META_DATA_CAPTURE")) return absl::OkStatus();
  // PROCESS_0 is the process nsys launched (or attached to) first: the rank's own under one
  // nsys per rank, the launcher's under one nsys around a launcher.
  BUBBLESCOPE_ASSIGN_OR_RETURN(
      Statement rows, db_.Prepare(absl::StrCat(
                          "SELECT name, value FROM ", db_.Table("META_DATA_CAPTURE"),
                          " WHERE name IN ('PROCESS_0:ENVIRONMENT_VARIABLE', 'RUN_DURATION_MS')")));
  // Variable -> value, for the variables kRankVariables names.
  absl::flat_hash_map<std::string, std::string> variables;
  while (rows.Step()) {
    const std::string_view value = rows.Text(1);
    if (rows.Text(0) == "RUN_DURATION_MS") {
      if (int64_t ms = 0;
          absl::SimpleAtoi(std::string(value), &ms) && ms >= 0 && ms < INT64_MAX / 1'000'000) {
        if (!session_.duration.has_value()) session_.duration = ms * 1'000'000;
      }
      continue;
    }
    for (const RankVariable& variable : kRankVariables) {
      for (std::string_view name : {variable.rank, variable.size, variable.other_size}) {
        if (name.empty()) continue;
        if (std::optional<std::string_view> found = EnvironmentValue(value, name)) {
          variables.try_emplace(std::string(name), *found);
        }
      }
    }
  }
  BUBBLESCOPE_RETURN_IF_ERROR(rows.status());
  for (const RankVariable& variable : kRankVariables) {
    auto rank = variables.find(std::string(variable.rank));
    int32_t id = -1;
    if (rank == variables.end() || !absl::SimpleAtoi(rank->second, &id) || id < 0) continue;
    int32_t size = -1;
    for (std::string_view name : {variable.size, variable.other_size}) {
      auto found = name.empty() ? variables.end() : variables.find(std::string(name));
      if (size < 0 && found != variables.end() && !absl::SimpleAtoi(found->second, &size)) {
        size = -1;
      }
    }
    if (size >= 0 && id >= size) continue;  // not a rank of that world
    environment_ = EnvironmentRank{id, size > 0 ? size : -1, variable.rank};
    break;
  }
  return absl::OkStatus();
}

// The session's start on the UTC epoch, the capture's window, and where the kernels lie in it:
// nsys::ChooseClock decides how every event time becomes a UTC epoch time.
absl::Status ExportReader::ReadClock() {
  if (db_.HasTable("TARGET_INFO_SESSION_START_TIME") &&
      db_.HasColumn("TARGET_INFO_SESSION_START_TIME", "utcEpochNs")) {
    BUBBLESCOPE_ASSIGN_OR_RETURN(
        Statement start,
        db_.Prepare(absl::StrCat("SELECT utcEpochNs, ",
                                 Column("TARGET_INFO_SESSION_START_TIME", "systemClockNs"),
                                 " FROM ", db_.Table("TARGET_INFO_SESSION_START_TIME"))));
    if (start.Step()) {
      if (start.IsInteger(0)) session_.utc_epoch_ns = start.Int(0);
      if (start.IsInteger(1)) session_.system_clock_ns = start.Int(1);
    }
    BUBBLESCOPE_RETURN_IF_ERROR(start.status());
  }
  if (db_.HasTable("ANALYSIS_DETAILS")) {
    constexpr std::string_view kTable = "ANALYSIS_DETAILS";
    BUBBLESCOPE_ASSIGN_OR_RETURN(
        Statement window,
        db_.Prepare(absl::StrCat("SELECT ", Column(kTable, "startTime"), ", ",
                                 Column(kTable, "stopTime"), ", ", Column(kTable, "duration"),
                                 " FROM ", db_.Table(kTable))));
    if (window.Step()) {
      if (window.IsInteger(0)) session_.start_time = window.Int(0);
      if (window.IsInteger(1)) session_.stop_time = window.Int(1);
      if (window.IsInteger(2)) session_.duration = window.Int(2);
    }
    BUBBLESCOPE_RETURN_IF_ERROR(window.status());
  }
  // The first and last times of the kernels and the runtime calls that launched them (integers
  // only: a damaged row is counted when read).
  std::optional<int64_t> first;
  std::optional<int64_t> last;
  for (std::string_view table : {"CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_RUNTIME"}) {
    if (!db_.HasColumn(table, "start") || !db_.HasColumn(table, "end")) continue;
    BUBBLESCOPE_ASSIGN_OR_RETURN(
        Statement bounds, db_.Prepare(absl::StrCat(
                              "SELECT MIN(start), MAX(\"end\") FROM ", db_.Table(table),
                              " WHERE typeof(start) = 'integer' AND typeof(\"end\") = 'integer'")));
    if (bounds.Step() && bounds.IsInteger(0) && bounds.IsInteger(1)) {
      first = std::min(first.value_or(INT64_MAX), bounds.Int(0));
      last = std::max(last.value_or(INT64_MIN), bounds.Int(1));
    }
    BUBBLESCOPE_RETURN_IF_ERROR(bounds.status());
  }
  clock_ = nsys::ChooseClock(session_, first, last);
  return absl::OkStatus();
}

absl::Status ExportReader::ReadSystem() {
  if (db_.HasTable("TARGET_INFO_SYSTEM_ENV") && db_.HasColumn("TARGET_INFO_SYSTEM_ENV", "name")) {
    BUBBLESCOPE_ASSIGN_OR_RETURN(
        Statement env,
        db_.Prepare(absl::StrCat("SELECT value FROM ", db_.Table("TARGET_INFO_SYSTEM_ENV"),
                                 " WHERE name = 'Hostname'")));
    std::string fixed;
    bool ill_formed = false;
    while (env.Step()) host_ = std::string(WellFormed(env.Text(0), &fixed, &ill_formed));
    BUBBLESCOPE_RETURN_IF_ERROR(env.status());
  }
  constexpr std::string_view kGpus = "TARGET_INFO_GPU";
  if (!db_.HasTable(kGpus)) return absl::OkStatus();
  // Exports before 2022 number the GPU in deviceId, later ones in id.
  const std::string id_column =
      db_.HasColumn(kGpus, "id") ? Column(kGpus, "id") : Column(kGpus, "deviceId");
  BUBBLESCOPE_ASSIGN_OR_RETURN(
      Statement gpus,
      db_.Prepare(absl::StrCat("SELECT ", id_column, ", ", Column(kGpus, "name"), ", ",
                               Column(kGpus, "totalMemory"), ", ", Column(kGpus, "computeMajor"),
                               ", ", Column(kGpus, "computeMinor"), ", ", Column(kGpus, "smCount"),
                               " FROM ", db_.Table(kGpus))));
  std::string fixed;
  bool ill_formed = false;
  while (gpus.Step()) {
    if (!gpus.IsInteger(0)) continue;  // a GPU without a number describes none of the streams
    gpus_.push_back(DeviceInfo{static_cast<int32_t>(gpus.Int(0)),
                               std::string(WellFormed(gpus.Text(1), &fixed, &ill_formed)),
                               gpus.Int(2), static_cast<int32_t>(gpus.Int(3)),
                               static_cast<int32_t>(gpus.Int(4)),
                               static_cast<int32_t>(gpus.Int(5))});
  }
  return gpus.status();
}

absl::Status ExportReader::ReadDeviceOps(std::string_view table, IntervalKind kind) {
  if (!db_.HasTable(table)) return absl::OkStatus();
  // Kernels are named by their demangled name, as Kineto names them; copies by their kind.
  std::string name_column = "NULL";
  if (kind == IntervalKind::kComputeKernel) {
    name_column = db_.HasColumn(table, "demangledName") ? Column(table, "demangledName")
                                                        : Column(table, "shortName");
  } else if (kind == IntervalKind::kMemcpy) {
    name_column = Column(table, "copyKind");
  }
  // Without a globalPid column (no export known lacks one) every row is the one process's.
  const bool has_pid = db_.HasColumn(table, "globalPid");
  absl::StatusOr<Statement> rows =
      db_.PrepareScan(absl::StrCat(Column(table, "start"), ", ", Column(table, "end"), ", ",
                                   Column(table, "deviceId"), ", ", Column(table, "streamId"), ", ",
                                   Column(table, "correlationId"), ", ", Column(table, "globalPid"),
                                   ", ", name_column),
                      db_.Table(table), "1");
  BUBBLESCOPE_RETURN_IF_ERROR(rows.status());
  for (int64_t row = 1; rows->Step(); ++row) {
    if (has_pid && !IntCell(*rows, 5, table, row, file_stats_)) continue;
    Process& process = ProcessFor(ProcessKey(rows->Int(5)));
    process.device_work = true;
    ImportStats& stats = process.rank.stats;
    Interval interval;
    if (!Span(*rows, 0, 1, table, row, stats, &interval.start, &interval.end)) continue;
    if (!IntCell(*rows, 2, table, row, stats) || !IntCell(*rows, 3, table, row, stats)) continue;
    const int64_t device = rows->Int(2);
    if (device < 0 || device > INT32_MAX) {
      stats.BumpAt(ImportCounter::kBadId, RowWhere(table, row));
      continue;
    }
    interval.correlation = rows->Int(4);
    interval.kind = kind;
    Rank& rank = process.rank;
    if (kind == IntervalKind::kComputeKernel) {
      // A kernel whose name id StringIds lacks is still GPU time: kept, unnamed, and counted.
      std::optional<std::string_view> name;
      if (IntCell(*rows, 6, table, row, stats)) {
        name = String(rows->Int(6));
        if (!name.has_value()) stats.BumpAt(ImportCounter::kBadId, RowWhere(table, row));
      }
      interval.name = rank.names.Intern(name.value_or(""));
      if (std::optional<CommKind> comm = op_names::CommKernelKind(name.value_or(""));
          comm.has_value()) {
        interval.kind = IntervalKind::kCommKernel;
        interval.comm = static_cast<uint32_t>(rank.comms.size());
        rank.comms.push_back(CommInfo{.kind = *comm});
      }
    } else if (kind == IntervalKind::kMemcpy) {
      interval.name = rank.names.Intern(MemcpyName(rows->Int(6)));
    } else {
      interval.name = rank.names.Intern("Memset (Device)");
    }
    process
        .TimelineFor(TimelineKind::kGpuStream, static_cast<int32_t>(device), process.rank.pid,
                     rows->Int(3))
        .intervals.push_back(interval);
  }
  CountOversizedRows(*rows, table, "the event", file_stats_);
  return rows->status();
}

absl::Status ExportReader::ReadRuntime() {
  constexpr std::string_view kTable = "CUPTI_ACTIVITY_KIND_RUNTIME";
  if (!db_.HasTable(kTable)) return absl::OkStatus();
  BUBBLESCOPE_ASSIGN_OR_RETURN(
      Statement rows,
      db_.PrepareScan(absl::StrCat(Column(kTable, "start"), ", ", Column(kTable, "end"), ", ",
                                   Column(kTable, "globalTid"), ", ",
                                   Column(kTable, "correlationId"), ", ", Column(kTable, "nameId")),
                      db_.Table(kTable), "1"));
  for (int64_t row = 1; rows.Step(); ++row) {
    if (!IntCell(rows, 2, kTable, row, file_stats_)) continue;
    const int64_t global_tid = rows.Int(2);
    Process& process = ProcessFor(ProcessKey(global_tid));
    process.runtime_calls = true;
    ImportStats& stats = process.rank.stats;
    Interval interval;
    if (!Span(rows, 0, 1, kTable, row, stats, &interval.start, &interval.end)) continue;
    std::optional<std::string_view> name;
    if (IntCell(rows, 4, kTable, row, stats)) {
      name = String(rows.Int(4));
      if (!name.has_value()) stats.BumpAt(ImportCounter::kBadId, RowWhere(kTable, row));
    }
    interval.kind = IntervalKind::kRuntime;
    interval.correlation = rows.Int(3);
    interval.name = process.rank.names.Intern(BareApiName(name.value_or("")));
    process.TimelineFor(TimelineKind::kCpuThread, -1, process.rank.pid, TidOf(global_tid))
        .intervals.push_back(interval);
  }
  CountOversizedRows(rows, kTable, "the event", file_stats_);
  return rows.status();
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
  BUBBLESCOPE_RETURN_IF_ERROR(payloads_.Load(db_));
  const std::string domain_column = Column(kTable, "domainId");
  const std::string text_column = Column(kTable, "text");
  absl::flat_hash_map<int64_t, std::string> domains;
  {
    BUBBLESCOPE_ASSIGN_OR_RETURN(
        Statement rows,
        db_.PrepareScan(absl::StrCat(domain_column, ", ", text_column), db_.Table(kTable),
                        absl::StrCat("eventType = ", kNvtxDomainCreate)));
    while (rows.Step()) domains.try_emplace(rows.Int(0), rows.Text(1));
    BUBBLESCOPE_RETURN_IF_ERROR(rows.status());
    CountOversizedRows(rows, kTable, "the domain's name", file_stats_);
  }
  // A payload longer than a cell may hold is not loaded (SQLite would refuse the whole query):
  // its size is asked first, which SQLite answers for a blob without reading it.
  const std::string payload = Column(kTable, "binaryData");
  const std::string oversized = absl::StrCat("(typeof(", payload, ") = 'blob' AND length(", payload,
                                             ") > ", nsys::kMaxCellBytes, ")");
  // A text (or any other cell but the payload) over the limit skips its row: the scan steps
  // over it.
  absl::StatusOr<Statement> rows =
      db_.PrepareScan(absl::StrCat(Column(kTable, "start"), ", ", Column(kTable, "end"), ", ",
                                   Column(kTable, "globalTid"), ", ", text_column, ", ",
                                   Column(kTable, "textId"), ", ", domain_column, ", CASE WHEN ",
                                   oversized, " THEN NULL ELSE ", payload, " END, ", oversized),
                      db_.Table(kTable),
                      absl::StrCat("eventType IN (", kNvtxPushPopRange, ", ", kNvtxStartEndRange,
                                   ", ", kNvtxtPushPopRange, ", ", kNvtxtStartEndRange, ")"));
  BUBBLESCOPE_RETURN_IF_ERROR(rows.status());
  std::string fixed;
  for (int64_t row = 1; rows->Step(); ++row) {
    if (!IntCell(*rows, 2, kTable, row, file_stats_)) continue;
    const int64_t global_tid = rows->Int(2);
    Process& process = ProcessFor(ProcessKey(global_tid));
    ImportStats& stats = process.rank.stats;
    TimeNs start = 0;
    TimeNs end = 0;
    if (!Span(*rows, 0, 1, kTable, row, stats, &start, &end)) continue;
    if (rows->Int(7) != 0) {
      stats.BumpAt(ImportCounter::kWrongFieldType,
                   absl::StrCat(RowWhere(kTable, row), " (a binaryData payload over ",
                                nsys::kMaxCellBytes >> 20, " MiB: the range is skipped)"));
      continue;
    }
    std::optional<std::string_view> text;
    if (!rows->IsNull(3)) {
      bool ill_formed = false;
      text = WellFormed(rows->Text(3), &fixed, &ill_formed);
      if (ill_formed) stats.BumpAt(ImportCounter::kWrongFieldType, RowWhere(kTable, row));
    } else if (IntCell(*rows, 4, kTable, row, stats)) {
      text = String(rows->Int(4));
      if (!text.has_value()) stats.BumpAt(ImportCounter::kBadId, RowWhere(kTable, row));
    }
    if (!text.has_value()) continue;  // a range without a name says nothing
    const std::string_view name = *text;
    auto domain = domains.find(rows->Int(5));
    if (domain != domains.end() && domain->second == "NCCL") {
      std::optional<nsys::NcclPayload> decoded;
      if (!rows->IsNull(6)) decoded = payloads_.Decode(rows->Blob(6));
      process.comms.Add(TidOf(global_tid), start, end, name, decoded);
      continue;
    }
    AddNvtxRange(process, global_tid, start, end, name);
  }
  CountOversizedRows(*rows, kTable, "the range", file_stats_);
  return rows->status();
}

absl::StatusOr<std::vector<Rank>> ExportReader::Read() {
  // Every export holds StringIds (the names of everything); an SQLite file without it is
  // someone else's. The kernels are what bubblescope measures: without their table there is
  // nothing to read. Every other table is optional: an export lacking one loses what it held.
  if (!db_.HasTable("StringIds")) {
    return absl::InvalidArgumentError(absl::StrCat(
        db_.path(), ": an SQLite database, but no Nsight Systems export (no StringIds table)"));
  }
  if (!db_.HasTable("CUPTI_ACTIVITY_KIND_KERNEL")) {
    return absl::InvalidArgumentError(
        absl::StrCat(db_.path(),
                     ": an Nsight Systems export without CUDA kernels (no "
                     "CUPTI_ACTIVITY_KIND_KERNEL table; profile with nsys profile -t cuda,nvtx)"));
  }
  // Changes in a write-ahead log beside the file are read through a private copy (nsys_database.h);
  // where they could not be, that is said, and counted as a cut file.
  if (!db_.unread_wal().empty()) {
    file_stats_.BumpAt(ImportCounter::kTruncated, db_.path() + "-wal");
    file_stats_.set_truncation_detail(db_.unread_wal());
  }
  for (absl::Status status : {ReadStrings(), ReadMetadata(), ReadClock(), ReadSystem()}) {
    BUBBLESCOPE_RETURN_IF_ERROR(status);
  }
  for (absl::Status status :
       {ReadDeviceOps("CUPTI_ACTIVITY_KIND_KERNEL", IntervalKind::kComputeKernel),
        ReadDeviceOps("CUPTI_ACTIVITY_KIND_MEMCPY", IntervalKind::kMemcpy),
        ReadDeviceOps("CUPTI_ACTIVITY_KIND_MEMSET", IntervalKind::kMemset), ReadRuntime(),
        ReadNvtx()}) {
    BUBBLESCOPE_RETURN_IF_ERROR(status);
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
    return absl::InvalidArgumentError(
        absl::StrCat(db_.path(),
                     ": an Nsight Systems export without CUDA kernels, copies or API calls "
                     "(profile with nsys profile -t cuda,nvtx)"));
  }
  // The launched process's environment names the rank only where it is the file's one rank:
  // around a launcher of several ranks it is the launcher's.
  const bool environment_names = kept.size() == 1 && environment_.rank >= 0;
  std::vector<nsys::ProcessComms*> comms;
  for (Process* process : kept) comms.push_back(&process->comms);
  nsys::ResolveRanks(comms, environment_names ? environment_.world_size : -1);
  std::vector<Rank> ranks;
  for (Process* process : kept) {
    Rank& rank = process->rank;
    rank.source_path = db_.path();
    rank.host = host_;
    rank.backend = process->comms.any() ? "nccl" : "";
    rank.time_base = std::string(nsys::TimeBaseName(clock_.base));
    rank.time_evidence = clock_.evidence;
    process->comms.Fill(&rank, [&](int64_t tid) -> Timeline& {
      return process->TimelineFor(TimelineKind::kCpuThread, -1, rank.pid, tid);
    });
    if (environment_names) {
      rank.rank = environment_.rank;
      if (environment_.world_size > 0) rank.world_size = environment_.world_size;
      rank.rank_source = absl::StrCat("environment:", std::string(environment_.variable));
    } else {
      // The loader fills in what it decides (the file's name, --rank) for a rank left at -1.
      rank.rank_source = rank.rank >= 0 ? "nccl_world" : "none";
    }
    for (const DeviceInfo& gpu : gpus_) {
      const bool used =
          std::any_of(rank.timelines.begin(), rank.timelines.end(), [&](const Timeline& t) {
            return t.kind == TimelineKind::kGpuStream && t.device == gpu.id;
          });
      if (used) rank.devices.push_back(gpu);
    }
    FinishRank(FinishOptions{}, &rank);  // times are on the UTC epoch already
    nsys::DescribeLaunchedKernels(&rank);
    ranks.push_back(std::move(rank));
  }
  ranks.front().stats.Merge(file_stats_);
  if (nsys::NumberByDevice(&ranks)) {
    for (Rank& rank : ranks) rank.rank_source = "gpu_index";
  }
  return ranks;
}

}  // namespace

bool IsSqliteHead(std::string_view head) { return head.starts_with(kSqliteMagic); }

absl::StatusOr<FileRanks> NsysTraceReader::Read(const std::string& path,
                                                const ReaderOptions& options) {
  FileRanks file;
  BUBBLESCOPE_ASSIGN_OR_RETURN(file.ranks,
                               ReadNsysSqlite(path, NsysReadOptions{options.max_bytes}));
  file.rank_carriers =
      "RANK, OMPI_COMM_WORLD_RANK, SLURM_PROCID or PMI_RANK in the launched process's "
      "environment (META_DATA_CAPTURE), no NCCL communicator of the world's size (exported with "
      "--include-blobs=true)";
  // Several processes in one export name their ranks themselves (NCCL's ids, or their GPUs).
  file.named_by_file = file.ranks.size() > 1;
  return file;
}

absl::StatusOr<std::vector<Rank>> ReadNsysSqlite(const std::string& path,
                                                 const NsysReadOptions& options) {
  BUBBLESCOPE_ASSIGN_OR_RETURN(Database database, Database::Open(path, options.max_bytes));
  return ExportReader(database).Read();
}

}  // namespace bubblescope
