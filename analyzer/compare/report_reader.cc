#include "compare/report_reader.h"

#include <algorithm>
#include <limits>
#include <new>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/out_of_memory.h"
#include "common/status_macros.h"
#include "compare/figure_range.h"
#include "readers/json_tokens.h"
#include "simdjson.h"
#include "text/one_line.h"
#include "text/utf8.h"

namespace bubblescope::compare {
namespace {

namespace ondemand = simdjson::ondemand;

// The members every report analyze writes holds in these objects (docs/diff-and-gate.md,
// "Figures read from a report"). One missing is a damaged or hand-made report: read as 0, a
// pipeline without its bubble would pass any gate, so its absence is an error naming it.
constexpr std::string_view kPipelineMembers[] = {"bubble_fraction", "latency_us", "ranks"};
constexpr std::string_view kLatencyMembers[] = {"p50", "p90", "max"};
constexpr std::string_view kIterationMembers[] = {"step", "complete", "window_us",
                                                  "bubble_fraction"};
constexpr std::string_view kStageMembers[] = {"rank", "bubble_fraction"};
constexpr std::string_view kLinkMembers[] = {"src", "dst", "wait_us"};
constexpr std::string_view kFindingMembers[] = {"kind", "ranks", "cost_us"};

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
    case '"': return "a string";
    case '{': return "an object";
    case '[': return "an array";
    case 't':
    case 'f': return "a boolean";
    case 'n': return "null";
    case '-':
    case '0': case '1': case '2': case '3': case '4':
    case '5': case '6': case '7': case '8': case '9': return "a number";
    default: return "not a JSON value";  // NaN, Infinity, a bare word
  }
}

