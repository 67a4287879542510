#include "compare/report_reader.h"

#include <algorithm>
#include <limits>
#include <new>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/out_of_memory.h"
#include "common/status_macros.h"
#include "compare/figure_range.h"
#include "compare/report_schema.h"
#include "simdjson.h"
#include "text/json_tokens.h"
#include "text/one_line.h"
#include "text/utf8.h"

namespace bubblescope::compare {
namespace {

namespace ondemand = simdjson::ondemand;

std::string Indexed(std::string_view array, size_t index) {
  return absl::StrCat(std::string(array), "[", index, "]");
}

// The document's first token: its first byte that is not JSON white space (its end when there
// is none), where errors about the document as a whole point.
const char* FirstToken(std::string_view text) {
  const size_t first = text.find_first_not_of(" \t\n\r");
  return text.data() + (first == std::string_view::npos ? text.size() : first);
}

std::string_view TypeName(std::string_view token) {
  if (token.empty()) return "nothing";
  switch (token[0]) {
    case '"':
      return "a string";
    case '{':
      return "an object";
    case '[':
      return "an array";
    case 't':
    case 'f':
      return "a boolean";
    case 'n':
      return "null";
    case '-':
    case '0':
    case '1':
    case '2':
    case '3':
    case '4':
    case '5':
    case '6':
    case '7':
    case '8':
    case '9':
      return "a number";
    default:
      return "not a JSON value";  // NaN, Infinity, a bare word
  }
}

// A value's own text as written, for messages: a number printed from its double would lose
// the digits that put it out of range (1.00000001 read as "1").
std::string TokenText(std::string_view token) {
  constexpr size_t kShown = 40;
  while (!token.empty() && (token.back() == ' ' || token.back() == '\t' || token.back() == '\n' ||
                            token.back() == '\r')) {
    token.remove_suffix(1);
  }
  return token.size() <= kShown ? std::string(token) : std::string(token.substr(0, kShown)) + "...";
}

// The report's text past a UTF-8 byte-order mark (an editor's save), padding kept.
simdjson::padded_string_view PastByteOrderMark(simdjson::padded_string_view json) {
  constexpr std::string_view kMark = text::kUtf8ByteOrderMark;
  if (!std::string_view(json).starts_with(kMark)) return json;
  return simdjson::padded_string_view(json.data() + kMark.size(), json.length() - kMark.size(),
                                      json.capacity() - kMark.size());
}

// One pass over the report's members. Every accessor names the member it reads, so a type error
// says which member and where.
class ReportWalker {
 public:
  ReportWalker(std::string_view source, simdjson::padded_string_view json)
      : source_(source),
        json_(PastByteOrderMark(json)),
        bias_(static_cast<int64_t>(json.length() - json_.length())) {}

  absl::StatusOr<RunFigures> Read() {
    RunFigures run;
    run.source = std::string(source_);
    if (auto error = parser_.iterate(json_).get(document_)) return Located(error);
    iterated_ = true;
    const char* start = FirstToken(std::string_view(json_));
    // First the version, wherever it sits, so nothing is read under a major version this reader
    // does not know; the pass also finds any syntax error before a figure is taken.
    bool saw_schema = false;
    absl::Status walked = Root([&](std::string_view key, ondemand::value& value) {
      if (key != "schema") return absl::OkStatus();
      saw_schema = true;
      return ReadSchema(value, &run);
    });
    BUBBLESCOPE_RETURN_IF_ERROR(walked);
    if (const char* next = nullptr; !document_.current_location().get(next)) {
      return Error(next, "more JSON after the report's closing brace");
    }
    if (!saw_schema) return Error(start, "no \"schema\" member: not a bubblescope analyze report");

    document_.rewind();
    bool saw_pipelines = false;
    std::vector<FindingFigures> findings;
    walked = Root([&](std::string_view key, ondemand::value& value) {
      if (key == "tool") {
        return Object(value, key, [&](std::string_view tool_key, ondemand::value& member) {
          return tool_key == "version" ? String(member, "tool.version", &run.tool_version)
                                       : absl::OkStatus();
        });
      }
      if (key == "pipelines") {
        saw_pipelines = true;
        return Array(value, key, [&](ondemand::value& element) {
          run.pipelines.emplace_back();
          return Pipeline(element, Indexed("pipelines", run.pipelines.size() - 1),
                          &run.pipelines.back());
        });
      }
      if (key == "findings") {
        return Array(value, key, [&](ondemand::value& element) {
          findings.emplace_back();
          return Declared(schema::kFindingFields, element, "findings[]",
                          Indexed("findings", findings.size() - 1), &findings.back());
        });
      }
      return absl::OkStatus();
    });
    BUBBLESCOPE_RETURN_IF_ERROR(walked);
    if (!saw_pipelines) return Error(start, "no \"pipelines\" member");
    schema::AttachFindings(std::move(findings), &run);
    return run;
  }

