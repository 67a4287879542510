#include "perfetto/perfetto_rank_events.h"

#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "loader/file_source.h"
#include "loader/trace_readers.h"
#include "readers/json_number.h"
#include "readers/kineto_reader.h"
#include "readers/raw_events.h"
#include "simdjson.h"
#include "text/json_string.h"
#include "text/json_tokens.h"
#include "text/micros.h"
#include "writers/kineto_writer.h"

namespace bubblescope::perfetto {
namespace {

using kineto::NumberStatus;
using kineto::RawEvent;
using kineto::RawField;

// The last member named `key`, as the reader takes the last of repeated members.
const RawField* Member(const RawEvent& event, std::string_view key) {
  const RawField* found = nullptr;
  for (const RawField& field : event.fields) {
    if (field.key == key) found = &field;
  }
  return found;
}

bool StringContent(const RawField* field, std::string_view* content) {
  return field != nullptr && kineto::StringTokenContent(field->value, content);
}

// A pid or tid the reader accepts: an integer or a string.
bool IsId(std::string_view token) {
  std::string_view content;
  int64_t ignored = 0;
  return kineto::StringTokenContent(token, &content) ||
         kineto::ParseInteger(token, &ignored) == NumberStatus::kOk;
}

// A time in µs as the reader reads it, in ns.
bool ReadMicros(const RawField* field, int64_t* ns) {
  return field != nullptr && kineto::ParseScaledDecimal(field->value, 3, ns) == NumberStatus::kOk;
}

// The "name" arg of a process_name metadata event (args given as JSON text); empty if none.
std::string NameArg(const RawField* args) {
  if (args == nullptr) return "";
  const simdjson::padded_string text(args->value);
  simdjson::ondemand::parser parser;
  simdjson::ondemand::document document;
  simdjson::ondemand::object object;
  if (parser.iterate(text).get(document) || document.get_object().get(object)) return "";
  for (auto field : object) {
    simdjson::ondemand::raw_json_string key;
    simdjson::ondemand::value value;
    if (field.key().get(key) || field.value().get(value)) return "";
    std::string_view content;
    if (kineto::KeyText(key.raw()) == "name" &&
        kineto::StringTokenContent(value.raw_json_token(), &content)) {
      std::string scratch;
      return std::string(kineto::UnescapeJsonString(content, &scratch));
    }
  }
  return "";
}

// A JSON id token as a thread or process is called by default: a string's content, a number.
std::string IdText(std::string_view token) {
  std::string_view content;
  if (kineto::StringTokenContent(token, &content)) {
    std::string scratch;
    return std::string(kineto::UnescapeJsonString(content, &scratch));
  }
  return std::string(token);
}

class RankRewriter {
 public:
  RankRewriter(const Rank& rank, const RankClock& clock, int64_t base_ns, int64_t* next_pid,
               EventList* events, RankEventCounts* counts)
      : rank_(rank),
        clock_(clock),
        base_ns_(base_ns),
        next_pid_(next_pid),
        events_(events),
        counts_(counts) {}

  void Event(const RawEvent& event) {
    std::string_view phase;
    if (!StringContent(Member(event, "ph"), &phase)) return LeaveOut();
    const bool metadata = phase == "M";
    const RawField* pid = Member(event, "pid");
    const RawField* tid = Member(event, "tid");
    if ((pid != nullptr && !IsId(pid->value)) || (tid != nullptr && !IsId(tid->value)) ||
        (tid == nullptr && !metadata)) {
      return LeaveOut();
    }
    const RawField* ts = Member(event, "ts");
    std::string moved_ts;
    int64_t ns = 0;
    if (ReadMicros(ts, &ns) && Move(&ns)) {
      text::AppendMicrosCompact(ns, &moved_ts);
    } else if (!metadata) {
      return LeaveOut();  // metadata keeps whatever ts it had: no viewer reads it
    }
    int64_t dur = 0;
    if (phase == "X" && (!ReadMicros(Member(event, "dur"), &dur) || dur < 0)) return LeaveOut();

    Process& process = ProcessOf(pid == nullptr ? std::string_view() : pid->value);
    std::string_view name;
    if (metadata && StringContent(Member(event, "name"), &name)) {
      // The merge names and orders every process itself ("rank R: ..."), keeping the file's
      // own name in it.
      if (name == "process_name") {
        process.name = NameArg(Member(event, "args"));
        return;
      }
      if (name == "process_sort_index") return;
      if (name == "thread_name" && tid != nullptr) {
        named_threads_.insert({process.pid, std::string(tid->value)});
      }
    }
    if (!metadata) NoteThread(process.pid, tid->value);

    // Written straight into the list's buffer: this runs once per event of the whole job.
    std::string& text = *events_->Begin();
    text += "{\"pid\":";
    text::AppendInt(process.pid, &text);
    if (tid == nullptr) text += ",\"tid\":0";
    for (const RawField& field : event.fields) {
      if (field.key == "pid") continue;
      text += ",\"";
      text.append(field.key.data(), field.key.size());
      text += "\":";
      if (&field == ts && !moved_ts.empty()) {
        text += moved_ts;
      } else {
        text.append(field.value.data(), field.value.size());
      }
    }
    text += "}";
    events_->End();
    ++counts_->written;
  }

