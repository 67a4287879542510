#include "report/whatif_model_json.h"

#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string_view>
#include <system_error>
#include <utility>

#include "absl/strings/str_cat.h"
#include "report/summary_report.h"
#include "simdjson.h"

namespace bubblescope {
namespace {

namespace od = simdjson::ondemand;

// A report is a few kilobytes per pipeline; this bounds what one read may hold.
constexpr std::uintmax_t kMaxReportBytes = std::uintmax_t{256} << 20;
constexpr std::string_view kSchemaPrefix = "bubblescope.analyze/";

void OptionalBytes(std::string_view key, int64_t bytes, JsonWriter& json) {
  json.Key(key);
  if (bytes < 0) {
    json.Null();
  } else {
    json.Int(bytes);
  }
}

// Reading errors carry no position of their own: the reader adds the file and offset.
struct ReadError {
  std::string what;
};

// Reads the members of one model object; `what` says what went wrong, empty on success.
class ModelReader {
 public:
  std::string what;

  template <typename T>
  bool Get(simdjson::simdjson_result<T> value, T* out, std::string_view key) {
    if (std::move(value).get(*out) != simdjson::SUCCESS) {
      if (what.empty()) what = absl::StrCat("'", std::string(key), "' is missing or mistyped");
      return false;
    }
    return true;
  }

  // An integer, or -1 for null.
  bool Bytes(od::value value, int64_t* out, std::string_view key) {
    bool is_null = false;
    if (value.is_null().get(is_null) == simdjson::SUCCESS && is_null) {
      *out = -1;
      return true;
    }
    return Get(value.get_int64(), out, key);
  }

  bool Stage(od::object object, whatif::StageModel* stage) {
    for (auto field : object) {
      std::string_view key;
      if (!Get(field.unescaped_key(), &key, "stage key")) return false;
      od::value value = field.value();
      int64_t number = 0;
      bool ok = true;
      if (key == "rank") {
        ok = Get(value.get_int64(), &number, key);
        stage->rank = static_cast<int32_t>(number);
      } else if (key == "forward_ns") {
        ok = Get(value.get_double(), &stage->forward_ns, key);
      } else if (key == "backward_ns") {
        ok = Get(value.get_double(), &stage->backward_ns, key);
      } else if (key == "weight_grad_ns") {
        ok = Get(value.get_double(), &stage->weight_grad_ns, key);
      } else if (key == "memory_floor_bytes") {
        ok = Bytes(value, &stage->memory_floor_bytes, key);
      } else if (key == "memory_peak_bytes") {
        ok = Bytes(value, &stage->memory_peak_bytes, key);
      } else if (key == "memory_headroom_bytes") {
        ok = Bytes(value, &stage->memory_headroom_bytes, key);
      } else if (key == "layers") {
        ok = Get(value.get_int64(), &number, key) && number >= 0 && number <= INT32_MAX;
        stage->layers = static_cast<int32_t>(number);
      }
      if (!ok) return false;
    }
    return true;
  }

  bool Link(od::object object, whatif::LinkCost* link) {
    for (auto field : object) {
      std::string_view key;
      if (!Get(field.unescaped_key(), &key, "link key")) return false;
      int64_t number = 0;
      if (key == "src_stage" || key == "dst_stage" || key == "transfer_ns") {
        if (!Get(field.value().get_int64(), &number, key)) return false;
        if (number < INT32_MIN || number > INT32_MAX) number = -1;  // ValidateModel refuses it
        if (key == "src_stage") link->src_stage = static_cast<int32_t>(number);
        if (key == "dst_stage") link->dst_stage = static_cast<int32_t>(number);
        if (key == "transfer_ns") link->transfer_ns = number;
      }
    }
    return true;
  }

