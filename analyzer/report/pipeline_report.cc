#include "report/pipeline_report.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/status_macros.h"
#include "compare/report_schema.h"
#include "compare/schema_version.h"
#include "report/cause_report.h"
#include "report/cycle_report.h"
#include "report/evidence_report.h"
#include "report/job_report.h"
#include "report/large_job.h"
#include "report/link_report.h"
#include "report/rebalance_report.h"
#include "report/replica_report.h"
#include "report/text_layout.h"
#include "report/text_table.h"
#include "report/units.h"
#include "report/whatif_model_json.h"
#include "report_view/report_view.h"
#include "text/json_writer.h"

namespace bubblescope {
namespace {

namespace schema = compare::schema;

using schedule_inference::StageFigures;

// The stage figures of `rank`, or null when the shape is unknown or lacks per-stage times.
const StageFigures* StageOfRank(const job::Pipeline& pipeline, int32_t rank) {
  if (!pipeline.shape.has_value()) return nullptr;
  for (const StageFigures& stage : pipeline.shape->stages) {
    if (stage.rank == rank) return &stage;
  }
  return nullptr;
}

// The pipeline's ranks as rank_stats[] lists them, with the stage each is (report/job_report.h).
std::vector<schema::RankOfPipeline> RanksOf(const job::Pipeline& pipeline) {
  std::vector<schema::RankOfPipeline> ranks;
  ranks.reserve(pipeline.bubble.per_rank.size());
  for (const bubble::RankTotals& rank : pipeline.bubble.per_rank) {
    ranks.push_back({.totals = &rank,
                     .stage = StagePosition(pipeline, rank.rank),
                     .stage_figures = StageOfRank(pipeline, rank.rank)});
  }
  return ranks;
}

std::string OpCell(const schedule_inference::OpStats& op) {
  if (op.count == 0) return "-";
  return absl::StrCat(Millis(op.mean_ns), " / ", Millis(static_cast<double>(op.p90_ns)), " (",
                      op.count, ")");
}

void AppendOnePipeline(size_t index, const job::Pipeline& pipeline, std::string* out) {
  const bubble::Result& bubble = pipeline.bubble;
  absl::StrAppend(out, "\npipeline ", index, ": ranks ", absl::StrJoin(bubble.ranks, ","), "\n");
  absl::StrAppend(out, IncompletePipelineText(pipeline));
  // Without a complete iteration there is no bubble or latency: the reason stands in for them.
  const bool measured = pipeline.no_complete_iteration.empty();
  if (pipeline.shape.has_value()) {
    const schedule_inference::Result& shape = *pipeline.shape;
    const pipeline::IdealBubble ideal = pipeline.ideal.value_or(pipeline::IdealBubble{});
    const double theoretical = ideal.fraction;
    absl::StrAppend(out, "  p=", shape.p, " m=", shape.m, " v=", shape.v, " schedule ",
                    std::string(schedule_inference::ScheduleFamilyName(shape.family)), " (from ",
                    std::string(pipeline::ShapeSourceName(shape.schedule_source)),
                    "; stage order from ",
                    std::string(pipeline::ShapeSourceName(shape.stage_order_source)), ")\n");
    for (const std::string& note : shape.notes) absl::StrAppend(out, "  note: ", note, "\n");
    if (measured)
      absl::StrAppend(
          out, "  bubble ", Percent(bubble.bubble_fraction), "% measured vs ", Percent(theoretical),
          "% theoretical",
          ideal.source == pipeline::IdealSource::kUpperBound
              ? " (closed form, an upper bound for this zero-bubble schedule)"
          : ideal.source == pipeline::IdealSource::kSimulated
              ? " (this zero-bubble schedule simulated on the mean stage times)"
              : "",
          ": excess ",
          absl::StrFormat("%.1f", 100.0 * pipeline.excess_bubble_fraction.value_or(0.0)),
          " points\n");
  } else {
    absl::StrAppend(out, "  shape and schedule unknown\n");
    if (measured)
      absl::StrAppend(out, "  bubble ", Percent(bubble.bubble_fraction), "% measured\n");
  }
  if (!measured) {
    absl::StrAppend(out, "  no complete iteration: ", pipeline.no_complete_iteration,
                    "; no bubble or latency figure\n");
  }
  absl::StrAppend(out, EvidenceText(pipeline.evidence));
  for (const std::string& note : pipeline.crossrank.plausibility.notes) {
    absl::StrAppend(out, "  note: ", note, "\n");
  }
  absl::StrAppend(out, "  iterations: ", bubble.complete_iterations, " complete of ",
                  bubble.iterations.size(), " (from ",
                  std::string(iterations::StepSourceName(bubble.step_source)), ")");
  if (measured) {
    absl::StrAppend(out, "; latency p50 ", Millis(static_cast<double>(bubble.latency.p50)),
                    " ms, p90 ", Millis(static_cast<double>(bubble.latency.p90)), " ms, max ",
                    Millis(static_cast<double>(bubble.latency.max)), " ms");
  }
  absl::StrAppend(out, "\n");

  absl::StrAppend(out, "  per rank, ms summed over the ", bubble.complete_iterations,
                  " complete iterations:\n");
  TextTable ranks({{"rank"},
                   {"stage"},
                   {"compute_ms"},
                   {"fill_ms"},
                   {"drain_ms"},
                   {"stall_ms"},
                   {"comm_wait_ms"},
                   {"empty_ms"},
                   {"bubble%"},
                   {"peak_alloc"},
                   {"peak_reserved"}});
  for (const bubble::RankTotals& rank : bubble.per_rank) {
    int32_t stage = StagePosition(pipeline, rank.rank);
    ranks.AddRow({absl::StrCat(rank.rank), stage < 0 ? "-" : absl::StrCat(stage),
                  Millis(static_cast<double>(rank.split.compute)),
                  Millis(static_cast<double>(rank.split.fill)),
                  Millis(static_cast<double>(rank.split.drain)),
                  Millis(static_cast<double>(rank.split.stall)),
                  Millis(static_cast<double>(rank.split.comm_wait)),
                  Millis(static_cast<double>(rank.split.empty)), Percent(rank.bubble_fraction),
                  GiB(rank.memory.allocated_bytes), GiB(rank.memory.reserved_bytes)});
  }
  absl::StrAppend(out, ranks.Render(2));
  // Only jobs whose groups say so have these shares; the others keep the table as it was.
  for (const bubble::RankTotals& rank : bubble.per_rank) {
    if (rank.split.in_stage_comm == 0 && rank.split.dp_sync == 0) continue;
    const int32_t stage = StagePosition(pipeline, rank.rank);
    absl::StrAppend(out, "  stage ", stage < 0 ? std::string("-") : absl::StrCat(stage), " (rank ",
                    rank.rank, "): in-stage communication not under compute ",
                    Millis(static_cast<double>(rank.split.in_stage_comm)),
                    " ms (counted as work); exposed DP sync ",
                    Millis(static_cast<double>(rank.split.dp_sync)), " ms of its idle time\n");
  }

  if (pipeline.shape.has_value() && !pipeline.shape->stages.empty()) {
    absl::StrAppend(out, "  per stage, ms per op, mean / p90 (op count):\n");
    TextTable stages({{"stage"},
                      {"rank"},
                      {"forward", Align::kLeft},
                      {"backward", Align::kLeft},
                      {"weight_grad", Align::kLeft},
                      {"total_per_mb_ms"}});
    for (const StageFigures& stage : pipeline.shape->stages) {
      stages.AddRow({absl::StrCat(stage.stage), absl::StrCat(stage.rank), OpCell(stage.forward),
                     OpCell(stage.backward), OpCell(stage.weight_grad),
                     Millis(stage.mean_total_ns)});
    }
    absl::StrAppend(out, stages.Render(2));
  }
  if (pipeline.rebalance.has_value()) absl::StrAppend(out, RebalanceText(*pipeline.rebalance));
  absl::StrAppend(out, LinkText(pipeline.crossrank));
  absl::StrAppend(out, CausesText(pipeline));
}

class PipelineJson {
 public:
  explicit PipelineJson(JsonWriter* json) : json_(*json) {}

