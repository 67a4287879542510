#include "report/rebalance_report.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "compare/report_schema.h"
#include "report/units.h"
#include "report/whatif_report.h"

namespace bubblescope {
namespace {

std::string PercentSign(double fraction) { return absl::StrCat(Percent(fraction), "%"); }

void Prediction(std::string_view prefix, const rebalance::Prediction& prediction,
                JsonWriter& json) {
  const absl::string_view suffix(prefix.data(), prefix.size());
  json.DecimalMember(absl::StrCat("predicted_iteration_us_", suffix), prediction.iteration_ns, 3);
  json.DoubleMember(absl::StrCat("predicted_bubble_fraction_", suffix), prediction.bubble_fraction);
}

}  // namespace

std::string RebalanceText(const job::RebalanceFigures& figures) {
  const bool from_user = figures.source == job::LayerCountSource::kUser;
  std::string out =
      figures.layers_per_stage.empty()
          ? std::string("  rebalance (layer annotations): ")
          : absl::StrCat("  rebalance (layers ", absl::StrJoin(figures.layers_per_stage, ","),
                         from_user ? " from --layers-per-stage" : " from annotations", "): ");
  if (!figures.result.ok()) {
    absl::StrAppend(&out, "not possible: ", figures.result.status().message(), "\n");
    return out;
  }
  const rebalance::Result& result = *figures.result;
  if (!result.suggested) {
    absl::StrAppend(&out, "no single move of layers shortens the predicted iteration (",
                    Millis(result.before.iteration_ns), " ms) by ", PercentSign(result.min_gain),
                    " or more; ", result.moves_simulated, " moves simulated\n");
    return out;
  }
  absl::StrAppend(&out, "move ", result.layers, result.layers == 1 ? " layer" : " layers",
                  " from stage ", result.from_stage, " (rank ", result.from_rank, ") to stage ",
                  result.to_stage, " (rank ", result.to_rank, ") -> layers ",
                  absl::StrJoin(result.layers_after, ","), "\n");
  const bool modelled_ok = figures.predicted.has_value() &&
                           !figures.predicted->candidates.empty() &&
                           figures.predicted->candidates.front().problem.empty();
  if (!modelled_ok) {
    // Without the what-if model, the search's own simulation is the only prediction.
    absl::StrAppend(&out, "    predicted iteration ", Millis(result.before.iteration_ns), " -> ",
                    Millis(result.after.iteration_ns), " ms, bubble ",
                    PercentSign(result.before.bubble_fraction), " -> ",
                    PercentSign(result.after.bubble_fraction),
                    " (simulated from the per-stage times on free links)\n");
    return out;
  }
  // The move is found by simulating each one on the per-stage times; its prediction is quoted
  // from the what-if model alone (measured links, memory), the one every saving comes from.
  const whatif::Result& modelled = *figures.predicted;
  const whatif::Prediction& after = modelled.candidates.front();
  absl::StrAppend(&out, "    predicted iteration ", Millis(modelled.baseline.iteration_ns),
                  " ms as modelled (measured ", Millis(modelled.measured_iteration_ns), " ms) -> ",
                  Millis(after.iteration_ns), " ms, bubble ",
                  PercentSign(modelled.baseline.bubble_fraction), " -> ",
                  PercentSign(after.bubble_fraction), " (the what-if model, measured links)\n");
  if (after.memory.size() != modelled.baseline.memory.size()) return out;
  for (size_t s = 0; s < after.memory.size(); ++s) {
    const int64_t before = modelled.baseline.memory[s].peak_allocated_bytes;
    const int64_t peak = after.memory[s].peak_allocated_bytes;
    if (peak <= before) continue;
    absl::StrAppend(&out, "    stage ", s, " (rank ", after.memory[s].rank, ") takes layers: peak ",
                    GiB(before), " -> ", GiB(peak), "\n");
  }
  absl::StrAppend(&out, "    ",
                  !after.fits_memory.has_value()
                      ? "device capacity unknown: whether the move fits is not known"
                  : *after.fits_memory ? "the move fits the measured memory headroom"
                                       : "the move does not fit the measured memory headroom",
                  "\n");
  return out;
}

void WriteRebalanceJson(const job::RebalanceFigures& figures, JsonWriter& json) {
  json.BeginObject();
  json.IntArrayMember("layers_per_stage", figures.layers_per_stage);
  json.StringMember("layers_source", job::LayerCountSourceName(figures.source));
  json.Key("unavailable");
  if (!figures.result.ok()) {
    json.String(std::string(figures.result.status().message()));
    json.EndObject();
    return;
  }
  json.Null();
  const rebalance::Result& result = *figures.result;
  json.BoolMember("suggested", result.suggested);
  json.IntMember("moves_simulated", result.moves_simulated);
  Prediction("before", result.before, json);
  if (result.suggested) {
    json.IntMember("from_stage", result.from_stage);
    json.IntMember("to_stage", result.to_stage);
    json.IntMember("from_rank", result.from_rank);
    json.IntMember("to_rank", result.to_rank);
    json.IntMember("layers", result.layers);
    compare::schema::WriteFields(compare::schema::kRebalanceFields, result, json);
    Prediction("after", result.after, json);
  }
  // The move through the what-if model: measured links and memory.
  json.Key("with_measured_links");
  if (!figures.predicted.has_value() || figures.predicted->candidates.empty() ||
      !figures.predicted->candidates.front().problem.empty()) {
    json.Null();
    json.EndObject();
    return;
  }
  const whatif::Result& modelled = *figures.predicted;
  const whatif::Prediction& after = modelled.candidates.front();
  json.BeginObject();
  json.DecimalMember("measured_iteration_us", modelled.measured_iteration_ns, 3);
  json.DecimalMember("iteration_us_before", modelled.baseline.iteration_ns, 3);
  json.DecimalMember("iteration_us_after", after.iteration_ns, 3);
  WritePeaksByStage("peak_allocated_bytes_by_stage_before", modelled.baseline, json);
  WritePeaksByStage("peak_allocated_bytes_by_stage_after", after, json);
  json.Key("fits_memory");
  if (after.fits_memory.has_value()) {
    json.Bool(*after.fits_memory);
  } else {
    json.Null();
  }
  json.EndObject();
  json.EndObject();
}

}  // namespace bubblescope