  bool Model(od::object object, whatif::Model* model) {
    for (auto field : object) {
      std::string_view key;
      if (!Get(field.unescaped_key(), &key, "model key")) return false;
      od::value value = field.value();
      int64_t number = 0;
      bool ok = true;
      if (key == "schedule") {
        std::string_view name;
        ok = Get(value.get_string(), &name, key);
        bool known = false;
        for (sim::Schedule schedule : sim::kSchedules) {
          if (sim::ScheduleName(schedule) == name) {
            model->schedule = schedule;
            known = true;
          }
        }
        if (ok && !known) {
          what = absl::StrCat("unknown schedule '", std::string(name), "'");
          return false;
        }
      } else if (key == "p" || key == "m" || key == "v") {
        ok = Get(value.get_int64(), &number, key);
        if (number < 0 || number > INT32_MAX) number = 0;  // ValidateModel refuses it
        int32_t& target = key == "p" ? model->p : (key == "m" ? model->m : model->v);
        target = static_cast<int32_t>(number);
      } else if (key == "separate_weight_grad") {
        ok = Get(value.get_bool(), &model->separate_weight_grad, key);
      } else if (key == "multi_chunk_zero_bubble") {
        ok = Get(value.get_bool(), &model->multi_chunk_zero_bubble, key);
      } else if (key == "measured_iteration_ns") {
        ok = Get(value.get_int64(), &model->measured_iteration_ns, key);
      } else if (key == "measured_bubble_fraction") {
        ok = Get(value.get_double(), &model->measured_bubble_fraction, key);
      } else if (key == "stages") {
        od::array stages;
        ok = Get(value.get_array(), &stages, key);
        for (auto element : stages) {
          od::object stage_object;
          whatif::StageModel stage;
          if (!Get(element.get_object(), &stage_object, "stage") || !Stage(stage_object, &stage)) {
            return false;
          }
          model->stages.push_back(stage);
          if (model->stages.size() > 65536) {
            what = "more stages than any pipeline has";
            return false;
          }
        }
      } else if (key == "links") {
        od::array links;
        ok = Get(value.get_array(), &links, key);
        for (auto element : links) {
          od::object link_object;
          whatif::LinkCost link;
          if (!Get(element.get_object(), &link_object, "link") || !Link(link_object, &link)) {
            return false;
          }
          model->links.push_back(link);
          if (model->links.size() > 262144) {
            what = "more links than any pipeline has";
            return false;
          }
        }
      }
      if (!ok) return false;
    }
    return true;
  }
};

// A list of small integers (ranks, layer counts).
bool IntList(od::value value, std::vector<int32_t>* out, ModelReader& reader, std::string_view key) {
  od::array array;
  if (!reader.Get(value.get_array(), &array, key)) return false;
  for (auto element : array) {
    int64_t number = 0;
    if (!reader.Get(element.get_int64(), &number, key)) return false;
    if (number < INT32_MIN || number > INT32_MAX || out->size() >= 65536) {
      reader.what = absl::StrCat("'", std::string(key), "' holds an out-of-range entry");
      return false;
    }
    out->push_back(static_cast<int32_t>(number));
  }
  return true;
}

// One pipeline object of the report.
bool ReadPipeline(od::object object, ReportedPipeline* pipeline, ModelReader& reader) {
  std::string problem = "the report holds no what-if model for this pipeline";
  bool has_model = false;
  whatif::Model model;
  for (auto field : object) {
    std::string_view key;
    if (!reader.Get(field.unescaped_key(), &key, "pipeline key")) return false;
    od::value value = field.value();
    if (key == "pipeline") {
      int64_t index = 0;
      if (!reader.Get(value.get_int64(), &index, key)) return false;
      pipeline->pipeline = static_cast<int32_t>(std::clamp<int64_t>(index, 0, INT32_MAX));
    } else if (key == "ranks") {
      if (!IntList(value, &pipeline->ranks, reader, key)) return false;
    } else if (key == "whatif_model_problem") {
      std::string_view text;
      if (value.get_string().get(text) == simdjson::SUCCESS) problem = std::string(text);
    } else if (key == "whatif_model") {
      od::object model_object;
      if (value.get_object().get(model_object) != simdjson::SUCCESS) continue;  // null
      if (!reader.Model(model_object, &model)) return false;
      has_model = true;
    } else if (key == "rebalance") {
      od::object rebalance;
      if (value.get_object().get(rebalance) != simdjson::SUCCESS) continue;  // null
      for (auto member : rebalance) {
        std::string_view name;
        if (!reader.Get(member.unescaped_key(), &name, "rebalance key")) return false;
        if (name == "layers_after" &&
            !IntList(member.value(), &pipeline->rebalance_layers_after, reader, name)) {
          return false;
        }
      }
    }
  }
  if (!has_model) {
    pipeline->model = absl::FailedPreconditionError(problem);
  } else if (absl::Status valid = whatif::ValidateModel(model); !valid.ok()) {
    pipeline->model = absl::FailedPreconditionError(
        absl::StrCat("the report's model is not usable: ", valid.message()));
  } else {
    pipeline->model = std::move(model);
  }
  return true;
}

// Major version of "bubblescope.analyze/MAJOR[.MINOR]"; -1 when it is not of that form.
int64_t SchemaMajor(std::string_view schema) {
  if (schema.substr(0, kSchemaPrefix.size()) != kSchemaPrefix) return -1;
  std::string_view version = schema.substr(kSchemaPrefix.size());
  int64_t major = -1;
  const auto [end, error] = std::from_chars(version.data(), version.data() + version.size(), major);
  if (error != std::errc() || end == version.data()) return -1;
  const std::string_view rest(end, static_cast<size_t>(version.data() + version.size() - end));
  if (!rest.empty() && rest.front() != '.') return -1;
  return major;
}

}  // namespace

void WriteWhatIfModelMembers(const job::Pipeline& pipeline, JsonWriter& json) {
  json.Key("whatif_model");
  if (!pipeline.model.has_value()) {
    json.Null();
    json.StringMember("whatif_model_problem", pipeline.model_problem);
    return;
  }
  const whatif::Model& model = *pipeline.model;
  json.BeginObject();
  json.StringMember("schedule", sim::ScheduleName(model.schedule));
  json.IntMember("p", model.p);
  json.IntMember("m", model.m);
  json.IntMember("v", model.v);
  json.BoolMember("separate_weight_grad", model.separate_weight_grad);
  json.BoolMember("multi_chunk_zero_bubble", model.multi_chunk_zero_bubble);
  json.IntMember("measured_iteration_ns", model.measured_iteration_ns);
  json.DoubleMember("measured_bubble_fraction", model.measured_bubble_fraction);
  json.Key("stages");
  json.BeginArray();
  for (const whatif::StageModel& stage : model.stages) {
    json.BeginObject();
    json.IntMember("rank", stage.rank);
    json.DoubleMember("forward_ns", stage.forward_ns);
    json.DoubleMember("backward_ns", stage.backward_ns);
    json.DoubleMember("weight_grad_ns", stage.weight_grad_ns);
    OptionalBytes("memory_floor_bytes", stage.memory_floor_bytes, json);
    OptionalBytes("memory_peak_bytes", stage.memory_peak_bytes, json);
    OptionalBytes("memory_headroom_bytes", stage.memory_headroom_bytes, json);
    json.IntMember("layers", stage.layers);
    json.EndObject();
  }
  json.EndArray();
  json.Key("links");
  json.BeginArray();
  for (const whatif::LinkCost& link : model.links) {
    json.BeginObject();
    json.IntMember("src_stage", link.src_stage);
    json.IntMember("dst_stage", link.dst_stage);
    json.IntMember("transfer_ns", link.transfer_ns);
    json.EndObject();
  }
  json.EndArray();
  json.EndObject();
  json.Key("whatif_model_problem");
  json.Null();
}

ReportedPipeline ReportedPipelineOf(int32_t index, const job::Pipeline& pipeline) {
  ReportedPipeline out;
  out.pipeline = index;
  out.ranks = pipeline.crossrank.pipeline.stage_order();
  if (pipeline.model.has_value()) {
    out.model = *pipeline.model;
  } else {
    out.model = absl::FailedPreconditionError(
        pipeline.model_problem.empty() ? "the pipeline's shape is unknown" : pipeline.model_problem);
  }
  if (pipeline.rebalance.has_value() && pipeline.rebalance->result.ok() &&
      pipeline.rebalance->result->suggested) {
    out.rebalance_layers_after = pipeline.rebalance->result->layers_after;
  }
  return out;
}

bool IsAnalyzeReport(const std::string& path) {
  std::error_code error;
  if (!std::filesystem::is_regular_file(path, error)) return false;
  std::ifstream file(path, std::ios::binary);
  std::string head(512, '\0');
  file.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<size_t>(file.gcount()));
  const size_t brace = head.find_first_not_of(" \t\r\n");
  if (brace == std::string::npos || head[brace] != '{') return false;
  const size_t schema = head.find("\"schema\"");
  return schema != std::string::npos &&
         head.find(absl::StrCat("\"", std::string(kSchemaPrefix)), schema) != std::string::npos;
}