  // Names every process and every thread its events use that the file left unnamed, and
  // writes the processes' map.
  void Finish(RankLayout* layout) {
    // Built apart and moved in: GCC 12 at -O3 misreads assigning a literal to the member
    // (a false -Wrestrict).
    std::string map(1, '[');
    for (size_t i = 0; i < processes_.size(); ++i) {
      const Process& process = processes_[i];
      if (i > 0) map += ",";
      map += "{\"pid\":";
      text::AppendInt(process.pid, &map);
      map += ",\"original_pid\":";
      map += process.original.empty() ? "null" : process.original;
      map += "}";
      std::string label = process.name;
      if (label.empty()) {
        const std::string id = IdText(process.original);
        label = process.original.empty() ? "events without a pid"
                                         : "pid " + (id.empty() ? process.original : id);
      }
      AddProcessName(process.pid, absl::StrCat("rank ", rank_.rank, ": ", label), events_);
    }
    map.push_back(']');
    layout->processes = std::move(map);
    for (const auto& thread : used_threads_) {
      if (named_threads_.contains(thread)) continue;
      AddThreadName(thread.first, thread.second, "thread " + IdText(thread.second), events_);
    }
  }

 private:
  struct Process {
    int64_t pid = 0;
    std::string original;  // the pid's JSON text in the rank's file; empty: events without one
    std::string name;      // its process_name there
  };

  void LeaveOut() { ++counts_->left_out; }

  // ns on the rank's clock (before baseTimeNanoseconds) to the reference clock; false when
  // either lies outside the model's range, where the reader drops the event too.
  bool Move(int64_t* ns) const {
    int64_t on_rank_clock = 0;
    if (!InTimeRange(*ns) || __builtin_add_overflow(*ns, base_ns_, &on_rank_clock) ||
        !InTimeRange(on_rank_clock)) {
      return false;
    }
    const int64_t moved = ClockOffsets::Move(on_rank_clock, clock_);
    if (!InTimeRange(moved)) return false;
    *ns = moved;
    return true;
  }

  Process& ProcessOf(std::string_view original) {
    const auto [it, inserted] = process_index_.try_emplace(std::string(original), 0);
    if (inserted) {
      it->second = processes_.size();
      processes_.push_back(
          Process{.pid = (*next_pid_)++, .original = std::string(original), .name = ""});
    }
    return processes_[it->second];
  }

  void NoteThread(int64_t pid, std::string_view tid) {
    std::pair<int64_t, std::string> key{pid, std::string(tid)};
    if (used_set_.insert(key).second) used_threads_.push_back(std::move(key));
  }

