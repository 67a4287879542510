#include "readers/kineto_metadata.h"

#include <limits>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "readers/json_fields.h"
#include "readers/json_number.h"
#include "readers/kineto_event.h"
#include "record_format/record_run_id.h"
#include "text/json_tokens.h"
#include "text/one_line.h"

namespace bubblescope::kineto {
namespace {

namespace ondemand = simdjson::ondemand;

// Counts problems in metadata fields at their byte offsets.
class FieldReader {
 public:
  FieldReader(const char* begin, int64_t bias, Rank* rank)
      : begin_(begin), bias_(bias), rank_(rank) {}

  int64_t Offset(std::string_view token) const { return token.data() - begin_ + bias_; }

  template <typename T>
  bool Integer(std::string_view token, T* out) {
    int64_t value = 0;
    if (token.empty() || token[0] == '"' || token[0] == '{' || token[0] == '[') {
      rank_->stats.Bump(ImportCounter::kWrongFieldType, Offset(token));
      return false;
    }
    if (ParseInteger(token, &value) != NumberStatus::kOk) {
      rank_->stats.Bump(ImportCounter::kBadNumber, Offset(token));
      return false;
    }
    if (value < std::numeric_limits<T>::min() || value > std::numeric_limits<T>::max()) {
      // The narrow fields of the metadata are ids and counts (rank, world size, device).
      rank_->stats.Bump(
          sizeof(T) < sizeof(int64_t) ? ImportCounter::kBadId : ImportCounter::kBadNumber,
          Offset(token));
      return false;
    }
    *out = static_cast<T>(value);
    return true;
  }

  // A rank id or world size: a whole number from `minimum` to 2^31 - 1. Anything else (-1, 1.5,
  // 1e12) is counted as a bad id and leaves `*out` as it was (unknown), never rounded or
  // ignored in silence.
  bool WholeId(std::string_view token, int32_t minimum, int32_t* out) {
    // null records no id: the id is unknown, as if the member were absent (it was counted as a
    // bad timestamp).
    if (token.starts_with("null")) return false;
    if (token.empty() || token[0] == '"' || token[0] == '{' || token[0] == '[') {
      rank_->stats.Bump(ImportCounter::kWrongFieldType, Offset(token));
      return false;
    }
    // Nanos-style scaling keeps nine fractional digits, enough to tell 1.5 or 1.0000001 from 1;
    // every int32 times 10^9 fits int64.
    constexpr int64_t kScale = 1'000'000'000;
    int64_t scaled = 0;
    const NumberStatus status = ParseScaledDecimal(token, 9, &scaled);
    // Not a number at all (true, a bare word): a field of the wrong type, not bad_number, which
    // names timestamps and durations.
    if (status == NumberStatus::kNotNumber) {
      rank_->stats.Bump(ImportCounter::kWrongFieldType, Offset(token));
      return false;
    }
    if (status == NumberStatus::kOutOfRange || scaled % kScale != 0 || scaled / kScale < minimum ||
        scaled / kScale > std::numeric_limits<int32_t>::max()) {
      rank_->stats.Bump(ImportCounter::kBadId, Offset(token));
      return false;
    }
    *out = static_cast<int32_t>(scaled / kScale);
    return true;
  }

  bool Text(std::string_view token, std::string* out) {
    std::string_view content;
    if (!StringTokenContent(token, &content)) {
      rank_->stats.Bump(ImportCounter::kWrongFieldType, Offset(token));
      return false;
    }
    *out = std::string(UnescapeJsonString(content, &scratch_));
    return true;
  }

  void WrongType(std::string_view token) {
    rank_->stats.Bump(ImportCounter::kWrongFieldType, Offset(token));
  }

  // Opens `value` as an object. Any other JSON type is counted as a wrong field type and leaves
  // `*opened` false; only simdjson's own errors are returned.
  simdjson::error_code OpenObject(ondemand::value& value, ondemand::object* object, bool* opened) {
    *opened = false;
    const std::string_view token = value.raw_json_token();
    if (token.empty() || token[0] != '{') {
      WrongType(token);
      return simdjson::SUCCESS;
    }
    if (auto error = value.get_object().get(*object)) return error;
    *opened = true;
    return simdjson::SUCCESS;
  }