// A value's own text as written, for messages: a number printed from its double would lose
// the digits that put it out of range (1.00000001 read as "1").
std::string TokenText(std::string_view token) {
  constexpr size_t kShown = 40;
  while (!token.empty() && (token.back() == ' ' || token.back() == '\t' ||
                            token.back() == '\n' || token.back() == '\r')) {
    token.remove_suffix(1);
  }
  return token.size() <= kShown ? std::string(token)
                                : std::string(token.substr(0, kShown)) + "...";
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
          return Finding(element, Indexed("findings", findings.size() - 1), &findings.back());
        });
      }
      return absl::OkStatus();
    });
    BUBBLESCOPE_RETURN_IF_ERROR(walked);
    if (!saw_pipelines) return Error(start, "no \"pipelines\" member");
    AttachFindings(std::move(findings), &run);
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

  absl::Status WrongType(ondemand::value& value, std::string_view key,
                         std::string_view expected) {
    const std::string_view token = value.raw_json_token();
    const std::string_view type = TypeName(token);
    // What is not JSON at all is quoted (NaN read "is a number, expected a number").
    const std::string what = type == "not a JSON value"
                                 ? absl::StrCat(TokenText(token), ", not a JSON value")
                                 : std::string(type);
    return Error(token.data(), absl::StrCat("\"", std::string(key), "\" is ", what,
                                            ", expected ", std::string(expected)));
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

  // An object that must hold each of `required` (`where` names it in the error: "pipelines[0]").
  template <typename Visit>
  absl::Status Members(ondemand::value& value, std::string_view key, std::string_view where,
                       std::span<const std::string_view> required, Visit&& visit) {
    const char* at = value.raw_json_token().data();
    uint32_t seen = 0;
    absl::Status read = Object(value, key, [&](std::string_view member_key,
                                               ondemand::value& member) {
      for (size_t i = 0; i < required.size(); ++i) {
        if (required[i] == member_key) seen |= 1u << i;
      }
      return visit(member_key, member);
    });
    BUBBLESCOPE_RETURN_IF_ERROR(read);
    for (size_t i = 0; i < required.size(); ++i) {
      if ((seen & (1u << i)) == 0) {
        return Error(at, absl::StrCat(std::string(where), " has no \"", std::string(required[i]),
                                      "\" (analyze always writes it; a missing figure is "
                                      "never read as 0)"));
      }
    }
    return absl::OkStatus();
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
  absl::Status Ranged(ondemand::value& value, std::string_view key, Figure figure,
                      double number) {
    if (FigureInRange(number, figure)) return absl::OkStatus();
    return Error(value.raw_json_token().data(),
                 absl::StrCat("\"", std::string(key), "\" is ",
                              TokenText(value.raw_json_token()), ", outside ",
                              std::string(FigureRangeText(figure))));
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
      return Error(at, absl::StrCat("schema \"", schema, "\" has major version ", version->major,
                                    "; this bubblescope reads bubblescope.analyze/",
                                    kReadableAnalyzeMajor, ".x (a report of another major "
                                    "version needs the bubblescope that wrote it)"));
    }
    run->schema_major = version->major;
    run->schema_minor = version->minor;
    return absl::OkStatus();
  }

  absl::Status Pipeline(ondemand::value& value, const std::string& where,
                        PipelineFigures* pipeline) {
    bool counted_iterations = false;
    absl::Status read = PipelineMembers(value, where, pipeline, &counted_iterations);
    // A report of a bubblescope before the member: its count of complete iterations says it.
    if (read.ok() && counted_iterations && pipeline->complete_iterations == 0 &&
        pipeline->no_complete_iteration.empty()) {
      pipeline->no_complete_iteration = "the report counts 0 complete iterations";
    }
    return read;
  }

  absl::Status PipelineMembers(ondemand::value& value, const std::string& where,
                               PipelineFigures* pipeline, bool* counted_iterations) {
    return Members(value, "pipelines[]", where, kPipelineMembers, [&](std::string_view key,
                                                                      ondemand::value& member) {
      if (key == "ranks") return Ranks(member, key, &pipeline->ranks);
      if (key == "stages") return OptionalInteger(member, key, &pipeline->stages);
      if (key == "microbatches") return OptionalInteger(member, key, &pipeline->microbatches);
      if (key == "virtual_stages") return OptionalInteger(member, key, &pipeline->virtual_stages);
      if (key == "schedule") return OptionalString(member, key, &pipeline->schedule);
      // null: no complete iteration (no_complete_iteration says why); the figure stays 0.
      if ((key == "bubble_fraction" || key == "latency_us") && IsNull(member)) {
        return absl::OkStatus();
      }
      if (key == "bubble_fraction") return Number(member, key, Figure::kFraction, &pipeline->bubble_fraction);
      if (key == "theoretical_bubble_fraction") {
        return OptionalNumber(member, key, Figure::kFraction,
                              &pipeline->theoretical_bubble_fraction);
      }
      if (key == "excess_bubble_fraction") {
        return OptionalNumber(member, key, Figure::kSignedFraction,
                              &pipeline->excess_bubble_fraction);
      }
      if (key == "complete_iterations") {
        *counted_iterations = true;
        absl::Status status = Integer(member, key, &pipeline->complete_iterations);
        if (status.ok() && pipeline->complete_iterations < 0) {
          return WrongType(member, key, "a whole number not below 0");
        }
        return status;
      }
      if (key == "no_complete_iteration") {
        std::optional<std::string> why;
        absl::Status status = OptionalString(member, key, &why);
        pipeline->no_complete_iteration = why.value_or("");
        return status;
      }
      if (key == "latency_us") {
        return Members(member, key, absl::StrCat(where, ".latency_us"), kLatencyMembers,
                       [&](std::string_view latency_key, ondemand::value& number) {
          if (latency_key == "p50") return Number(number, "latency_us.p50", Figure::kMicros, &pipeline->latency_p50_us);
          if (latency_key == "p90") return Number(number, "latency_us.p90", Figure::kMicros, &pipeline->latency_p90_us);
          if (latency_key == "max") return Number(number, "latency_us.max", Figure::kMicros, &pipeline->latency_max_us);
          return absl::OkStatus();
        });
      }
      if (key == "iterations") {
        return Array(member, key, [&](ondemand::value& element) {
          pipeline->iterations.emplace_back();
          return Iteration(element,
                           absl::StrCat(where, ".", Indexed("iterations",
                                                            pipeline->iterations.size() - 1)),
                           &pipeline->iterations.back());
        });
      }
      if (key == "rank_stats") {
        return Array(member, key, [&](ondemand::value& element) {
          pipeline->stage_figures.emplace_back();
          return Stage(element,
                       absl::StrCat(where, ".", Indexed("rank_stats",
                                                        pipeline->stage_figures.size() - 1)),
                       &pipeline->stage_figures.back());
        });
      }
      if (key == "links") {
        return Array(member, key, [&](ondemand::value& element) {
          pipeline->links.emplace_back();
          return Link(element,
                      absl::StrCat(where, ".", Indexed("links", pipeline->links.size() - 1)),
                      &pipeline->links.back());
        });
      }
      if (key == "whatif_model") {
        if (IsNull(member)) return absl::OkStatus();
        return WhatIfModel(member, &pipeline->whatif_model.emplace());
      }
      if (key == "whatif_model_problem") {
        std::optional<std::string> problem;
        absl::Status status = OptionalString(member, key, &problem);
        pipeline->whatif_model_problem = problem.value_or("");
        return status;
      }
      if (key == "rebalance") {
        if (IsNull(member)) return absl::OkStatus();
        return Object(member, key, [&](std::string_view rebalance_key, ondemand::value& field) {
          return rebalance_key == "layers_after"
                     ? Ranks(field, "rebalance.layers_after", &pipeline->rebalance_layers_after)
                     : absl::OkStatus();
        });
      }
      return absl::OkStatus();
    });
  }

  // An integer byte count, null for unknown (-1).
  absl::Status Bytes(ondemand::value& value, std::string_view key, int64_t* out) {
    if (IsNull(value)) {
      *out = -1;
      return absl::OkStatus();
    }
    return Integer(value, key, out);
  }

  // `whatif_model` (report/whatif_model_json.h writes it): read, then checked as a model a
  // prediction can run on, so a damaged one is refused where it starts.
  absl::Status WhatIfModel(ondemand::value& value, whatif::Model* model) {
    const char* at = value.raw_json_token().data();
    absl::Status read = Object(value, "whatif_model", [&](std::string_view key,
                                                          ondemand::value& member) {
      if (key == "schedule") {
        const char* name_at = member.raw_json_token().data();
        std::string name;
        if (absl::Status status = String(member, "whatif_model.schedule", &name); !status.ok()) {
          return status;
        }
        for (sim::Schedule schedule : sim::kSchedules) {
          if (sim::ScheduleName(schedule) == name) {
            model->schedule = schedule;
            return absl::OkStatus();
          }
        }
        return Error(name_at, absl::StrCat("\"whatif_model.schedule\" is \"", name,
                                           "\", not a schedule this bubblescope simulates"));
      }
      if (key == "p") return Integer(member, "whatif_model.p", &model->p);
      if (key == "m") return Integer(member, "whatif_model.m", &model->m);
      if (key == "v") return Integer(member, "whatif_model.v", &model->v);
      if (key == "separate_weight_grad") {
        return Bool(member, "whatif_model.separate_weight_grad", &model->separate_weight_grad);
      }
      if (key == "batched_p2p") {
        return Bool(member, "whatif_model.batched_p2p", &model->batched_p2p);
      }
      if (key == "multi_chunk_zero_bubble") {
        return Bool(member, "whatif_model.multi_chunk_zero_bubble",
                    &model->multi_chunk_zero_bubble);
      }
      if (key == "measured_iteration_ns") {
        return Integer(member, "whatif_model.measured_iteration_ns",
                       &model->measured_iteration_ns);
      }
      if (key == "measured_bubble_fraction") {
        return Number(member, "whatif_model.measured_bubble_fraction", Figure::kFraction,
                      &model->measured_bubble_fraction);
      }
      if (key == "stages") {
        return Array(member, "whatif_model.stages", [&](ondemand::value& element) {
          whatif::StageModel& stage = model->stages.emplace_back();
          return Object(element, "whatif_model.stages[]", [&](std::string_view stage_key,
                                                              ondemand::value& field) {
            if (stage_key == "rank") return Integer(field, "stages[].rank", &stage.rank);
            if (stage_key == "forward_ns") return Number(field, "stages[].forward_ns", Figure::kRate, &stage.forward_ns);
            if (stage_key == "backward_ns") {
              return Number(field, "stages[].backward_ns", Figure::kRate, &stage.backward_ns);
            }
            if (stage_key == "weight_grad_ns") {
              return Number(field, "stages[].weight_grad_ns", Figure::kRate,
                            &stage.weight_grad_ns);
            }
            if (stage_key == "recompute_ns") {
              return Number(field, "stages[].recompute_ns", Figure::kRate, &stage.recompute_ns);
            }
            if (stage_key == "memory_floor_bytes") {
              return Bytes(field, "stages[].memory_floor_bytes", &stage.memory_floor_bytes);
            }
            if (stage_key == "memory_peak_bytes") {
              return Bytes(field, "stages[].memory_peak_bytes", &stage.memory_peak_bytes);
            }
            if (stage_key == "memory_headroom_bytes") {
              return Bytes(field, "stages[].memory_headroom_bytes", &stage.memory_headroom_bytes);
            }
            if (stage_key == "layers") return Integer(field, "stages[].layers", &stage.layers);
            return absl::OkStatus();
          });
        });
      }
      if (key == "links") {
        return Array(member, "whatif_model.links", [&](ondemand::value& element) {
          whatif::LinkCost& link = model->links.emplace_back();
          return Object(element, "whatif_model.links[]", [&](std::string_view link_key,
                                                             ondemand::value& field) {
            if (link_key == "src_stage") return Integer(field, "links[].src_stage", &link.src_stage);
            if (link_key == "dst_stage") return Integer(field, "links[].dst_stage", &link.dst_stage);
            if (link_key == "transfer_ns") {
              return Integer(field, "links[].transfer_ns", &link.transfer_ns);
            }
            return absl::OkStatus();
          });
        });
      }
      return absl::OkStatus();
    });
    BUBBLESCOPE_RETURN_IF_ERROR(read);
    if (absl::Status valid = whatif::ValidateModel(*model); !valid.ok()) {
      return Error(at, absl::StrCat("\"whatif_model\" is not a usable model: ",
                                    std::string(valid.message())));
    }
    return absl::OkStatus();
  }

  absl::Status Iteration(ondemand::value& value, std::string_view where,
                         IterationFigures* iteration) {
    return Members(value, "iterations[]", where, kIterationMembers,
                   [&](std::string_view key, ondemand::value& member) {
      if (key == "step") return Integer(member, key, &iteration->step);
      if (key == "complete") return Bool(member, key, &iteration->complete);
      if (key == "window_us") return Number(member, key, Figure::kMicros, &iteration->window_us);
      if (key == "bubble_fraction") {
        return Number(member, key, Figure::kFraction, &iteration->bubble_fraction);
      }
      return absl::OkStatus();
    });
  }

  absl::Status Stage(ondemand::value& value, std::string_view where, StageFigures* stage) {
    return Members(value, "rank_stats[]", where, kStageMembers,
                   [&](std::string_view key, ondemand::value& member) {
      if (key == "rank") return Integer(member, key, &stage->rank);
      if (key == "stage") return OptionalInteger(member, key, &stage->stage);
      if (key == "bubble_fraction") {
        return Number(member, key, Figure::kFraction, &stage->bubble_fraction);
      }
      if (key == "peak_allocated_bytes") {
        return OptionalNumber(member, key, Figure::kBytes, &stage->peak_allocated_bytes);
      }
      if (key == "peak_reserved_bytes") {
        return OptionalNumber(member, key, Figure::kBytes, &stage->peak_reserved_bytes);
      }
      if (key == "fwd_us_per_microbatch") {
        return OptionalNumber(member, key, Figure::kMicros, &stage->forward_us);
      }
      if (key == "bwd_us_per_microbatch") {
        return OptionalNumber(member, key, Figure::kMicros, &stage->backward_us);
      }
      if (key == "wgt_us_per_microbatch") {
        return OptionalNumber(member, key, Figure::kMicros, &stage->weight_grad_us);
      }
      return absl::OkStatus();
    });
  }

  absl::Status Link(ondemand::value& value, std::string_view where, LinkFigures* link) {
    return Members(value, "links[]", where, kLinkMembers,
                   [&](std::string_view key, ondemand::value& member) {
      if (key == "src") return Integer(member, key, &link->src);
      if (key == "dst") return Integer(member, key, &link->dst);
      if (key == "transfer_us_median") {
        return OptionalNumber(member, key, Figure::kMicros, &link->transfer_us_median);
      }
      if (key == "gbps_median") return OptionalNumber(member, key, Figure::kRate, &link->gbps_median);
      if (key == "wait_us") return Number(member, key, Figure::kMicros, &link->wait_us);
      if (key == "slow") return Bool(member, key, &link->slow);
      return absl::OkStatus();
    });
  }

  absl::Status Finding(ondemand::value& value, std::string_view where,
                       FindingFigures* finding) {
    return Members(value, "findings[]", where, kFindingMembers,
                   [&](std::string_view key, ondemand::value& member) {
      if (key == "kind") return String(member, key, &finding->kind);
      if (key == "severity") return String(member, key, &finding->severity);
      if (key == "message") return String(member, key, &finding->message);
      if (key == "ranks") return Ranks(member, key, &finding->ranks);
      if (key == "cost_us") return Number(member, key, Figure::kMicros, &finding->cost_us);
      return absl::OkStatus();
    });
  }

  // Each finding goes to the pipeline that holds its first rank; findings naming no pipeline
  // rank (none today) are left out, since nothing pairs them.
  static void AttachFindings(std::vector<FindingFigures> findings, RunFigures* run) {
    for (FindingFigures& finding : findings) {
      if (finding.ranks.empty()) continue;
      for (PipelineFigures& pipeline : run->pipelines) {
        if (std::find(pipeline.ranks.begin(), pipeline.ranks.end(), finding.ranks.front()) !=
            pipeline.ranks.end()) {
          pipeline.findings.push_back(std::move(finding));
          break;
        }
      }
    }
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