  void Micros(std::string_view key, int64_t ns) { json_.DecimalMember(key, ns, 3); }
  void Int(std::string_view key, int64_t value) { json_.IntMember(key, value); }
  void Fraction(std::string_view key, double value) { json_.DoubleMember(key, value); }
  // How the schedule's program fitted the ranks' transfers and compute (program_fit.h).
  void OpFit(const std::optional<pipeline::FitSummary>& fit) {
    json_.Key("op_fit");
    if (!fit.has_value()) {
      json_.Null();
      return;
    }
    json_.BeginObject();
    json_.BoolMember("used", fit->used);
    Int("program_ops", fit->program_ops);
    Int("placed", fit->placed);
    Int("unplaced", fit->program_ops - fit->placed);
    Int("weak", fit->weak);
    Int("backward_kernels_left_out", fit->hinted_left_out);
    Fraction("score", fit->program_ops > 0 ? static_cast<double>(fit->placed - fit->weak) /
                                                 static_cast<double>(fit->program_ops)
                                           : 0.0);
    Int("steps", fit->steps);
    Int("steps_fitted", fit->steps_fitted);
    json_.Key("evidence");
    json_.BeginObject();
    // In pipeline::FitEvidence order.
    static constexpr std::string_view kKeys[] = {"transfers", "phase_hints", "own_kernel_names",
                                                 "other_stages_kernel_names", "weak"};
    static_assert(static_cast<size_t>(pipeline::FitEvidence::kWeak) + 1 == std::size(kKeys));
    for (size_t e = 0; e < 5; ++e) Int(kKeys[e], fit->by_evidence[e]);
    json_.EndObject();
    json_.EndObject();
  }
  void OptionalString(std::string_view key, std::optional<std::string_view> value) {
    json_.Key(key);
    if (!value.has_value()) {
      json_.Null();
    } else {
      json_.String(*value);
    }
  }
  void Pipeline(const job::Pipeline& pipeline) {
    const bubble::Result& bubble = pipeline.bubble;
    const std::optional<schedule_inference::Result>& shape = pipeline.shape;
    // The compared members come from their rows (compare/report_schema.h); the others are
    // written here between them.
    auto member = [&](schema::PipelineMember which) {
      return schema::WriteField(schema::Member(which), pipeline, json_);
    };
    json_.BeginObject();
    member(schema::PipelineMember::kRanks);
    json_.IntArrayMember("missing_peers", pipeline.crossrank.missing_peers);
    json_.IntArrayMember("cut_short_ranks", pipeline.cut_short_ranks);
    member(schema::PipelineMember::kStages);
    member(schema::PipelineMember::kMicrobatches);
    member(schema::PipelineMember::kVirtualStages);
    member(schema::PipelineMember::kSchedule);
    OptionalString("schedule_source",
                   shape.has_value()
                       ? std::optional(pipeline::ShapeSourceName(shape->schedule_source))
                       : std::nullopt);
    json_.Key("schedule_notes");
    json_.BeginArray();
    if (shape.has_value()) {
      for (const std::string& note : shape->notes) json_.String(note);
    }
    json_.EndArray();
    WriteEvidenceMember(pipeline.evidence, json_);
    OpFit(shape.has_value() ? shape->op_fit : std::nullopt);
    json_.Key("plausibility_notes");
    json_.BeginArray();
    for (const std::string& note : pipeline.crossrank.plausibility.notes) json_.String(note);
    json_.EndArray();
    // Without a complete iteration there is no bubble to give: its row writes null, as the
    // text's "no figure".
    member(schema::PipelineMember::kBubbleFraction);
    member(schema::PipelineMember::kTheoreticalBubbleFraction);
    member(schema::PipelineMember::kExcessBubbleFraction);
    OptionalString("theoretical_source",
                   shape.has_value() && pipeline.ideal.has_value()
                       ? std::optional(pipeline::IdealSourceName(pipeline.ideal->source))
                       : std::nullopt);
    if (member(schema::PipelineMember::kLatency)) {
      json_.BeginObject();
      schema::WriteFields(schema::kLatencyFields, bubble.latency, json_);
      json_.EndObject();
    }
    member(schema::PipelineMember::kCompleteIterations);
    member(schema::PipelineMember::kNoCompleteIteration);
    json_.StringMember("iteration_source", iterations::StepSourceName(bubble.step_source));
    if (member(schema::PipelineMember::kIterations)) {
      schema::WriteObjects(schema::kIterationFields, bubble.iterations, json_);
    }
    json_.Key("slowest_stage");
    if (shape.has_value() && shape->slowest_stage >= 0) {
      json_.Int(shape->slowest_stage);
    } else {
      json_.Null();
    }
    json_.Key("slowest_stage_effect");
    if (pipeline.slowest_stage_effect.has_value()) {
      const rebalance::ImbalanceEffect& effect = *pipeline.slowest_stage_effect;
      json_.BeginObject();
      Int("stage", effect.stage);
      Micros("iteration_us", effect.iteration_ns);
      Fraction("bubble_fraction", effect.bubble_fraction);
      Micros("iteration_at_mean_us", effect.iteration_at_mean_ns);
      Fraction("bubble_fraction_at_mean", effect.bubble_fraction_at_mean);
      json_.EndObject();
    } else {
      json_.Null();
    }
    if (member(schema::PipelineMember::kRankStats)) {
      schema::WriteObjects(schema::kRankStatFields, RanksOf(pipeline), json_);
    }
    if (member(schema::PipelineMember::kRebalance)) WriteRebalanceJson(*pipeline.rebalance, json_);
    WriteLinkMembers(pipeline.crossrank, json_);
    WriteCausesMember(pipeline, json_);
    WriteWhatIfModelMembers(pipeline, json_);
    json_.EndObject();
  }