 private:
  // One line whatever the report held: `what` may quote its strings (a schema, a schedule name),
  // which JSON escapes can fill with line breaks.
  absl::Status Error(const char* at, std::string_view what) const {
    const int64_t offset = bias_ + (at == nullptr ? static_cast<int64_t>(json_.size())
                                                  : static_cast<int64_t>(at - json_.data()));
    return absl::InvalidArgumentError(text::OneLine(
        absl::StrCat(std::string(source_), ": byte ", offset, ": ", std::string(what))));
  }

  // A simdjson error at the parser's current position; the end of the text when there is none
  // (before a document exists, e.g. an empty text, simdjson has no position to give).
  absl::Status Located(simdjson::error_code error) {
    const char* location = nullptr;
    if (error == simdjson::UTF8_ERROR) {
      bool cut = false;
      const size_t bad = kineto::FirstInvalidUtf8(std::string_view(json_), &cut);
      if (bad != std::string_view::npos) location = json_.data() + bad;
    } else if (error == simdjson::UNESCAPED_CHARS) {
      // simdjson's position is past the character; the character's own byte is the one to name.
      const size_t control = kineto::FirstUnescapedControl(std::string_view(json_));
      if (control != std::string_view::npos) location = json_.data() + control;
    } else if (error == simdjson::INCOMPLETE_ARRAY_OR_OBJECT || error == simdjson::EMPTY ||
               !iterated_ || document_.current_location().get(location)) {
      // A document cut short ends where the text does (simdjson's position is its start).
      location = nullptr;
    }
    // The parser's index could not be allocated: memory, not the report, is at fault.
    if (error == simdjson::MEMALLOC) return OutOfMemoryReading(source_);
    std::string what =
        error == simdjson::UTF8_ERROR ? "invalid UTF-8"
        : error == simdjson::UNESCAPED_CHARS
            ? "raw control character inside a string (JSON writes it escaped, as \\u00XX)"
        : error == simdjson::INCOMPLETE_ARRAY_OR_OBJECT || error == simdjson::EMPTY
            ? "the document ends early (cut short?)"
            : absl::StrCat("malformed JSON (", simdjson::error_message(error), ")");
    return Error(location, what);
  }

  absl::Status WrongType(ondemand::value& value, std::string_view key, std::string_view expected) {
    const std::string_view token = value.raw_json_token();
    const std::string_view type = TypeName(token);
    // What is not JSON at all is quoted (NaN read "is a number, expected a number").
    const std::string what = type == "not a JSON value"
                                 ? absl::StrCat(TokenText(token), ", not a JSON value")
                                 : std::string(type);
    return Error(token.data(), absl::StrCat("\"", std::string(key), "\" is ", what, ", expected ",
                                            std::string(expected)));
  }

  static bool IsNull(ondemand::value& value) {
    const std::string_view token = value.raw_json_token();
    return !token.empty() && token[0] == 'n';
  }

  template <typename Visit>
  absl::Status Fields(ondemand::object& object, Visit&& visit) {
    for (auto field : object) {
      ondemand::raw_json_string raw_key;
      if (auto error = field.key().get(raw_key)) return Located(error);
      ondemand::value value;
      if (auto error = field.value().get(value)) return Located(error);
      // Keys are compared as written: the report's own keys hold no escapes.
      if (absl::Status status = visit(kineto::KeyText(raw_key.raw()), value); !status.ok()) {
        return status;
      }
    }
    return absl::OkStatus();
  }

  template <typename Visit>
  absl::Status Root(Visit&& visit) {
    ondemand::object root;
    if (auto error = document_.get_object().get(root)) {
      // A document cut short or malformed is said as such where it is; only a whole value of
      // another type is "not a JSON object".
      if (error != simdjson::INCORRECT_TYPE) return Located(error);
      return Error(FirstToken(std::string_view(json_)), "not a JSON object");
    }
    return Fields(root, std::forward<Visit>(visit));
  }

  template <typename Visit>
  absl::Status Object(ondemand::value& value, std::string_view key, Visit&& visit) {
    ondemand::object object;
    if (value.get_object().get(object)) return WrongType(value, key, "an object");
    return Fields(object, std::forward<Visit>(visit));
  }

