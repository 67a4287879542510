#include "set_truth.h"

#include <array>
#include <cstdint>
#include <fstream>
#include <iterator>
#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "readers/json_number.h"
#include "simdjson.h"
#include "synth/synthetic_job.h"
#include "synth/truth_json.h"

namespace bubblescope::bench {
namespace {

namespace ondemand = simdjson::ondemand;

// This Abseil predates std::string_view as absl::string_view, so views cross over by hand.
absl::string_view AsAbsl(std::string_view view) { return {view.data(), view.size()}; }

absl::Status Malformed(std::string_view member, std::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat(AsAbsl(member), ": ", AsAbsl(why)));
}

absl::Status Malformed(std::string_view member, simdjson::error_code error) {
  return Malformed(member, simdjson::error_message(error));
}

// The truth writes nanoseconds as microsecond decimals ("-2500", "1234.5"); a double would lose
// nanoseconds of a 1.7e18 ns timestamp, so the token goes through the reader's exact parser.
absl::Status ReadMicros(ondemand::value value, std::string_view member, TimeNs* ns) {
  if (kineto::MicrosToNanos(value.raw_json_token(), ns) != kineto::NumberStatus::kOk) {
    return Malformed(member, "not microseconds within the nanosecond range");
  }
  return absl::OkStatus();
}

absl::Status ReadInt64(ondemand::value value, std::string_view member, int64_t* out) {
  if (auto error = value.get_int64().get(*out)) return Malformed(member, error);
  return absl::OkStatus();
}

absl::Status ReadInt32(ondemand::value value, std::string_view member, int32_t* out) {
  int64_t wide = 0;
  if (absl::Status status = ReadInt64(value, member, &wide); !status.ok()) return status;
  if (wide < std::numeric_limits<int32_t>::min() || wide > std::numeric_limits<int32_t>::max()) {
    return Malformed(member, "outside the 32-bit range");
  }
  *out = static_cast<int32_t>(wide);
  return absl::OkStatus();
}

absl::Status ReadString(ondemand::value value, std::string_view member, std::string_view* out) {
  if (auto error = value.get_string().get(*out)) return Malformed(member, error);
  return absl::OkStatus();
}

// An infinitely fast link has no JSON number: the truth writes null.
absl::Status ReadGbps(ondemand::value value, std::string_view member, double* gbps) {
  ondemand::json_type type;
  if (auto error = value.type().get(type)) return Malformed(member, error);
  if (type == ondemand::json_type::null) {
    *gbps = std::numeric_limits<double>::infinity();
    return absl::OkStatus();
  }
  if (auto error = value.get_double().get(*gbps)) return Malformed(member, error);
  return absl::OkStatus();
}

// Calls `read(element, member)` for every element of the array `value`, member "name[i]".
template <typename ReadElement>
absl::Status ForEachElement(ondemand::value value, std::string_view name, ReadElement read) {
  ondemand::array array;
  if (auto error = value.get_array().get(array)) return Malformed(name, error);
  size_t index = 0;
  for (auto element : array) {
    ondemand::value item;
    const std::string member = absl::StrCat(AsAbsl(name), "[", index++, "]");
    if (auto error = element.get(item)) return Malformed(member, error);
    if (absl::Status status = read(item, member); !status.ok()) return status;
  }
  return absl::OkStatus();
}

// Calls `read(key, value, member)` for every member of the object `value`, member "name.key".
template <typename ReadMember>
absl::Status ForEachMember(ondemand::value value, std::string_view name, ReadMember read) {
  ondemand::object object;
  if (auto error = value.get_object().get(object)) return Malformed(name, error);
  for (auto field : object) {
    std::string_view key;
    ondemand::value item;
    if (auto error = field.unescaped_key().get(key)) return Malformed(name, error);
    const std::string member = absl::StrCat(AsAbsl(name), ".", AsAbsl(key));
    if (auto error = field.value().get(item)) return Malformed(member, error);
    if (absl::Status status = read(key, item, member); !status.ok()) return status;
  }
  return absl::OkStatus();
}

absl::Status ReadCost(ondemand::value value, std::string_view name, sim::Config* config) {
  sim::StageCost cost;
  absl::Status status = ForEachMember(
      value, name, [&](std::string_view key, ondemand::value item, const std::string& member) {
        if (key == "stage") {
          int32_t stage = 0;
          if (absl::Status read = ReadInt32(item, member, &stage); !read.ok()) return read;
          if (stage != static_cast<int32_t>(config->costs.size())) {
            return Malformed(member, "stages out of order");
          }
          return absl::OkStatus();
        }
        if (key == "forward_us") return ReadMicros(item, member, &cost.forward);
        if (key == "backward_us") return ReadMicros(item, member, &cost.backward);
        if (key == "weight_grad_us") return ReadMicros(item, member, &cost.weight_grad);
        return Malformed(member, "not a member this benchmark knows");
      });
  config->costs.push_back(cost);
  return status;
}

absl::Status ReadLink(ondemand::value value, std::string_view name, int32_t* src_rank,
                      int32_t* dst_rank, sim::Link* link) {
  return ForEachMember(value, name,
                       [&](std::string_view key, ondemand::value item, const std::string& member) {
                         if (key == "gbps") return ReadGbps(item, member, &link->gbps);
                         if (key == "latency_us")
                           return ReadMicros(item, member, &link->latency_ns);
                         if (src_rank != nullptr && key == "src_rank")
                           return ReadInt32(item, member, src_rank);
                         if (dst_rank != nullptr && key == "dst_rank")
                           return ReadInt32(item, member, dst_rank);
                         return Malformed(member, "not a member this benchmark knows");
                       });
}

// A member holding one of `choices` by its stable name (`name_of`).
template <typename Enum, size_t N>
absl::Status ReadNamed(ondemand::value value, std::string_view member,
                       const std::array<Enum, N>& choices, std::string_view (*name_of)(Enum),
                       Enum* out) {
  std::string_view name;
  if (absl::Status status = ReadString(value, member, &name); !status.ok()) return status;
  for (Enum choice : choices) {
    if (name_of(choice) == name) {
      *out = choice;
      return absl::OkStatus();
    }
  }
  return Malformed(member, absl::StrCat("unknown value \"", AsAbsl(name), "\""));
}

absl::Status ReadConfigMember(std::string_view key, ondemand::value value,
                              const std::string& member, sim::Config* config) {
  if (key == "schedule") {
    return ReadNamed(value, member, sim::kSchedules, &sim::ScheduleName, &config->schedule);
  }
  if (key == "stages") return ReadInt32(value, member, &config->stages);
  if (key == "microbatches") return ReadInt32(value, member, &config->microbatches);
  if (key == "virtual_stages") return ReadInt32(value, member, &config->virtual_stages);
  if (key == "iterations") return ReadInt32(value, member, &config->iterations);
  if (key == "kernels_per_op") return ReadInt32(value, member, &config->kernels_per_op);
  if (key == "activation_bytes") return ReadInt64(value, member, &config->activation_bytes);
  if (key == "launch_gap_us") return ReadMicros(value, member, &config->launch_gap_ns);
  if (key == "optimizer_us") return ReadMicros(value, member, &config->optimizer_ns);
  if (key == "start_time_us") return ReadMicros(value, member, &config->start_time_ns);
  if (key == "annotations") {
    return ReadNamed(value, member, sim::kAnnotationStyles, &sim::AnnotationStyleName,
                     &config->annotations);
  }
  if (key == "p2p")
    return ReadNamed(value, member, sim::kP2pStyles, &sim::P2pStyleName, &config->p2p);
  if (key == "vendor")
    return ReadNamed(value, member, sim::kVendors, &sim::VendorName, &config->vendor);
  if (key == "launches") {
    return ReadNamed(value, member, sim::kLaunchStyles, &sim::LaunchStyleName, &config->launches);
  }
  if (key == "activation_stash_bytes") {
    return ReadInt64(value, member, &config->activation_stash_bytes);
  }
  if (key == "jitter") {
    if (auto error = value.get_double().get(config->jitter)) return Malformed(member, error);
    return absl::OkStatus();
  }
  if (key == "seed") {
    if (auto error = value.get_uint64().get(config->seed)) return Malformed(member, error);
    return absl::OkStatus();
  }
  if (key == "iteration_barrier") {
    if (auto error = value.get_bool().get(config->iteration_barrier)) {
      return Malformed(member, error);
    }
    return absl::OkStatus();
  }
  if (key == "costs") {
    return ForEachElement(value, member, [&](ondemand::value item, const std::string& name) {
      return ReadCost(item, name, config);
    });
  }
  if (key == "link") return ReadLink(value, member, nullptr, nullptr, &config->link);
  if (key == "link_overrides") {
    return ForEachElement(value, member, [&](ondemand::value item, const std::string& name) {
      sim::LinkOverride entry;
      absl::Status status = ReadLink(item, name, &entry.src_rank, &entry.dst_rank, &entry.link);
      config->link_overrides.push_back(entry);
      return status;
    });
  }
  if (key == "clock_offsets_us") {
    return ForEachElement(value, member, [&](ondemand::value item, const std::string& name) {
      TimeNs offset = 0;
      absl::Status status = ReadMicros(item, name, &offset);
      config->clock_offsets_ns.push_back(offset);
      return status;
    });
  }
  if (key == "weights_bytes") {
    return ForEachElement(value, member, [&](ondemand::value item, const std::string& name) {
      int64_t bytes = 0;
      absl::Status status = ReadInt64(item, name, &bytes);
      config->weights_bytes.push_back(bytes);
      return status;
    });
  }
  return Malformed(member, "not a member this benchmark knows");
}

}  // namespace

