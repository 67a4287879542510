#include "readers/kineto_event.h"

#include <limits>

#include "bubblescope/op_names.h"
#include "readers/json_number.h"
#include "text/json_tokens.h"

namespace bubblescope::kineto {
namespace {

namespace ondemand = simdjson::ondemand;

constexpr uint8_t kAllArgGroups = kArgGroupGpu | kArgGroupComm | kArgGroupMemory;

void MarkDamaged(EventFields* fields, ImportCounter counter) {
  if (fields->damaged) return;
  fields->damaged = true;
  fields->damage = counter;
}

void MarkArgDamaged(EventArgs* args, uint8_t groups, ImportCounter counter) {
  if (args->damaged_groups == 0) args->damage = counter;
  args->damaged_groups = static_cast<uint8_t>(args->damaged_groups | groups);
}

bool StartsLikeNonNumber(char c) {
  return c == '"' || c == '{' || c == '[' || c == 't' || c == 'f' || c == 'n';
}

// Reads a number token scaled by 10^scale; on failure says why in *problem.
bool ReadNumber(std::string_view token, int scale, int64_t* out, ImportCounter* problem) {
  if (token.empty() || StartsLikeNonNumber(token[0])) {
    *problem = ImportCounter::kWrongFieldType;
    return false;
  }
  if (ParseScaledDecimal(token, scale, out) != NumberStatus::kOk) {
    *problem = ImportCounter::kBadNumber;
    return false;
  }
  return true;
}

bool ReadId(std::string_view token, IdField* id, ImportCounter* problem) {
  if (!token.empty() && token[0] == '"') {
    if (!StringTokenContent(token, &id->text)) {
      *problem = ImportCounter::kWrongFieldType;
      return false;
    }
    id->is_string = true;
    id->value = SyntheticId(id->text);
  } else if (!ReadNumber(token, 0, &id->value, problem)) {
    return false;
  }
  id->present = true;
  return true;
}

bool IsPhase(const EventFields& fields, char phase) {
  return fields.has_ph && fields.ph.size() == 1 && fields.ph[0] == phase;
}

// Whether this event's args can matter, judged from the fields seen so far (args usually come
// last; when they come first, they are read in case).
bool ArgsNeeded(const EventFields& fields) {
  if (!fields.has_ph) return true;
  if (IsPhase(fields, 'X')) {
    switch (fields.category) {
      case EventCategory::kKernel:
      case EventCategory::kMemcpy:
      case EventCategory::kMemset:
      case EventCategory::kRuntime:
      case EventCategory::kGpuUserAnnotation:
      case EventCategory::kAbsent:
        return true;
      case EventCategory::kCpuOp:
        return !fields.has_name || op_names::CpuCommOpKind(fields.name).has_value();
      default:
        return false;
    }
  }
  if (IsPhase(fields, 'i') || IsPhase(fields, 'I')) {
    return fields.category == EventCategory::kMemory || fields.category == EventCategory::kAbsent ||
           !fields.has_name || fields.name == "[memory]";
  }
  return false;
}

bool IsCollectorMetadata(const EventFields& fields) {
  return IsPhase(fields, 'M') && fields.has_name &&
         (fields.name == kProcessMetadataEventName || fields.name == kDroppedCountsEventName ||
          fields.name == kCuptiUnavailableEventName);
}

// True once nothing later in the event can change what is done with it.
bool NothingMoreNeeded(const EventFields& fields) {
  if (IsPhase(fields, 'M')) return fields.has_name && !IsCollectorMetadata(fields);
  if (IsPhase(fields, 'X')) return fields.category == EventCategory::kOther;
  if (IsPhase(fields, 's') || IsPhase(fields, 'f')) {
    return fields.category != EventCategory::kAbsent && fields.category != EventCategory::kFlow;
  }
  return false;
}

// A stream handle written as text: ROCm's roctracer gives HIP runtime calls `"stream": "0x0"`.
// Hex ("0x" and 1 to 16 digits, kept as the 64-bit pattern) or decimal that fits an int64.
bool ParseStreamHandleText(std::string_view text, int64_t* value) {
  if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
    text.remove_prefix(2);
    if (text.size() > 16) return false;
    uint64_t handle = 0;
    for (char c : text) {
      int digit = -1;
      if (c >= '0' && c <= '9') digit = c - '0';
      if (c >= 'a' && c <= 'f') digit = c - 'a' + 10;
      if (c >= 'A' && c <= 'F') digit = c - 'A' + 10;
      if (digit < 0) return false;
      handle = handle * 16 + static_cast<uint64_t>(digit);
    }
    *value = static_cast<int64_t>(handle);
    return true;
  }
  if (text.empty() || text.size() > 19) return false;
  int64_t number = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    if (__builtin_mul_overflow(number, 10, &number) ||
        __builtin_add_overflow(number, c - '0', &number)) {
      return false;
    }
  }
  *value = number;
  return true;
}

