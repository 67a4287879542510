// The analyze report's compared figures, each declared once (docs/json-report.md): its key, its
// unit, where it is read from the job result and which RunFigures member it fills. Four things
// come from these tables and nothing else: the JSON writer's members (report/pipeline_report.cc
// and its neighbours write them through WriteField), the report reader's members
// (compare/report_reader.cc reads them through the same rows), the figures of a job filled
// without JSON in between (FillFields, for diff and gate on traces), and the reference rows of
// docs/json-report.md (ReferenceRows, which a test compares with the page).
//
// The objects that nest (a pipeline's iterations, ranks, links, what-if model) are rows too,
// with Nest naming the table of their members. The tables of latency_us, iterations[],
// rank_stats[], links[], findings[] and the what-if model list every member the writer writes,
// compared or not, in its order, and the writer writes them by walking the table; the tables of
// the pipeline and of rebalance list their compared members, which the writer writes by name
// (PipelineMember) between members of their own.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "compare/figure_range.h"
#include "compare/run_figures.h"
#include "job/job.h"
#include "text/json_writer.h"

namespace bubblescope::compare::schema {

// What a member holds: its JSON form, the range the reader accepts and its type in the docs.
enum class Unit : uint8_t {
  kFraction,          // a number 0 to 1, written in its shortest exact form
  kSignedFraction,    // a number -1 to 1 (a difference of two fractions)
  kMicroseconds,      // a time: whole nanoseconds written as microseconds with up to 3 decimals
  kNanoseconds,       // a time per op in nanoseconds, an exact double
  kWholeNanoseconds,  // a time in whole nanoseconds
  kGbps,              // a bandwidth, Gbit/s
  kBytes,             // a memory figure, whole bytes
  kCount,             // a whole number not below 0
  kNumber,            // a whole number (an id, a step, a stage position)
  kRanks,             // an array of whole numbers
  kString,
  kBool,
  kSchedule,  // a schedule name the simulator knows (sim::ScheduleName)
  kObject,    // an object whose members another table declares (Nest)
  kArray,     // an array of such objects
};

// The tables that nest under a row of kind kObject or kArray.
enum class Nest : uint8_t {
  kNone,
  kLatency,       // pipelines[].latency_us
  kIterations,    // pipelines[].iterations[]
  kRankStats,     // pipelines[].rank_stats[]
  kLinks,         // pipelines[].links[]
  kRebalance,     // pipelines[].rebalance
  kWhatIfModel,   // pipelines[].whatif_model
  kWhatIfStages,  // pipelines[].whatif_model.stages[]
  kWhatIfLinks,   // pipelines[].whatif_model.links[]
};

// One member's value as the job result gives it: what the writer prints and what the figures
// filled without JSON hold, so the two cannot differ.
struct Value {
  enum class Form : uint8_t {
    kAbsent,  // the writer leaves the member out (e.g. a rebalance without a suggested move)
    kNull,
    kInt,
    kMicros,  // `integer` nanoseconds, written as microseconds with 3 decimals
    kDouble,
    kString,
    kBool,
    kInts,
    kPresent,  // a nested object or array is written (its own table says how)
  };
  Form form = Form::kNull;
  int64_t integer = 0;
  double number = 0.0;
  std::string_view text{};
  bool flag = false;
  const std::vector<int32_t>* ints = nullptr;

  static Value Absent() { return {.form = Form::kAbsent}; }
  static Value Null() { return {.form = Form::kNull}; }
  static Value Present() { return {.form = Form::kPresent}; }
  static Value Int(int64_t value) { return {.form = Form::kInt, .integer = value}; }
  static Value IntOrNull(int64_t value) { return value < 0 ? Null() : Int(value); }
  static Value Micros(int64_t ns) { return {.form = Form::kMicros, .integer = ns}; }
  static Value Double(double value) { return {.form = Form::kDouble, .number = value}; }
  static Value String(std::string_view value) { return {.form = Form::kString, .text = value}; }
  static Value Bool(bool value) { return {.form = Form::kBool, .flag = value}; }
  static Value Ints(const std::vector<int32_t>& values) {
    return {.form = Form::kInts, .ints = &values};
  }
};

// The figures member a row fills; monostate for a member written but not compared.
using Slot = std::variant<std::monostate, double*, std::optional<double>*, int32_t*,
                          std::optional<int32_t>*, int64_t*, bool*, std::string*,
                          std::optional<std::string>*, std::vector<int32_t>*, sim::Schedule*>;

// One member of an object of the report, read from a `Source` of the job result into a
// `Figures` of RunFigures.
template <typename Source, typename Figures>
struct Field {
  std::string_view key{};
  Unit unit = Unit::kNumber;
  bool nullable = false;  // null is written (and read) for "no figure"
  bool required = false;  // analyze always writes it: a report without it is refused
  // How messages name it ("latency_us.p50", "stages[].rank"); the key when empty.
  std::string_view message_key{};
  std::string_view meaning{};  // its row in docs/json-report.md
  Value (*value)(const Source&) = nullptr;
  Slot (*slot)(Figures&) = nullptr;  // nullptr: written, not compared
  Nest nest = Nest::kNone;