absl::StatusOr<std::vector<ReportedPipeline>> ReadReportModels(const std::string& path) {
  std::error_code size_error;
  const std::uintmax_t size = std::filesystem::file_size(path, size_error);
  if (size_error) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": cannot read: ", size_error.message()));
  }
  if (size > kMaxReportBytes) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": ", size, " bytes, more than any "
                                                   "analyze report holds; not read"));
  }
  simdjson::padded_string text;
  if (simdjson::padded_string::load(path).get(text) != simdjson::SUCCESS) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": cannot read"));
  }
  return ParseReportModels(std::string_view(text.data(), text.size()), path);
}

absl::StatusOr<std::vector<ReportedPipeline>> ParseReportModels(std::string_view json,
                                                               const std::string& path) {
  const simdjson::padded_string text(json);
  od::parser parser;
  od::document document;
  ModelReader reader;
  std::vector<ReportedPipeline> pipelines;
  int64_t major = -1;
  auto fail = [&](std::string what) -> absl::Status {
    const char* location = nullptr;
    size_t offset = 0;
    if (document.current_location().get(location) == simdjson::SUCCESS && location != nullptr) {
      offset = static_cast<size_t>(location - text.data());
    }
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": byte ", offset, ": not a readable analyze report: ", what));
  };
  // Validate the whole document first: the on-demand walk below then meets no broken JSON,
  // and a cut or damaged file gets its own message.
  {
    simdjson::dom::parser validator;
    simdjson::dom::element root;
    if (const simdjson::error_code error = validator.parse(text).get(root);
        error != simdjson::SUCCESS) {
      if (error == simdjson::INCOMPLETE_ARRAY_OR_OBJECT || error == simdjson::UNCLOSED_STRING) {
        return absl::InvalidArgumentError(absl::StrCat(
            path, ": byte ", text.size(), ": not a readable analyze report: it ends early (cut "
            "short?)"));
      }
      return absl::InvalidArgumentError(absl::StrCat(
          path, ": not a readable analyze report: not valid JSON (", simdjson::error_message(error),
          ")"));
    }
  }
  if (parser.iterate(text).get(document) != simdjson::SUCCESS) return fail("not JSON");
  od::object top;
  if (document.get_object().get(top) != simdjson::SUCCESS) return fail("not a JSON object");
  for (auto field : top) {
    std::string_view key;
    if (field.unescaped_key().get(key) != simdjson::SUCCESS) return fail("broken JSON");
    if (key == "schema") {
      std::string_view schema;
      if (field.value().get_string().get(schema) != simdjson::SUCCESS) {
        return fail("'schema' is not a string");
      }
      major = SchemaMajor(schema);
      if (major != SchemaMajor(kAnalyzeSchema)) {
        return absl::InvalidArgumentError(absl::StrCat(
            path, ": schema '", std::string(schema), "' is not one this bubblescope reads (",
            std::string(kAnalyzeSchema), " and its minor versions)"));
      }
    } else if (key == "pipelines") {
      od::array array;
      if (field.value().get_array().get(array) != simdjson::SUCCESS) {
        return fail("'pipelines' is not an array");
      }
      for (auto element : array) {
        od::object object;
        ReportedPipeline pipeline;
        if (element.get_object().get(object) != simdjson::SUCCESS ||
            !ReadPipeline(object, &pipeline, reader)) {
          return fail(reader.what.empty() ? "a pipeline is not an object" : reader.what);
        }
        pipelines.push_back(std::move(pipeline));
      }
    }
  }
  if (major < 0) return fail("no 'schema' member");
  return pipelines;
}

}  // namespace bubblescope