  template <typename Visit>
  absl::Status Array(ondemand::value& value, std::string_view key, Visit&& visit) {
    ondemand::array array;
    if (value.get_array().get(array)) return WrongType(value, key, "an array");
    for (auto element_result : array) {
      ondemand::value element;
      if (auto error = element_result.get(element)) return Located(error);
      BUBBLESCOPE_RETURN_IF_ERROR(visit(element));
    }
    return absl::OkStatus();
  }

  absl::Status Number(ondemand::value& value, std::string_view key, Figure figure, double* out) {
    if (value.get_double().get(*out)) return WrongType(value, key, "a number");
    return Ranged(value, key, figure, *out);
  }
  absl::Status OptionalNumber(ondemand::value& value, std::string_view key, Figure figure,
                              std::optional<double>* out) {
    if (IsNull(value)) {
      out->reset();
      return absl::OkStatus();
    }
    double number = 0.0;
    if (value.get_double().get(number)) return WrongType(value, key, "a number or null");
    *out = number;
    return Ranged(value, key, figure, number);
  }
  absl::Status Ranged(ondemand::value& value, std::string_view key, Figure figure, double number) {
    if (FigureInRange(number, figure)) return absl::OkStatus();
    return Error(value.raw_json_token().data(),
                 absl::StrCat("\"", std::string(key), "\" is ", TokenText(value.raw_json_token()),
                              ", outside ", std::string(FigureRangeText(figure))));
  }
  template <typename Int>
  absl::Status Integer(ondemand::value& value, std::string_view key, Int* out) {
    int64_t number = 0;
    if (value.get_int64().get(number) || number < std::numeric_limits<Int>::min() ||
        number > std::numeric_limits<Int>::max()) {
      return WrongType(value, key, "a whole number in range");
    }
    *out = static_cast<Int>(number);
    return absl::OkStatus();
  }
  absl::Status OptionalInteger(ondemand::value& value, std::string_view key,
                               std::optional<int32_t>* out) {
    if (IsNull(value)) {
      out->reset();
      return absl::OkStatus();
    }
    int32_t number = 0;
    BUBBLESCOPE_RETURN_IF_ERROR(Integer(value, key, &number));
    *out = number;
    return absl::OkStatus();
  }
  absl::Status String(ondemand::value& value, std::string_view key, std::string* out) {
    std::string_view text;
    if (value.get_string().get(text)) return WrongType(value, key, "a string");
    *out = std::string(text);
    return absl::OkStatus();
  }
  absl::Status OptionalString(ondemand::value& value, std::string_view key,
                              std::optional<std::string>* out) {
    if (IsNull(value)) {
      out->reset();
      return absl::OkStatus();
    }
    std::string text;
    BUBBLESCOPE_RETURN_IF_ERROR(String(value, key, &text));
    *out = std::move(text);
    return absl::OkStatus();
  }
  absl::Status Bool(ondemand::value& value, std::string_view key, bool* out) {
    if (value.get_bool().get(*out)) return WrongType(value, key, "true or false");
    return absl::OkStatus();
  }
  absl::Status Ranks(ondemand::value& value, std::string_view key, std::vector<int32_t>* out) {
    return Array(value, key, [&](ondemand::value& element) {
      out->push_back(0);
      return Integer(element, key, &out->back());
    });
  }

  absl::Status ReadSchema(ondemand::value& value, RunFigures* run) {
    const char* at = value.raw_json_token().data();
    std::string schema;
    BUBBLESCOPE_RETURN_IF_ERROR(String(value, "schema", &schema));
    absl::StatusOr<SchemaVersion> version = ParseAnalyzeSchema(schema);
    if (!version.ok()) return Error(at, std::string(version.status().message()));
    if (version->major != kReadableAnalyzeMajor) {
      return Error(
          at, absl::StrCat("schema \"", schema, "\" has major version ", version->major,
                           "; this bubblescope reads bubblescope.analyze/", kReadableAnalyzeMajor,
                           ".x (a report of another major "
                           "version needs the bubblescope that wrote it)"));
    }
    run->schema_major = version->major;
    run->schema_minor = version->minor;
    return absl::OkStatus();
  }