 private:
  const char* begin_;
  int64_t bias_;
  Rank* rank_;
  std::string scratch_;
};

simdjson::error_code ReadDevice(ondemand::object& object, FieldReader& reader, DeviceInfo* device) {
  return ForEachField(object, [&](std::string_view key, ondemand::value& value) {
    const std::string_view token = value.raw_json_token();
    if (key == "id") {
      reader.Integer(token, &device->id);
    } else if (key == "name") {
      reader.Text(token, &device->name);
    } else if (key == "totalGlobalMem") {
      reader.Integer(token, &device->total_memory_bytes);
    } else if (key == "computeMajor") {
      reader.Integer(token, &device->compute_major);
    } else if (key == "computeMinor") {
      reader.Integer(token, &device->compute_minor);
    } else if (key == "numSms") {
      reader.Integer(token, &device->multiprocessors);
    }
    return simdjson::SUCCESS;
  });
}

// Ranks written as an array of numbers or as a string "[0, 1]"; false if neither.
simdjson::error_code ReadRanks(ondemand::value& value, FieldReader& reader,
                               std::vector<int32_t>* ranks, bool* usable) {
  const std::string_view token = value.raw_json_token();
  *usable = false;
  if (!token.empty() && token[0] == '"') {
    std::string text;
    *usable = reader.Text(token, &text) && ParseRankListText(text, ranks);
    return simdjson::SUCCESS;
  }
  if (token.empty() || token[0] != '[') {
    reader.WrongType(token);
    return simdjson::SUCCESS;
  }
  ondemand::array array;
  if (auto error = value.get_array().get(array)) return error;
  *usable = true;
  for (auto element : array) {
    ondemand::value rank_value;
    if (auto error = element.get(rank_value)) return error;
    int32_t rank = 0;
    if (!reader.Integer(rank_value.raw_json_token(), &rank)) {
      *usable = false;
      continue;
    }
    ranks->push_back(rank);
  }
  return simdjson::SUCCESS;
}

// One pg_config entry: {"pg_name": ..., "pg_desc": ..., "ranks": [...]}.
simdjson::error_code ReadGroup(ondemand::value& value, FieldReader& reader, RankBuilder* builder) {
  ondemand::object object;
  bool opened = false;
  if (auto error = reader.OpenObject(value, &object, &opened); error || !opened) return error;
  std::string name;
  std::string description;
  std::vector<int32_t> ranks;
  bool has_ranks = false;
  auto read_field = [&](std::string_view key, ondemand::value& field_value) {
    if (key == "pg_name") {
      reader.Text(field_value.raw_json_token(), &name);
    } else if (key == "pg_desc") {
      reader.Text(field_value.raw_json_token(), &description);
    } else if (key == "ranks") {
      return ReadRanks(field_value, reader, &ranks, &has_ranks);
    }
    return simdjson::SUCCESS;
  };
  if (auto error = ForEachField(object, read_field)) return error;
  builder->AddProcessGroup(name, description, has_ranks ? &ranks : nullptr);
  return simdjson::SUCCESS;
}

// pg_config: a list of groups, or an object whose values are groups.
simdjson::error_code ReadGroups(ondemand::value& value, FieldReader& reader, RankBuilder* builder) {
  const std::string_view token = value.raw_json_token();
  if (!token.empty() && token[0] == '[') {
    ondemand::array array;
    if (auto error = value.get_array().get(array)) return error;
    for (auto element : array) {
      ondemand::value group;
      if (auto error = element.get(group)) return error;
      if (auto error = ReadGroup(group, reader, builder)) return error;
    }
    return simdjson::SUCCESS;
  }
  ondemand::object object;
  bool opened = false;
  if (auto error = reader.OpenObject(value, &object, &opened); error || !opened) return error;
  for (auto field : object) {
    ondemand::value group;
    if (auto error = field.value().get(group)) return error;
    if (auto error = ReadGroup(group, reader, builder)) return error;
  }
  return simdjson::SUCCESS;
}

}  // namespace

simdjson::error_code ReadDeviceProperties(ondemand::value& value, const char* begin, int64_t bias,
                                          Rank* rank) {
  FieldReader reader(begin, bias, rank);
  const std::string_view token = value.raw_json_token();
  if (token.empty() || token[0] != '[') {
    reader.WrongType(token);
    return simdjson::SUCCESS;
  }
  ondemand::array array;
  if (auto error = value.get_array().get(array)) return error;
  for (auto element : array) {
    ondemand::value device_value;
    if (auto error = element.get(device_value)) return error;
    ondemand::object object;
    bool opened = false;
    if (auto error = reader.OpenObject(device_value, &object, &opened)) return error;
    if (!opened) continue;
    DeviceInfo device;
    if (auto error = ReadDevice(object, reader, &device)) return error;
    rank->devices.push_back(std::move(device));
  }
  return simdjson::SUCCESS;
}

simdjson::error_code ReadDistributedInfo(ondemand::value& value, const char* begin, int64_t bias,
                                         Rank* rank, RankBuilder* builder) {
  FieldReader reader(begin, bias, rank);
  ondemand::object object;
  bool opened = false;
  if (auto error = reader.OpenObject(value, &object, &opened); error || !opened) return error;
  return ForEachField(object, [&](std::string_view key, ondemand::value& field_value) {
    const std::string_view field_token = field_value.raw_json_token();
    if (key == "rank") {
      reader.WholeId(field_token, 0, &rank->rank);
    } else if (key == "world_size") {
      reader.WholeId(field_token, 1, &rank->world_size);
    } else if (key == "backend") {
      reader.Text(field_token, &rank->backend);
    } else if (key == "pg_config") {
      return ReadGroups(field_value, reader, builder);
    }
    return simdjson::SUCCESS;
  });
}

namespace {

// Visits each field of a collector event's args object (`value`); args that are not an object
// are counted by OpenObject and skipped.
template <typename Visit>
simdjson::error_code ForEachArg(ondemand::value& value, FieldReader& reader, Visit&& visit) {
  ondemand::object object;
  bool opened = false;
  if (auto error = reader.OpenObject(value, &object, &opened); error || !opened) return error;
  return ForEachField(object, std::forward<Visit>(visit));
}

}  // namespace

simdjson::error_code ReadProcessMetadata(ondemand::value& value, const char* begin, int64_t bias,
                                         Rank* rank, RankBuilder* builder) {
  FieldReader reader(begin, bias, rank);
  return ForEachArg(value, reader, [&](std::string_view key, ondemand::value& field_value) {
    const std::string_view field_token = field_value.raw_json_token();
    if (key == "distributedInfo") {
      return ReadDistributedInfo(field_value, begin, bias, rank, builder);
    } else if (key == "deviceProperties") {
      return ReadDeviceProperties(field_value, begin, bias, rank);
    } else if (key == "host") {
      reader.Text(field_token, &rank->host);
    } else if (key == "run_id") {
      std::string id;
      if (!reader.Text(field_token, &id)) return simdjson::SUCCESS;
      // Not the collector's: it is kept out of error messages and of the run check.
      if (!record_format::IsValidRecordRunId(id)) {
        rank->stats.Bump(ImportCounter::kBadId, reader.Offset(field_token));
        return simdjson::SUCCESS;
      }
      rank->record_run_id = std::move(id);
    } else if (key == "pid") {
      reader.Integer(field_token, &rank->pid);
    }
    return simdjson::SUCCESS;
  });
}

simdjson::error_code ReadDroppedCounts(ondemand::value& value, const char* begin, int64_t bias,
                                       Rank* rank, DroppedTotals* seen) {
  FieldReader reader(begin, bias, rank);
  return ForEachArg(value, reader, [&](std::string_view key, ondemand::value& field_value) {
    int64_t* total = nullptr;
    ImportCounter counter = ImportCounter::kCollectorDroppedRecords;
    if (key == "cupti_records") {
      total = &seen->cupti_records;
    } else if (key == "buffer_requests") {
      total = &seen->buffer_requests;
      counter = ImportCounter::kCollectorRefusedBuffers;
    } else if (key == "nvtx_ranges") {
      total = &seen->nvtx_ranges;
      counter = ImportCounter::kCollectorDroppedRanges;
    } else if (key == "nccl_events") {
      total = &seen->nccl_events;
      counter = ImportCounter::kCollectorDroppedNcclEvents;
    } else {
      return simdjson::SUCCESS;
    }
    const std::string_view token = field_value.raw_json_token();
    int64_t now = 0;
    if (!reader.Integer(token, &now)) return simdjson::SUCCESS;
    if (now < 0) {
      rank->stats.Bump(ImportCounter::kBadNumber, reader.Offset(token));
    } else if (now > *total) {
      rank->stats.Add(counter, static_cast<uint64_t>(now - *total), reader.Offset(token));
      *total = now;
    }
    return simdjson::SUCCESS;
  });
}

simdjson::error_code ReadCuptiUnavailable(ondemand::value& value, const char* begin, int64_t bias,
                                          Rank* rank, CuptiUnavailable* out) {
  FieldReader reader(begin, bias, rank);
  return ForEachArg(value, reader, [&](std::string_view key, ondemand::value& field_value) {
    const std::string_view field_token = field_value.raw_json_token();
    if (key == "held_by") {
      reader.Text(field_token, &out->held_by);
    } else if (key == "not_recorded") {
      reader.Text(field_token, &out->not_recorded);
    } else if (key == "recorded") {
      reader.Text(field_token, &out->recorded);
    }
    return simdjson::SUCCESS;
  });
}

std::string CuptiUnavailableReason(const CuptiUnavailable& unavailable) {
  // The texts come from the file: bounded and kept to one line.
  constexpr size_t kShown = 200;
  auto shown = [](const std::string& text) {
    return text::OneLine(std::string_view(text).substr(0, kShown));
  };
  std::string reason = "recorded while another profiler held CUPTI";
  if (!unavailable.held_by.empty()) reason += " (" + shown(unavailable.held_by) + ")";
  reason += ": ";
  reason += unavailable.not_recorded.empty() ? std::string("kernels, copies and CUDA calls")
                                             : shown(unavailable.not_recorded);
  reason += " not recorded";
  if (unavailable.recorded.find("nccl") != std::string::npos) {
    reason += ", and no NCCL transfer took place";
  }
  reason +=
      "; record again without torch.profiler or Nsight Systems in the job, or analyze that "
      "profiler's own trace";
  return reason;
}

}  // namespace bubblescope::kineto