bool FitsInt32(int64_t value) {
  return value >= std::numeric_limits<int32_t>::min() &&
         value <= std::numeric_limits<int32_t>::max();
}

}  // namespace

int64_t SyntheticId(std::string_view text) {
  uint64_t hash = 14695981039346656037ULL;
  for (char c : text) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 1099511628211ULL;
  }
  return -1 - static_cast<int64_t>(hash >> 1);
}

bool ParseRankListText(std::string_view text, std::vector<int32_t>* ranks) {
  ranks->clear();
  const size_t open = text.find_first_not_of(" \t\n\r");
  const size_t close = text.find_last_not_of(" \t\n\r");
  if (open == std::string_view::npos || text[open] != '[' || text[close] != ']' || close == open) {
    return false;
  }
  std::string_view body = text.substr(open + 1, close - open - 1);
  if (body.find_first_not_of(" \t\n\r") == std::string_view::npos) return true;  // "[]"
  while (true) {
    const size_t comma = body.find(',');
    std::string_view item = body.substr(0, comma);
    const size_t item_begin = item.find_first_not_of(" \t\n\r");
    if (item_begin == std::string_view::npos) return false;
    item.remove_prefix(item_begin);
    int64_t rank = 0;
    if (ParseInteger(item, &rank) != NumberStatus::kOk || !FitsInt32(rank)) return false;
    ranks->push_back(static_cast<int32_t>(rank));
    if (comma == std::string_view::npos) return true;
    body.remove_prefix(comma + 1);
  }
}

simdjson::error_code EventFieldReader::Read(ondemand::object& event, EventFields* fields) {
  ImportCounter problem = ImportCounter::kWrongFieldType;
  // Fields are used straight from the iterator's result (no ondemand::value copies): copying
  // values per field costs store-forwarding stalls that showed up as a third of the reader's time.
  for (auto field : event) {
    ondemand::raw_json_string raw_key;
    if (auto error = field.key().get(raw_key)) return error;
    std::string_view token;
    if (auto error = field.value().raw_json_token().get(token)) return error;
    const std::string_view key = KeyText(raw_key.raw());
    switch (key.size()) {
      case 2:
        if (key == "ph") {
          if (!StringTokenContent(token, &fields->ph)) {
            MarkDamaged(fields, ImportCounter::kWrongFieldType);
          } else {
            fields->has_ph = true;
          }
        } else if (key == "ts") {
          fields->has_ts = ReadNumber(token, 3, &fields->ts, &problem);
          if (!fields->has_ts) MarkDamaged(fields, problem);
        } else if (key == "id") {
          if (!ReadId(token, &fields->id, &problem)) MarkDamaged(fields, problem);
        }
        break;
      case 3:
        if (key == "cat") {
          if (!StringTokenContent(token, &fields->cat)) {
            MarkDamaged(fields, ImportCounter::kWrongFieldType);
          } else {
            fields->category = ClassifyCategory(fields->cat);
          }
        } else if (key == "pid") {
          if (!ReadId(token, &fields->pid, &problem)) MarkDamaged(fields, problem);
        } else if (key == "tid") {
          if (!ReadId(token, &fields->tid, &problem)) MarkDamaged(fields, problem);
        } else if (key == "dur") {
          fields->has_dur = ReadNumber(token, 3, &fields->dur, &problem);
          if (!fields->has_dur) MarkDamaged(fields, problem);
        }
        break;
      case 4:
        if (key == "name") {
          fields->has_name = StringTokenContent(token, &fields->name);
          if (!fields->has_name) MarkDamaged(fields, ImportCounter::kWrongFieldType);
        } else if (key == "args" && IsCollectorMetadata(*fields) && metadata_sink_ != nullptr) {
          ondemand::value args;
          if (auto error = field.value().get(args)) return error;
          if (auto error = metadata_sink_->ReadCollectorArgs(*fields, args)) return error;
        } else if (key == "args" && ArgsNeeded(*fields)) {
          if (token.empty() || token[0] != '{') {
            MarkArgDamaged(&fields->args, kAllArgGroups, ImportCounter::kWrongFieldType);
          } else {
            ondemand::object args;
            if (auto error = field.value().get_object().get(args)) return error;
            if (auto error = ReadArgs(args, fields)) return error;
          }
        }
        break;
      default:
        break;
    }
    if (NothingMoreNeeded(*fields)) break;
  }
  return simdjson::SUCCESS;
}