  // The members of one object that `fields` declare (compare/report_schema.h), read into
  // `figures`. `object` names the object in a type error ("iterations[]"), `where` in the error
  // for a member analyze always writes and the object lacks ("pipelines[0]"); members no row
  // declares (a later minor version's) are passed over. `seen`, when given, gets bit i for
  // fields[i] found.
  template <typename Source, typename Figures>
  absl::Status Declared(std::span<const schema::Field<Source, Figures>> fields,
                        ondemand::value& value, std::string_view object, std::string_view where,
                        Figures* figures, uint64_t* seen = nullptr) {
    const char* at = value.raw_json_token().data();
    uint64_t found = 0;
    absl::Status read = Object(value, object, [&](std::string_view key, ondemand::value& member) {
      for (size_t i = 0; i < fields.size(); ++i) {
        if (fields[i].key != key) continue;
        found |= uint64_t{1} << i;
        return Member(fields[i], member, where, figures);
      }
      return absl::OkStatus();
    });
    BUBBLESCOPE_RETURN_IF_ERROR(read);
    for (size_t i = 0; i < fields.size(); ++i) {
      if (!fields[i].required || (found & (uint64_t{1} << i)) != 0) continue;
      // Read as 0, a pipeline without its bubble would pass any gate.
      return Error(at, absl::StrCat(std::string(where), " has no \"", std::string(fields[i].key),
                                    "\" (analyze always writes it; a missing figure is never "
                                    "read as 0)"));
    }
    if (seen != nullptr) *seen = found;
    return absl::OkStatus();
  }

  // An array of objects that `fields` declare, appended to `out`.
  template <typename Source, typename Figures>
  absl::Status Elements(std::span<const schema::Field<Source, Figures>> fields,
                        ondemand::value& value, std::string_view key, std::string_view where,
                        std::vector<Figures>* out) {
    const std::string element = absl::StrCat(std::string(key), "[]");
    return Array(value, key, [&](ondemand::value& item) {
      out->emplace_back();
      return Declared(fields, item, element,
                      absl::StrCat(std::string(where), ".", Indexed(key, out->size() - 1)),
                      &out->back());
    });
  }

  template <typename Source, typename Figures>
  absl::Status Member(const schema::Field<Source, Figures>& field, ondemand::value& value,
                      std::string_view where, Figures* figures) {
    if (field.nest != schema::Nest::kNone) {
      if (field.nullable && IsNull(value)) return absl::OkStatus();
      return Nested(field.nest, field.named(), value, where, figures);
    }
    if (field.slot == nullptr) return absl::OkStatus();  // written, not compared
    return Leaf(field.unit, field.nullable, field.named(), value, field.slot(*figures));
  }

  // The objects and arrays nested in a pipeline and in its what-if model; the other tables nest
  // nothing.
  template <typename Figures>
  absl::Status Nested(schema::Nest, std::string_view, ondemand::value&, std::string_view,
                      Figures*) {
    return absl::OkStatus();
  }
  absl::Status Nested(schema::Nest nest, std::string_view key, ondemand::value& value,
                      std::string_view where, PipelineFigures* pipeline) {
    switch (nest) {
      case schema::Nest::kLatency:
        return Declared(schema::kLatencyFields, value, key,
                        absl::StrCat(std::string(where), ".", std::string(key)), pipeline);
      case schema::Nest::kIterations:
        return Elements(schema::kIterationFields, value, key, where, &pipeline->iterations);
      case schema::Nest::kRankStats:
        return Elements(schema::kRankStatFields, value, key, where, &pipeline->stage_figures);
      case schema::Nest::kLinks:
        return Elements(schema::kLinkFields, value, key, where, &pipeline->links);
      case schema::Nest::kRebalance:
        return Declared(schema::kRebalanceFields, value, key, where, pipeline);
      case schema::Nest::kWhatIfModel:
        return WhatIfModel(value, key, &pipeline->whatif_model.emplace());
      default:
        return absl::OkStatus();
    }
  }
  absl::Status Nested(schema::Nest nest, std::string_view key, ondemand::value& value,
                      std::string_view where, whatif::Model* model) {
    switch (nest) {
      case schema::Nest::kWhatIfStages:
        return Elements(schema::kWhatIfStageFields, value, key, where, &model->stages);
      case schema::Nest::kWhatIfLinks:
        return Elements(schema::kWhatIfLinkFields, value, key, where, &model->links);
      default:
        return absl::OkStatus();
    }
  }

