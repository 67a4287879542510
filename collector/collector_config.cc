#include "collector_config.h"

#include <array>
#include <charconv>
#include <string_view>
#include <utility>

#include "record_format/record_run_id.h"
#include "text/one_line.h"

namespace bubblescope::collector {
namespace {

// A non-negative decimal integer filling all of `text`, or -1.
int64_t ParseCount(std::string_view text) {
  int64_t value = -1;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value < 0) return -1;
  return value;
}

std::string_view Trim(std::string_view text) {
  const size_t first = text.find_first_not_of(" \t");
  if (first == std::string_view::npos) return {};
  const size_t last = text.find_last_not_of(" \t");
  return text.substr(first, last - first + 1);
}

const char* NonEmpty(const EnvLookup& env, const char* name) {
  const char* value = env(name);
  return value != nullptr && value[0] != '\0' ? value : nullptr;
}

// BUBBLESCOPE_KINDS's names, in the order they are listed.
constexpr std::array<std::pair<std::string_view, uint32_t>, 9> kNames = {{
    {"kernel", kKindKernel},
    {"memcpy", kKindMemcpy},
    {"memset", kKindMemset},
    {"memory", kKindMemory},
    {"nvtx", kKindNvtx},
    {"runtime", kKindRuntime},
    {"driver", kKindDriver},
    {"nccl", kKindNccl},
    {"queries", kKindQueries},
}};

bool ParseKinds(std::string_view text, uint32_t* kinds, std::string* error) {
  *kinds = 0;
  while (true) {
    const size_t comma = text.find(',');
    const std::string_view item = Trim(text.substr(0, comma));
    bool known = false;
    for (const auto& [name, bit] : kNames) {
      if (item == name) {
        *kinds |= bit;
        known = true;
      }
    }
    if (!known) {
      *error = "BUBBLESCOPE_KINDS: unknown kind '" + std::string(item) +
               "' (expected kernel, memcpy, memset, memory, nvtx, runtime, driver, nccl, queries)";
      return false;
    }
    if (comma == std::string_view::npos) return true;
    text.remove_prefix(comma + 1);
  }
}

bool ParseStart(std::string_view text, CollectorConfig* config, std::string* error) {
  constexpr std::string_view kAfter = "after:";
  constexpr std::string_view kSteps = "steps:";
  if (text == "immediate") {
    config->start = StartMode::kImmediate;
  } else if (text == "profiler-api") {
    config->start = StartMode::kProfilerApi;
  } else if (text.substr(0, kSteps.size()) == kSteps) {
    const std::string_view window = text.substr(kSteps.size());
    const size_t colon = window.find(':');
    std::string_view first_text = window.substr(0, colon);
    std::string_view last_text =
        colon == std::string_view::npos ? std::string_view() : window.substr(colon + 1);
    // "+A:+B" counts from the first step seen; both ends say so, or neither.
    const bool relative = first_text.substr(0, 1) == "+";
    if (relative && last_text.substr(0, 1) == "+") {
      first_text.remove_prefix(1);
      last_text.remove_prefix(1);
    }
    const int64_t first = colon == std::string_view::npos ? -1 : ParseCount(first_text);
    const int64_t last = colon == std::string_view::npos ? -1 : ParseCount(last_text);
    if (first < 0 || last < first || last > int64_t{1} << 31) {
      *error = "BUBBLESCOPE_START: '" + std::string(text) +
               "' is not steps:A:B or steps:+A:+B with A <= B";
      return false;
    }
    config->start = StartMode::kSteps;
    config->first_step = first;
    config->last_step = last;
    config->steps_relative = relative;
  } else if (text.substr(0, kAfter.size()) == kAfter) {
    const int64_t seconds = ParseCount(text.substr(kAfter.size()));
    if (seconds < 0 || seconds > int64_t{1} << 31) {
      *error = "BUBBLESCOPE_START: '" + std::string(text) + "' is not after:SECONDS";
      return false;
    }
    config->start = StartMode::kAfterDelay;
    config->start_delay_ms = seconds * 1000;
  } else {
    *error = "BUBBLESCOPE_START: '" + std::string(text) +
             "' (expected immediate, profiler-api, after:SECONDS, steps:A:B or steps:+A:+B)";
    return false;
  }
  return true;
}

// A positive integer no larger than `max`; false with an error naming `variable` otherwise.
bool ParsePositive(const char* variable, std::string_view text, int64_t max, int64_t* out,
                   std::string* error) {
  const int64_t value = ParseCount(text);
  if (value <= 0 || value > max) {
    *error = std::string(variable) + ": '" + std::string(text) + "' is not a positive integer";
    return false;
  }
  *out = value;
  return true;
}

// MIB:SECONDS, each a whole number (0: no cap of that kind).
bool ParseLimit(std::string_view text, RecordingLimit* limit, std::string* error) {
  const size_t colon = text.find(':');
  const int64_t megabytes =
      colon == std::string_view::npos ? -1 : ParseCount(text.substr(0, colon));
  const int64_t seconds = colon == std::string_view::npos ? -1 : ParseCount(text.substr(colon + 1));
  if (megabytes < 0 || seconds < 0 || megabytes > int64_t{1} << 30 || seconds > int64_t{1} << 31) {
    *error = "BUBBLESCOPE_LIMIT: '" + std::string(text) +
             "' is not MIB:SECONDS (whole numbers, 0 for no cap)";
    return false;
  }
  limit->max_bytes = megabytes << 20;
  limit->max_recording_ms = seconds * 1000;
  return true;
}

int32_t FirstRankVariable(const EnvLookup& env, std::initializer_list<const char*> names) {
  for (const char* name : names) {
    const char* value = NonEmpty(env, name);
    if (value == nullptr) continue;
    const int64_t parsed = ParseCount(value);
    return parsed >= 0 && parsed <= INT32_MAX ? static_cast<int32_t>(parsed) : -1;
  }
  return -1;
}

}  // namespace

