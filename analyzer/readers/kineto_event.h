// One Kineto trace event, read field by field in a single pass over its JSON object. Only the
// fields the model uses are decoded; strings stay as views into the document (still escaped)
// until the event is known to be kept, and args are decoded only for events that need them.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "bubblescope/import_stats.h"
#include "readers/event_classifier.h"
#include "simdjson.h"

namespace bubblescope::kineto {

// A pid, tid or flow id: a number, or a string turned into a stable negative id.
struct IdField {
  int64_t value = 0;
  std::string_view text;  // still-escaped content when the JSON value was a string
  bool present = false;
  bool is_string = false;
};

// The same string always maps to the same negative id (FNV-1a of the text, folded below zero), so
// string pids such as "CPU functions" name the same timeline in every file.
int64_t SyntheticId(std::string_view text);

// Which part of an event's args a damaged arg belongs to, so only events that use it are dropped.
enum ArgGroup : uint8_t {
  kArgGroupGpu = 1,     // device, stream, correlation
  kArgGroupComm = 2,    // NCCL metadata
  kArgGroupMemory = 4,  // [memory] sample fields
};

struct EventArgs {
  int64_t device = -1;
  int64_t stream = 0;
  int64_t correlation = 0;
  bool has_device = false;
  bool has_stream = false;
  bool has_pg_ranks = false;  // the ranks are in EventFieldReader::pg_ranks()
  bool has_device_type = false;
  bool has_device_id = false;
  bool has_total_allocated = false;
  bool has_total_reserved = false;
  bool has_bytes = false;      // "Bytes": a 2021 Kineto [memory] event's allocation (+) or free (-)
  uint8_t damaged_groups = 0;  // ArgGroup bits with a damaged arg
  ImportCounter damage = ImportCounter::kWrongFieldType;  // first damage in any group
  std::string_view collective;                            // the following strings are still escaped
  std::string_view dtype;
  std::string_view pg_name;
  std::string_view pg_desc;
  int64_t in_nelems = -1;
  int64_t out_nelems = -1;
  int64_t group_size = -1;
  int64_t seq = -1;  // "Seq"
  int64_t src_rank = -1;
  int64_t dst_rank = -1;
  int64_t device_type = -1;
  int64_t device_id = -1;
  int64_t total_allocated = 0;
  int64_t total_reserved = 0;
  int64_t bytes = 0;
};

struct EventFields {
  std::string_view ph;  // still-escaped contents
  std::string_view cat;
  std::string_view name;
  EventCategory category = EventCategory::kAbsent;
  bool has_ph = false;
  bool has_name = false;
  bool has_ts = false;
  bool has_dur = false;
  bool damaged = false;  // a top-level field the event needs is unusable
  ImportCounter damage = ImportCounter::kWrongFieldType;
  IdField pid;
  IdField tid;
  IdField id;
  int64_t ts = 0;   // ns, before any baseTimeNanoseconds shift
  int64_t dur = 0;  // ns
  EventArgs args;
};

// The collector's metadata events ("ph":"M"). "bubblescope_process": its args hold the rank,
// world size, host, pid and devices that a Kineto file keeps in top-level members.
// "bubblescope_dropped": its args hold the running totals of what the collector lost.
// "bubblescope_cupti_unavailable": another profiler held CUPTI; its args say which and what was
// not recorded.
inline constexpr std::string_view kProcessMetadataEventName = "bubblescope_process";
inline constexpr std::string_view kDroppedCountsEventName = "bubblescope_dropped";
inline constexpr std::string_view kCuptiUnavailableEventName = "bubblescope_cupti_unavailable";

// Receives the args of a collector metadata event while it is being read; `fields` holds what
// the event gave before its args (its name, and its pid when that came first).
class CollectorMetadataSink {
 public:
  virtual ~CollectorMetadataSink() = default;
  virtual simdjson::error_code ReadCollectorArgs(const EventFields& fields,
                                                 simdjson::ondemand::value& args) = 0;
};

class EventFieldReader {
 public:
  // Where the args of a collector metadata event go; they are handed over only when "ph" and
  // "name" come before "args" in the event (the collector always writes them in that order).
  void set_collector_metadata_sink(CollectorMetadataSink* sink) { metadata_sink_ = sink; }

  // Reads the fields of `event` into `*fields`, visiting each once and stopping early once the
  // event is known to be of no interest. Returns a simdjson error only for broken JSON syntax,
  // which ends the walk; a field of the wrong type only marks the event damaged.
  simdjson::error_code Read(simdjson::ondemand::object& event, EventFields* fields);

  // "Process Group Ranks" of the last event read, when args.has_pg_ranks.
  const std::vector<int32_t>& pg_ranks() const { return pg_ranks_; }

 private:
  simdjson::error_code ReadArgs(simdjson::ondemand::object& args, EventFields* fields);
  simdjson::error_code ReadRanksArray(simdjson::ondemand::array& ranks, EventArgs* args);

  std::vector<int32_t> pg_ranks_;
  CollectorMetadataSink* metadata_sink_ = nullptr;
};

// Parses a rank list written as a string, "[0, 1, 2, 3]"; false if it is not one.
bool ParseRankListText(std::string_view text, std::vector<int32_t>* ranks);

}  // namespace bubblescope::kineto