  // One figure into the RunFigures member its row names; `key` names it in messages.
  absl::Status Leaf(schema::Unit unit, bool nullable, std::string_view key, ondemand::value& value,
                    const schema::Slot& slot) {
    return std::visit(
        [&](auto out) -> absl::Status {
          using Held = decltype(out);
          if constexpr (std::is_same_v<Held, std::monostate>) {
            return absl::OkStatus();
          } else {
            using T = std::remove_pointer_t<Held>;
            if constexpr (std::is_same_v<T, double>) {
              // null: no complete iteration (no_complete_iteration says why); the figure stays 0.
              if (nullable && IsNull(value)) return absl::OkStatus();
              return Number(value, key, schema::RangeOf(unit), out);
            } else if constexpr (std::is_same_v<T, std::optional<double>>) {
              return OptionalNumber(value, key, schema::RangeOf(unit), out);
            } else if constexpr (std::is_same_v<T, int32_t>) {
              return Integer(value, key, out);
            } else if constexpr (std::is_same_v<T, std::optional<int32_t>>) {
              return OptionalInteger(value, key, out);
            } else if constexpr (std::is_same_v<T, int64_t>) {
              if (nullable && IsNull(value)) {
                *out = -1;  // a byte count the report leaves null: unknown
                return absl::OkStatus();
              }
              absl::Status status = Integer(value, key, out);
              if (status.ok() && unit == schema::Unit::kCount && *out < 0) {
                return WrongType(value, key, "a whole number not below 0");
              }
              return status;
            } else if constexpr (std::is_same_v<T, bool>) {
              return Bool(value, key, out);
            } else if constexpr (std::is_same_v<T, std::string>) {
              if (!nullable) return String(value, key, out);
              std::optional<std::string> text;
              absl::Status status = OptionalString(value, key, &text);
              *out = text.value_or("");
              return status;
            } else if constexpr (std::is_same_v<T, std::optional<std::string>>) {
              return OptionalString(value, key, out);
            } else if constexpr (std::is_same_v<T, std::vector<int32_t>>) {
              return Ranks(value, key, out);
            } else {
              static_assert(std::is_same_v<T, sim::Schedule>);
              return ScheduleNamed(value, key, out);
            }
          }
        },
        slot);
  }

  absl::Status ScheduleNamed(ondemand::value& value, std::string_view key, sim::Schedule* out) {
    const char* name_at = value.raw_json_token().data();
    std::string name;
    BUBBLESCOPE_RETURN_IF_ERROR(String(value, key, &name));
    for (sim::Schedule schedule : sim::kSchedules) {
      if (sim::ScheduleName(schedule) == name) {
        *out = schedule;
        return absl::OkStatus();
      }
    }
    return Error(name_at, absl::StrCat("\"", std::string(key), "\" is \"", name,
                                       "\", not a schedule this bubblescope simulates"));
  }

  absl::Status Pipeline(ondemand::value& value, const std::string& where,
                        PipelineFigures* pipeline) {
    uint64_t seen = 0;
    absl::Status read =
        Declared(schema::kPipelineFields, value, "pipelines[]", where, pipeline, &seen);
    // A report of a bubblescope before the member: its count of complete iterations says it.
    const auto counted = uint64_t{1}
                         << static_cast<int>(schema::PipelineMember::kCompleteIterations);
    if (read.ok() && (seen & counted) != 0) schema::NoteNoCompleteIteration(pipeline);
    return read;
  }

  // `whatif_model` (report/whatif_model_json.h writes it): read, then checked as a model a
  // prediction can run on, so a damaged one is refused where it starts.
  absl::Status WhatIfModel(ondemand::value& value, std::string_view key, whatif::Model* model) {
    const char* at = value.raw_json_token().data();
    BUBBLESCOPE_RETURN_IF_ERROR(Declared(schema::kWhatIfModelFields, value, key, key, model));
    if (absl::Status valid = whatif::ValidateModel(*model); !valid.ok()) {
      return Error(at, absl::StrCat("\"whatif_model\" is not a usable model: ",
                                    std::string(valid.message())));
    }
    return absl::OkStatus();
  }

  std::string_view source_;
  simdjson::padded_string_view json_;
  int64_t bias_ = 0;  // bytes of the file before json_ (a byte-order mark), for offsets
  ondemand::parser parser_;
  ondemand::document document_;
  bool iterated_ = false;  // document_ exists: current_location() may be asked
};

}  // namespace

absl::StatusOr<RunFigures> ReadPaddedAnalyzeReport(std::string_view source,
                                                   simdjson::padded_string_view json) {
  // Memory can run out on a large report (its figures, the parser's index): that is said as
  // such, never as damage, and never escapes as an exception.
  try {
    return ReportWalker(source, json).Read();
  } catch (const std::bad_alloc&) {
    return OutOfMemoryReading(source);
  }
}

absl::StatusOr<RunFigures> ReadAnalyzeReport(std::string_view source, std::string_view json) {
  const simdjson::padded_string padded(json);
  // simdjson reports a failed allocation as a null buffer.
  if (padded.data() == nullptr && !json.empty()) return OutOfMemoryReading(source);
  return ReadPaddedAnalyzeReport(source, padded);
}

}  // namespace bubblescope::compare