  std::string_view named() const { return message_key.empty() ? key : message_key; }
  bool compared() const { return slot != nullptr || nest != Nest::kNone; }
};

// One rank of a pipeline as rank_stats[] writes it: its totals, its stage position (-1 when
// unknown; the report's rule, report/job_report.h) and its stage's per-op times (null without).
struct RankOfPipeline {
  const bubble::RankTotals* totals = nullptr;
  int32_t stage = -1;
  const schedule_inference::StageFigures* stage_figures = nullptr;
};

// The pipeline's members that are compared; kPipelineFields is indexed by it. The writer writes
// them in its own order, with other members between them; the reader names the first required
// member missing in this order (the bubble before the ranks: the figure a gate reads).
enum class PipelineMember : uint8_t {
  kStages,
  kMicrobatches,
  kVirtualStages,
  kSchedule,
  kBubbleFraction,
  kTheoreticalBubbleFraction,
  kExcessBubbleFraction,
  kLatency,
  kRanks,
  kCompleteIterations,
  kNoCompleteIteration,
  kIterations,
  kRankStats,
  kRebalance,
  kLinks,
  kWhatIfModel,
  kWhatIfModelProblem,
};

using PipelineField = Field<job::Pipeline, PipelineFigures>;
extern const std::span<const PipelineField> kPipelineFields;
extern const std::span<const Field<bubble::Latency, PipelineFigures>> kLatencyFields;
extern const std::span<const Field<bubble::IterationFigures, IterationFigures>> kIterationFields;
extern const std::span<const Field<RankOfPipeline, StageFigures>> kRankStatFields;
extern const std::span<const Field<link_stats::Link, LinkFigures>> kLinkFields;
extern const std::span<const Field<rebalance::Result, PipelineFigures>> kRebalanceFields;
extern const std::span<const Field<findings::Finding, FindingFigures>> kFindingFields;
extern const std::span<const Field<whatif::Model, whatif::Model>> kWhatIfModelFields;
extern const std::span<const Field<whatif::StageModel, whatif::StageModel>> kWhatIfStageFields;
extern const std::span<const Field<whatif::LinkCost, whatif::LinkCost>> kWhatIfLinkFields;

inline const PipelineField& Member(PipelineMember member) {
  return kPipelineFields[static_cast<size_t>(member)];
}

// The range the reader holds a number of `unit` to (a time, a fraction, ...).
Figure RangeOf(Unit unit);

// A string as the report reads back: each byte of an ill-formed UTF-8 sequence becomes U+FFFD,
// as the JSON writer writes it (text/json_string.h).
std::string AsWritten(std::string_view text);

// Writes `value` (the value alone, its key already written).
void WriteValue(const Value& value, JsonWriter& json);

// Whether the nested object or array `field` declares is there for `source` (not null).
template <typename Source, typename Figures>
bool Holds(const Field<Source, Figures>& field, const Source& source) {
  return field.value(source).form == Value::Form::kPresent;
}

// Writes the member `field` declares for `source` (nothing when its value is absent). A nested
// row that is there writes only its key and returns true: the caller writes the object or array
// that follows.
template <typename Source, typename Figures>
bool WriteField(const Field<Source, Figures>& field, const Source& source, JsonWriter& json) {
  const Value value = field.value(source);
  if (value.form == Value::Form::kAbsent) return false;
  json.Key(field.key);
  if (value.form == Value::Form::kPresent) return true;
  WriteValue(value, json);
  return false;
}

// Writes every member of a flat table, in its order (an object's members, between the braces).
template <typename Source, typename Figures>
void WriteFields(std::span<const Field<Source, Figures>> fields, const Source& source,
                 JsonWriter& json) {
  for (const Field<Source, Figures>& field : fields) WriteField(field, source, json);
}

// Writes an array of objects whose members `fields` declare, one object per source.
template <typename Source, typename Figures>
void WriteObjects(std::span<const Field<Source, Figures>> fields,
                  const std::vector<Source>& sources, JsonWriter& json) {
  json.BeginArray();
  for (const Source& source : sources) {
    json.BeginObject();
    WriteFields(fields, source, json);
    json.EndObject();
  }
  json.EndArray();
}

// Stores `value` in `slot` as the reader would read the member the writer writes from it.
// False when the value is out of the range of `unit` (the reader refuses the report then).
bool Store(const Value& value, Unit unit, const Slot& slot);

// Fills the compared scalar members of `figures` from `source`; nested rows are the caller's.
// The name of the first member out of range when one is (as the reader would refuse it).
template <typename Source, typename Figures>
std::optional<std::string_view> FillFields(std::span<const Field<Source, Figures>> fields,
                                           const Source& source, Figures& figures) {
  for (const Field<Source, Figures>& field : fields) {
    if (field.slot == nullptr) continue;
    if (!Store(field.value(source), field.unit, field.slot(figures))) return field.named();
  }
  return std::nullopt;
}

// Each finding goes to the pipeline that holds its first rank (the report lists them all in one
// array); findings naming no pipeline rank are left out, since nothing pairs them.
void AttachFindings(std::vector<FindingFigures> findings, RunFigures* run);

// A pipeline counting 0 complete iterations without saying why (a report of a bubblescope before
// `no_complete_iteration`) is given that count as its reason.
void NoteNoCompleteIteration(PipelineFigures* pipeline);

// The rows of docs/json-report.md's reference table for every member these tables declare, one
// line each ("| `pipelines[].bubble_fraction` | number or null | ... |"), in table order.
std::vector<std::string> ReferenceRows();

}  // namespace bubblescope::compare::schema