simdjson::error_code EventFieldReader::ReadArgs(ondemand::object& args_object,
                                                EventFields* fields) {
  EventArgs& args = fields->args;
  ImportCounter problem = ImportCounter::kWrongFieldType;
  // Reads a number arg of `group`; a damaged one marks the group.
  auto number = [&](std::string_view token, uint8_t group, int64_t* out) {
    if (ReadNumber(token, 0, out, &problem)) return true;
    MarkArgDamaged(&args, group, problem);
    return false;
  };
  auto text = [&](std::string_view token, std::string_view* out) {
    if (StringTokenContent(token, out)) return;
    MarkArgDamaged(&args, kArgGroupComm, ImportCounter::kWrongFieldType);
  };
  for (auto field : args_object) {
    ondemand::raw_json_string raw_key;
    if (auto error = field.key().get(raw_key)) return error;
    std::string_view token;
    if (auto error = field.value().raw_json_token().get(token)) return error;
    const std::string_view key = KeyText(raw_key.raw());
    switch (key.size()) {
      case 3:
        if (key == "Seq") number(token, kArgGroupComm, &args.seq);
        break;
      case 5:
        if (key == "dtype") {
          text(token, &args.dtype);
        } else if (key == "Bytes") {
          args.has_bytes = number(token, kArgGroupMemory, &args.bytes);
        }
        break;
      case 6:
        if (key == "device") {
          args.has_device = number(token, kArgGroupGpu, &args.device);
        } else if (key == "stream") {
          std::string_view handle;
          if (StringTokenContent(token, &handle)) {
            args.has_stream = ParseStreamHandleText(handle, &args.stream);
            if (!args.has_stream) {
              MarkArgDamaged(&args, kArgGroupGpu, ImportCounter::kWrongFieldType);
            }
          } else {
            args.has_stream = number(token, kArgGroupGpu, &args.stream);
          }
        }
        break;
      case 8:
        if (key == "Src Rank") {
          number(token, kArgGroupComm, &args.src_rank);
        } else if (key == "Dst Rank") {
          number(token, kArgGroupComm, &args.dst_rank);
        }
        break;
      case 9:
        if (key == "Device Id")
          args.has_device_id = number(token, kArgGroupMemory, &args.device_id);
        break;
      case 10:
        if (key == "Group size") number(token, kArgGroupComm, &args.group_size);
        break;
      case 11:
        if (key == "correlation") {
          number(token, kArgGroupGpu, &args.correlation);
        } else if (key == "Device Type") {
          args.has_device_type = number(token, kArgGroupMemory, &args.device_type);
        }
        break;
      case 13:
        if (key == "In msg nelems") number(token, kArgGroupComm, &args.in_nelems);
        break;
      case 14:
        if (key == "Out msg nelems") {
          number(token, kArgGroupComm, &args.out_nelems);
        } else if (key == "Total Reserved") {
          args.has_total_reserved = number(token, kArgGroupMemory, &args.total_reserved);
        }
        break;
      case 15:
        if (key == "Collective name") {
          text(token, &args.collective);
        } else if (key == "Total Allocated") {
          args.has_total_allocated = number(token, kArgGroupMemory, &args.total_allocated);
        }
        break;
      case 18:
        if (key == "Process Group Name") text(token, &args.pg_name);
        break;
      case 19:
        if (key != "Process Group Ranks") break;
        if (!token.empty() && token[0] == '[') {
          ondemand::array ranks;
          if (auto error = field.value().get_array().get(ranks)) return error;
          if (auto error = ReadRanksArray(ranks, &args)) return error;
        } else {
          std::string_view ranks_text;
          text(token, &ranks_text);
          args.has_pg_ranks = ParseRankListText(ranks_text, &pg_ranks_);
        }
        break;
      case 25:
        if (key == "Process Group Description") text(token, &args.pg_desc);
        break;
      default:
        break;
    }
  }
  return simdjson::SUCCESS;
}

simdjson::error_code EventFieldReader::ReadRanksArray(ondemand::array& ranks, EventArgs* args) {
  pg_ranks_.clear();
  bool usable = true;
  for (auto element : ranks) {
    std::string_view token;
    if (auto error = element.raw_json_token().get(token)) return error;
    int64_t rank = 0;
    ImportCounter problem = ImportCounter::kWrongFieldType;
    const bool read = ReadNumber(token, 0, &rank, &problem);
    if (read && !FitsInt32(rank)) problem = ImportCounter::kBadId;
    if (!read || !FitsInt32(rank)) {
      if (usable) MarkArgDamaged(args, kArgGroupComm, problem);
      usable = false;
      continue;
    }
    pg_ranks_.push_back(static_cast<int32_t>(rank));
  }
  args->has_pg_ranks = usable;
  return simdjson::SUCCESS;
}

}  // namespace bubblescope::kineto