  const Rank& rank_;
  RankClock clock_;
  int64_t base_ns_;
  int64_t* next_pid_;
  EventList* events_;
  RankEventCounts* counts_;
  absl::flat_hash_map<std::string, size_t> process_index_;
  std::vector<Process> processes_;                             // in order of first use
  std::vector<std::pair<int64_t, std::string>> used_threads_;  // in order of first use
  absl::flat_hash_set<std::pair<int64_t, std::string>> used_set_;
  absl::flat_hash_set<std::pair<int64_t, std::string>> named_threads_;
};

}  // namespace

namespace {
// How much of the document is held before it is passed on: large enough that a write or a
// compression call is cheap per byte, small beside any trace.
constexpr size_t kFlushBytes = size_t{1} << 20;
}  // namespace

std::string* EventList::Begin() {
  if (count_ > 0) buffer_ += ",\n";
  return &buffer_;
}

void EventList::End() {
  ++count_;
  if (buffer_.size() >= kFlushBytes) status_.Update(Flush());
}

absl::Status EventList::Flush() {
  if (status_.ok() && !buffer_.empty()) status_ = sink_->Append(buffer_);
  buffer_.clear();
  return status_;
}

void AddProcessName(int64_t pid, std::string_view name, EventList* events) {
  AddProcessName(pid, name, events, pid);
}

void AddProcessName(int64_t pid, std::string_view name, EventList* events, int64_t sort_index) {
  std::string text = "{\"pid\":";
  text::AppendInt(pid, &text);
  text += ",\"tid\":0,\"ph\":\"M\",\"name\":\"process_name\",\"args\":{\"name\":";
  text::AppendJsonString(name, &text);
  text += "}}";
  events->Add(text);
  text = "{\"pid\":";
  text::AppendInt(pid, &text);
  text += ",\"tid\":0,\"ph\":\"M\",\"name\":\"process_sort_index\",\"args\":{\"sort_index\":";
  text::AppendInt(sort_index, &text);
  text += "}}";
  events->Add(text);
}

void AddThreadName(int64_t pid, std::string_view tid_json, std::string_view name,
                   EventList* events) {
  std::string text = "{\"pid\":";
  text::AppendInt(pid, &text);
  absl::StrAppend(&text, ",\"tid\":", std::string(tid_json),
                  ",\"ph\":\"M\",\"name\":\"thread_name\",\"args\":{\"name\":");
  text::AppendJsonString(name, &text);
  text += "}}";
  events->Add(text);
}

namespace {

// Re-emits the events of `text`, a Kineto document holding `rank`'s events (its file, or its model
// as the Kineto writer writes it).
absl::Status AppendDocumentEvents(const Rank& rank, const std::string& display_path,
                                  simdjson::padded_string_view text, const RankClock& clock,
                                  int64_t* next_pid, EventList* events, RankLayout* layout,
                                  RankEventCounts* counts) {
  // The members pass comes first, so the base time is known before any event is moved.
  kineto::RawMembers members;
  int64_t base_ns = 0;
  std::optional<RankRewriter> rewriter;
  auto visit = [&](const RawEvent& event) {
    if (!rewriter) {
      // The reader applies a base time only when it is an integer.
      if (kineto::ParseInteger(members.base_time, &base_ns) != NumberStatus::kOk) base_ns = 0;
      rewriter.emplace(rank, clock, base_ns, next_pid, events, counts);
    }
    if (!members.merged) rewriter->Event(event);
  };
  if (absl::Status streamed = kineto::StreamRawEvents(display_path, text, &members, visit);
      !streamed.ok()) {
    return streamed;
  }
  if (members.merged) {
    return absl::InvalidArgumentError(absl::StrCat(
        display_path, ": a merged trace already; write the overlay from the per-rank traces"));
  }
  if (!rewriter) rewriter.emplace(rank, clock, base_ns, next_pid, events, counts);
  rewriter->Finish(layout);
  layout->distributed_info = std::move(members.distributed_info);
  layout->device_properties = std::move(members.device_properties);
  return absl::OkStatus();
}

// Whether the rank's events are its Kineto file's. A rank that travelled as a digest (analyze
// --mpi) keeps its file's path but not its reader's name: its file tells, as it told the loader.
bool ReadFromKinetoFile(const Rank& rank) {
  if (!rank.source_format.empty() || rank.source_path.empty()) {
    return rank.source_format == kKinetoFormatName;
  }
  absl::StatusOr<FileHead> head = ReadFileHead(rank.source_path, kSniffBytes);
  if (!head.ok() || !head->regular) return true;  // reading the file again says what is wrong
  const std::vector<std::unique_ptr<TraceReader>> readers = MakeTraceReaders();
  const TraceReader* reader = ClaimingReader(readers, head->bytes, rank.source_path);
  return reader == nullptr || reader->format_name() == kKinetoFormatName;
}

}  // namespace

absl::Status AppendRankEvents(const Rank& rank, const RankClock& clock, int64_t* next_pid,
                              EventList* events, RankLayout* layout, RankEventCounts* counts) {
  if (ReadFromKinetoFile(rank)) {
    // Under the same reading budget as the loader (the file was read within it once already).
    absl::StatusOr<FileContents> contents = ReadFileSource(rank.source_path, ReadingBudgetBytes(1));
    BUBBLESCOPE_RETURN_IF_ERROR(contents.status());
    return AppendDocumentEvents(rank, rank.source_path, contents->text, clock, next_pid, events,
                                layout, counts);
  }
  // Any other format (a digest, an Nsight export) or a rank made in memory: its model's events,
  // as the Kineto writer writes them (absolute times: the rank's clock as the model holds it).
  KinetoWriteOptions options;
  options.layout = KinetoLayout::kAbsoluteMicros;
  const simdjson::padded_string text(KinetoJson(rank, options));
  return AppendDocumentEvents(rank, rank.source_path, text, clock, next_pid, events, layout,
                              counts);
}

}  // namespace bubblescope::perfetto