bool ParseCollectorConfig(const EnvLookup& env, CollectorConfig* config, std::string* error) {
  if (const char* dir = NonEmpty(env, "BUBBLESCOPE_OUTPUT_DIR")) config->output_dir = dir;
  if (const char* kinds = NonEmpty(env, "BUBBLESCOPE_KINDS")) {
    if (!ParseKinds(kinds, &config->kinds, error)) return false;
  }
  if (const char* flush = NonEmpty(env, "BUBBLESCOPE_FLUSH_MS")) {
    if (!ParsePositive("BUBBLESCOPE_FLUSH_MS", flush, int64_t{1} << 31, &config->flush_ms, error)) {
      return false;
    }
  }
  if (const char* on_step = NonEmpty(env, "BUBBLESCOPE_FLUSH_ON_STEP")) {
    const std::string_view value = on_step;
    if (value != "0" && value != "1") {
      *error = "BUBBLESCOPE_FLUSH_ON_STEP: '" + text::OneLine(on_step) + "' is not 0 or 1";
      return false;
    }
    config->flush_on_step = value == "1";
  }
  if (const char* start = NonEmpty(env, "BUBBLESCOPE_START")) {
    if (!ParseStart(start, config, error)) return false;
  }
  if (const char* limit = NonEmpty(env, "BUBBLESCOPE_LIMIT")) {
    if (!ParseLimit(limit, &config->limit, error)) return false;
  }
  if (const char* megabytes = NonEmpty(env, "BUBBLESCOPE_BUFFER_MB")) {
    int64_t value = 0;
    if (!ParsePositive("BUBBLESCOPE_BUFFER_MB", megabytes, int64_t{1} << 20, &value, error)) {
      return false;
    }
    config->buffer_cap_bytes = value << 20;
  }
  if (const char* run_id = NonEmpty(env, "BUBBLESCOPE_RUN_ID")) {
    if (!record_format::IsValidRecordRunId(run_id)) {
      *error = "BUBBLESCOPE_RUN_ID: '" + text::OneLine(run_id) +
               "' is not 1 to 64 letters, digits, '.', '_' or '-' (without \"rank\")";
      return false;
    }
    config->run_id = run_id;
  }
  return true;
}

ProcessIdentity ReadProcessIdentity(const EnvLookup& env, std::string host, int64_t pid) {
  ProcessIdentity identity;
  identity.rank =
      FirstRankVariable(env, {"RANK", "SLURM_PROCID", "OMPI_COMM_WORLD_RANK", "PMI_RANK"});
  identity.world_size =
      FirstRankVariable(env, {"WORLD_SIZE", "SLURM_NTASKS", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE"});
  identity.local_rank =
      FirstRankVariable(env, {"LOCAL_RANK", "SLURM_LOCALID", "OMPI_COMM_WORLD_LOCAL_RANK"});
  identity.host = std::move(host);
  identity.pid = pid;
  return identity;
}

std::string TraceFileName(const ProcessIdentity& identity, const std::string& run_id) {
  std::string name = "bubblescope-";
  if (!run_id.empty()) {
    name += run_id;
    name += '-';
  }
  // Appended piece by piece: GCC 12's -Wrestrict misreads `"-" + std::to_string(x)` at -O3.
  if (identity.rank >= 0) {
    name += "rank";
    name += std::to_string(identity.rank);
  } else {
    name += "norank";
  }
  if (identity.world_size >= 0) {
    name += "-world";
    name += std::to_string(identity.world_size);
  }
  name += '-';
  for (char c : identity.host) {
    const bool safe = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '.' || c == '_' || c == '-';
    name += safe ? c : '_';
  }
  name += '-';
  name += std::to_string(identity.pid);
  name += ".json";
  return name;
}

bool RecordsFromStart(const CollectorConfig& config) {
  return config.start == StartMode::kImmediate ||
         (config.start == StartMode::kSteps && config.steps_relative);
}

std::optional<int64_t> ProfilerStepNumber(std::string_view name) {
  constexpr std::string_view kStep = "ProfilerStep#";
  if (name.substr(0, kStep.size()) != kStep) return std::nullopt;
  const int64_t step = ParseCount(name.substr(kStep.size()));
  if (step < 0) return std::nullopt;
  return step;
}

bool FollowsStepRanges(const CollectorConfig& config) {
  return config.start == StartMode::kSteps || config.flush_on_step;
}

std::optional<bool> StepWindowChange(const CollectorConfig& config, std::string_view name,
                                     std::optional<int64_t>* first_step) {
  if (config.start != StartMode::kSteps) return std::nullopt;
  const std::optional<int64_t> number = ProfilerStepNumber(name);
  if (!number) return std::nullopt;
  const int64_t step = *number;
  if (!first_step->has_value()) *first_step = step;
  const int64_t base = config.steps_relative ? **first_step : 0;
  if (step - base > config.last_step) return false;
  if (step - base >= config.first_step) return true;
  if (config.steps_relative) return false;
  return std::nullopt;
}

std::string KindNames(uint32_t kinds) {
  std::string out;
  for (const auto& [name, bit] : kNames) {
    if (!(kinds & bit)) continue;
    if (!out.empty()) out += ',';
    out += name;
  }
  return out;
}

}  // namespace bubblescope::collector