absl::StatusOr<sim::Config> ConfigFromTruthJson(std::string_view truth_json) {
  const simdjson::padded_string padded(truth_json);
  ondemand::parser parser;
  ondemand::document document;
  if (auto error = parser.iterate(padded).get(document)) return Malformed("document", error);
  ondemand::object root;
  if (auto error = document.get_object().get(root)) return Malformed("document", error);
  sim::Config config;
  bool schema_seen = false;
  bool config_seen = false;
  for (auto field : root) {
    std::string_view key;
    ondemand::value value;
    if (auto error = field.unescaped_key().get(key)) return Malformed("document", error);
    if (auto error = field.value().get(value)) return Malformed(key, error);
    if (key == "schema") {
      std::string_view schema;
      if (absl::Status status = ReadString(value, key, &schema); !status.ok()) return status;
      if (schema != sim::kTruthSchema) {
        return Malformed(
            key, absl::StrCat("\"", AsAbsl(schema), "\", not \"", AsAbsl(sim::kTruthSchema), "\""));
      }
      schema_seen = true;
    } else if (key == "config") {
      absl::Status status = ForEachMember(
          value, key, [&](std::string_view name, ondemand::value item, const std::string& member) {
            return ReadConfigMember(name, item, member, &config);
          });
      if (!status.ok()) return status;
      config_seen = true;
    } else if (key == "stage_to_rank") {
      // The truth keeps the stage placement beside the config, not in it.
      absl::Status status =
          ForEachElement(value, key, [&](ondemand::value item, const std::string& member) {
            int32_t rank = 0;
            absl::Status read = ReadInt32(item, member, &rank);
            config.stage_to_rank.push_back(rank);
            return read;
          });
      if (!status.ok()) return status;
    }
  }
  if (!schema_seen || !config_seen) {
    return Malformed(schema_seen ? "config" : "schema", "missing");
  }
  return config;
}

absl::StatusOr<SetTruth> ResimulateTruthFile(const std::string& truth_path) {
  std::ifstream in(truth_path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat(truth_path, ": cannot be read"));
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  absl::StatusOr<sim::Config> config = ConfigFromTruthJson(text);
  if (!config.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(truth_path, ": ", config.status().message()));
  }
  absl::StatusOr<sim::Simulation> simulation = sim::Simulate(*config);
  if (!simulation.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(truth_path, ": its config: ", simulation.status().message()));
  }
  absl::StatusOr<std::string> fresh = sim::TruthJson(*config, simulation->truth);
  if (!fresh.ok()) return fresh.status();
  if (*fresh != text) {
    return absl::FailedPreconditionError(
        absl::StrCat(truth_path,
                     " is not what this simulator makes of its own config (another version, or "
                     "edited); regenerate the set"));
  }
  return SetTruth{*std::move(config), std::move(simulation->truth)};
}

}  // namespace bubblescope::bench