 private:
  JsonWriter& json_;
};

}  // namespace

std::string PipelineText(const std::vector<job::Pipeline>& pipelines) {
  std::string out;
  for (size_t i = 0; i < pipelines.size(); ++i) AppendOnePipeline(i, pipelines[i], &out);
  return out;
}

std::string PipelineText(const job::Result& result, const ReportLayout& layout) {
  std::string out;
  std::vector<bool> set_shown(result.replica_sets.size(), false);
  for (size_t i = 0; i < result.pipelines.size(); ++i) {
    // A large job's replica set is one block, where its first pipeline would be.
    const int32_t set = layout.large ? layout.replica_set[i] : -1;
    if (set >= 0 && !set_shown[static_cast<size_t>(set)]) {
      absl::StrAppend(&out, ReplicaSetText(result, static_cast<size_t>(set)));
      set_shown[static_cast<size_t>(set)] = true;
    }
    if (layout.text_in_full[i]) AppendOnePipeline(i, result.pipelines[i], &out);
  }
  return out;
}

std::string AnalyzeText(const job::Result& result, const SummaryReportOptions& options) {
  const ReportLayout layout = LayoutOf(result, options);
  // A large job's per-rank table folds the ranks of its replica sets, as its pipelines are.
  const FoldedRanks folded = layout.large ? FoldRankTable(result) : FoldedRanks{};
  std::string summary =
      SummaryText(result.ranks, options, folded.ranks, folded.text, !result.pipelines.empty());
  // The warning goes right under the headline, before any figure it qualifies.
  const size_t headline_end = summary.find('\n');
  // Wrapped to the screen: the first screen answers how big the bubble is, where, why and what
  // to do in a few lines; the tables below it are the details.
  summary.insert(headline_end == std::string::npos ? summary.size() : headline_end + 1,
                 WrapLines(IncompleteJobText(result) + OneRunText(result.job.one_run) +
                               MissingDeviceActivityText(result.ranks) +
                               ProfilerCycleText(result.profiler_cycles) + DiagnosisText(result),
                           kTextReportWidth));
  std::string legend;
  if (!result.pipelines.empty()) {
    legend =
        "\nlegend (docs/bubble.md):\n"
        "  window     an iteration, from the first to the last device activity of any rank\n"
        "  fill       a rank's idle time before its first compute of the iteration\n"
        "  drain      its idle time after its last compute\n"
        "  stall      its idle time between them: comm_wait + empty\n"
        "  comm_wait  stall with a transfer running and nothing computing (in-stage tp/cp/ep "
        "communication is work, not stall)\n"
        "  empty      stall with nothing running: the host did not keep the device busy\n"
        "  bubble     idle / window; the per-rank table sums the complete iterations, findings "
        "give per-iteration figures\n";
  }
  return summary + PipelineText(result, layout) + JobText(result.job) + legend;
}

absl::StatusOr<std::string> AnalyzeJson(const job::Result& result,
                                        const SummaryReportOptions& options) {
  JsonWriter json(JsonWriterOptions{.indent = options.json_indent});
  PipelineJson writer(&json);
  json.BeginObject();
  WriteSummaryMembers(result.ranks, options, json);
  json.Key("pipelines");
  json.BeginArray();
  for (const job::Pipeline& pipeline : result.pipelines) writer.Pipeline(pipeline);
  json.EndArray();
  json.Key("findings");
  json.BeginArray();
  for (const findings::Finding* finding : report_view::FindingsByCost(result)) {
    WriteFindingJson(*finding, json);
  }
  json.EndArray();
  WriteReplicaSetsMember(result.replica_sets, json);
  WriteJobMember(result.job, json);
  WriteProfilerCycleMember(result.profiler_cycles, json);
  json.EndObject();
  absl::StatusOr<std::string> document = json.Finish();
  if (document.ok()) document->push_back('\n');
  return document;
}

namespace {

// One table's compared members of `source` into `figures`; an error naming the first one out of
// its range (the reader would refuse the report the writer writes from it).
template <typename Source, typename Figures>
absl::Status Fill(std::span<const schema::Field<Source, Figures>> fields, const Source& source,
                  Figures& figures, std::string_view where) {
  const std::optional<std::string_view> bad = schema::FillFields(fields, source, figures);
  if (!bad.has_value()) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat(std::string(where), ": \"", std::string(*bad), "\" is out of its range"));
}

// Sources are the objects themselves or pointers to them.
template <typename Source, typename Figures, typename Sources>
absl::Status FillEach(std::span<const schema::Field<Source, Figures>> fields,
                      const Sources& sources, std::vector<Figures>& out, std::string_view where) {
  for (const auto& source : sources) {
    const Source& object = [&]() -> const Source& {
      if constexpr (std::is_pointer_v<std::decay_t<decltype(source)>>) {
        return *source;
      } else {
        return source;
      }
    }();
    if (absl::Status filled = Fill(fields, object, out.emplace_back(), where); !filled.ok()) {
      return filled;
    }
  }
  return absl::OkStatus();
}

absl::Status FillPipeline(const job::Pipeline& pipeline, compare::PipelineFigures& figures,
                          std::string_view where) {
  using schema::Member;
  using schema::PipelineMember;
  const bubble::Result& bubble = pipeline.bubble;
  absl::Status filled = Fill(schema::kPipelineFields, pipeline, figures, where);
  if (filled.ok() && schema::Holds(Member(PipelineMember::kLatency), pipeline)) {
    filled = Fill(schema::kLatencyFields, bubble.latency, figures, where);
  }
  if (filled.ok())
    filled = FillEach(schema::kIterationFields, bubble.iterations, figures.iterations, where);
  if (filled.ok()) {
    filled = FillEach(schema::kRankStatFields, RanksOf(pipeline), figures.stage_figures, where);
  }
  if (filled.ok() && schema::Holds(Member(PipelineMember::kRebalance), pipeline) &&
      pipeline.rebalance->result.ok()) {
    filled = Fill(schema::kRebalanceFields, *pipeline.rebalance->result, figures, where);
  }
  if (filled.ok())
    filled = FillEach(schema::kLinkFields, pipeline.crossrank.links, figures.links, where);
  if (filled.ok() && schema::Holds(Member(PipelineMember::kWhatIfModel), pipeline)) {
    whatif::Model& model = figures.whatif_model.emplace();
    filled = Fill(schema::kWhatIfModelFields, *pipeline.model, model, where);
    if (filled.ok()) {
      filled = FillEach(schema::kWhatIfStageFields, pipeline.model->stages, model.stages, where);
    }
    if (filled.ok()) {
      filled = FillEach(schema::kWhatIfLinkFields, pipeline.model->links, model.links, where);
    }
    if (filled.ok()) filled = whatif::ValidateModel(model);
  }
  schema::NoteNoCompleteIteration(&figures);
  return filled;
}

}  // namespace

absl::StatusOr<compare::RunFigures> AnalyzeFigures(const job::Result& result,
                                                   std::string_view source,
                                                   std::string_view tool_version) {
  compare::RunFigures run;
  run.source = std::string(source);
  const absl::StatusOr<compare::SchemaVersion> version =
      compare::ParseAnalyzeSchema(kAnalyzeSchema);
  BUBBLESCOPE_RETURN_IF_ERROR(version.status());
  run.schema_major = version->major;
  run.schema_minor = version->minor;
  run.tool_version = schema::AsWritten(tool_version);
  for (size_t i = 0; i < result.pipelines.size(); ++i) {
    const std::string where = absl::StrCat(std::string(source), ": pipelines[", i, "]");
    if (absl::Status filled =
            FillPipeline(result.pipelines[i], run.pipelines.emplace_back(), where);
        !filled.ok()) {
      return filled;
    }
  }
  std::vector<compare::FindingFigures> findings;
  if (absl::Status filled = FillEach(schema::kFindingFields, report_view::FindingsByCost(result),
                                     findings, absl::StrCat(std::string(source), ": findings"));
      !filled.ok()) {
    return filled;
  }
  schema::AttachFindings(std::move(findings), &run);
  return run;
}

}  // namespace bubblescope
