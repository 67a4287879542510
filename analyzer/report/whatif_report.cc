#include "report/whatif_report.h"

#include <cstdint>
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "report/text_table.h"
#include "report/units.h"
#include "report_view/report_view.h"
#include "text/json_writer.h"

namespace bubblescope {
namespace {

std::string Fits(const whatif::Prediction& prediction) {
  if (!prediction.fits_memory.has_value()) return "unknown";
  return *prediction.fits_memory ? "yes" : "no";
}

// The largest stage's predicted peak, "-" when unknown.
std::string PeakText(const whatif::Prediction& prediction) {
  const std::optional<int64_t> peak = report_view::LargestStagePeakBytes(prediction);
  return peak.has_value() ? GiB(*peak) : "-";
}

void AddRow(const std::string& label, const whatif::Prediction& prediction, TextTable* table) {
  if (!prediction.problem.empty()) {
    table->AddRow({label, "-", "-", "-", "-", prediction.problem});
    return;
  }
  table->AddRow({label, Millis(static_cast<double>(prediction.iteration_ns)),
                 Percent(prediction.bubble_fraction), PeakText(prediction), Fits(prediction), ""});
}

void PredictionJson(const whatif::Prediction& prediction, JsonWriter& json) {
  json.BeginObject();
  json.StringMember("schedule", sim::ScheduleName(prediction.candidate.schedule));
  json.IntMember("microbatches", prediction.candidate.microbatches);
  json.IntMember("virtual_stages", prediction.candidate.virtual_stages);
  json.BoolMember("same_global_batch", prediction.candidate.same_global_batch);
  json.Key("layers_per_stage");
  if (prediction.candidate.layers_per_stage.empty()) {
    json.Null();
  } else {
    json.BeginArray();
    for (int32_t layers : prediction.candidate.layers_per_stage) json.Int(layers);
    json.EndArray();
  }
  if (!prediction.problem.empty()) {
    json.StringMember("problem", prediction.problem);
    json.EndObject();
    return;
  }
  json.DecimalMember("iteration_us", prediction.iteration_ns, 3);
  json.DoubleMember("bubble_fraction", prediction.bubble_fraction);
  WritePeaksByStage("peak_allocated_bytes_by_stage", prediction, json);
  json.Key("fits_memory");
  if (prediction.fits_memory.has_value()) {
    json.Bool(*prediction.fits_memory);
  } else {
    json.Null();
  }
  json.EndObject();
}

}  // namespace

void WritePeaksByStage(std::string_view key, const whatif::Prediction& prediction,
                       JsonWriter& json) {
  json.Key(key);
  if (prediction.memory.empty()) {
    json.Null();
    return;
  }
  json.BeginArray();
  for (const whatif::StageMemory& stage : prediction.memory) json.Int(stage.peak_allocated_bytes);
  json.EndArray();
}

std::string CandidateRowLabel(const whatif::Candidate& candidate, int32_t measured_microbatches) {
  std::string label = whatif::CandidateLabel(candidate);
  if (candidate.microbatches != measured_microbatches && !candidate.same_global_batch) {
    absl::StrAppend(&label, " (microbatch size kept)");
  }
  return label;
}

std::string WhatIfText(const std::vector<PipelineWhatIf>& pipelines) {
  std::string out;
  if (pipelines.empty()) return "what-if: no pipeline found\n";
  for (const PipelineWhatIf& pipeline : pipelines) {
    absl::StrAppend(&out, "pipeline ", pipeline.pipeline, ": ranks ",
                    absl::StrJoin(pipeline.ranks, ","), "\n");
    if (!pipeline.result.ok()) {
      absl::StrAppend(&out, "  no prediction: ", std::string(pipeline.result.status().message()),
                      "\n");
      continue;
    }
    const whatif::Result& result = *pipeline.result;
    absl::StrAppend(&out, "  measured ", whatif::CandidateLabel(result.baseline.candidate),
                    ": iteration ", Millis(static_cast<double>(result.measured_iteration_ns)),
                    " ms (median), bubble ", Percent(result.measured_bubble_fraction), "%\n");
    TextTable table({{"configuration", Align::kLeft},
                     {"iteration_ms"},
                     {"bubble%"},
                     {"peak_alloc"},
                     {"fits", Align::kLeft},
                     {"", Align::kLeft}});
    AddRow("as measured, modelled", result.baseline, &table);
    for (const whatif::Prediction& prediction : result.candidates) {
      AddRow(CandidateRowLabel(prediction.candidate, result.baseline.candidate.microbatches),
             prediction, &table);
    }
    absl::StrAppend(&out, table.Render(2));
    for (const std::string& note : result.notes) absl::StrAppend(&out, "  note: ", note, "\n");
  }
  absl::StrAppend(
      &out,
      "\nPredicted by the schedule simulator from the measured per-stage op times, link transfer "
      "times and memory floor and peak (no launch gaps, no optimizer step: compare \"as "
      "measured, modelled\" with the measured iteration). peak_alloc is the largest stage's "
      "predicted peak; fits: its rise stays within the memory the measured peak left free. "
      "Another m keeps either the microbatch size (each microbatch as measured, so an iteration "
      "carries m'/m times the samples and takes longer) or, marked \"same global batch\" "
      "(--same-global-batch), the samples per iteration, as analyze's findings do.\n");
  return out;
}

absl::StatusOr<std::string> WhatIfJson(const std::vector<PipelineWhatIf>& pipelines,
                                       const std::string& tool_version) {
  JsonWriter json;
  json.BeginObject();
  json.StringMember("schema", "bubblescope.whatif/1");
  json.StringMember("tool_version", tool_version);
  json.Key("pipelines");
  json.BeginArray();
  for (const PipelineWhatIf& pipeline : pipelines) {
    json.BeginObject();
    json.IntMember("pipeline", pipeline.pipeline);
    json.IntArrayMember("ranks", pipeline.ranks);
    if (!pipeline.result.ok()) {
      json.StringMember("problem", std::string(pipeline.result.status().message()));
      json.EndObject();
      continue;
    }
    const whatif::Result& result = *pipeline.result;
    json.DecimalMember("measured_iteration_us", result.measured_iteration_ns, 3);
    json.DoubleMember("measured_bubble_fraction", result.measured_bubble_fraction);
    json.Key("measured_modelled");
    PredictionJson(result.baseline, json);
    json.Key("candidates");
    json.BeginArray();
    for (const whatif::Prediction& prediction : result.candidates) PredictionJson(prediction, json);
    json.EndArray();
    json.Key("notes");
    json.BeginArray();
    for (const std::string& note : result.notes) json.String(note);
    json.EndArray();
    json.EndObject();
  }
  json.EndArray();
  json.EndObject();
  return json.Finish();
}

}  // namespace bubblescope
