#include "report/diff_report.h"

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "report/compare_format.h"
#include "report/text_table.h"
#include "report/units.h"
#include "text/json_writer.h"
#include "text/one_line.h"

namespace bubblescope {
namespace {

using compare::Change;
using compare::DiffResult;
using compare::FindingChange;
using compare::FindingDiff;
using compare::LinkDiff;
using compare::PipelineDiff;
using compare::StageDiff;

struct NamedFigure {
  std::string_view name;   // the JSON key
  std::string_view label;  // the text report's row
  const Change* change;
  FigureUnit unit;
};

std::vector<NamedFigure> PipelineFigures(const PipelineDiff& pipeline) {
  return {
      {"bubble_fraction", "bubble", &pipeline.bubble_fraction, FigureUnit::kFraction},
      {"theoretical_bubble_fraction", "theoretical bubble", &pipeline.theoretical_bubble_fraction,
       FigureUnit::kFraction},
      {"excess_bubble_fraction", "excess bubble", &pipeline.excess_bubble_fraction,
       FigureUnit::kFraction},
      {"latency_p50_us", "latency p50", &pipeline.latency_p50_us, FigureUnit::kMicros},
      {"latency_p90_us", "latency p90", &pipeline.latency_p90_us, FigureUnit::kMicros},
      {"latency_max_us", "latency max", &pipeline.latency_max_us, FigureUnit::kMicros},
      {"complete_iterations", "complete iterations", &pipeline.complete_iterations,
       FigureUnit::kCount},
  };
}

std::vector<NamedFigure> StageFigures(const StageDiff& stage) {
  return {
      {"bubble_fraction", "bubble", &stage.bubble_fraction, FigureUnit::kFraction},
      {"peak_allocated_bytes", "peak_alloc", &stage.peak_allocated_bytes, FigureUnit::kBytes},
      {"peak_reserved_bytes", "peak_reserved", &stage.peak_reserved_bytes, FigureUnit::kBytes},
      {"fwd_us_per_microbatch", "fwd", &stage.forward_us, FigureUnit::kMicros},
      {"bwd_us_per_microbatch", "bwd", &stage.backward_us, FigureUnit::kMicros},
      {"wgt_us_per_microbatch", "wgt", &stage.weight_grad_us, FigureUnit::kMicros},
  };
}

std::vector<NamedFigure> LinkFigures(const LinkDiff& link) {
  return {
      {"transfer_us_median", "transfer", &link.transfer_us_median, FigureUnit::kMicros},
      {"wait_us", "wait", &link.wait_us, FigureUnit::kMicros},
  };
}

std::string OptionalRank(const std::optional<int32_t>& rank) {
  return rank.has_value() ? absl::StrCat(*rank) : "-";
}

std::string RankPair(const std::optional<std::pair<int32_t, int32_t>>& ranks) {
  return ranks.has_value() ? absl::StrCat(ranks->first, "->", ranks->second) : "-";
}

std::string Ranks(const std::vector<int32_t>& ranks) {
  return ranks.empty() ? "-" : absl::StrJoin(ranks, ",");
}

std::string SpreadText(const Change& change, FigureUnit unit) {
  if (!change.spread.has_value() || !change.Both()) return "";
  const std::string spread = unit == FigureUnit::kFraction
                                 ? absl::StrCat(Percent(*change.spread), " pts")
                                 : FigureText(change.spread, unit);
  return change.WithinSpread() ? absl::StrCat("within the spread (", spread, ")")
                               : absl::StrCat("beyond the spread (", spread, ")");
}

void AppendPipeline(const PipelineDiff& pipeline, std::string* out) {
  absl::StrAppend(out, "\n", compare::PipelineLabel(pipeline), ": ranks ", Ranks(pipeline.ranks_a),
                  " | ", Ranks(pipeline.ranks_b), " (paired by ",
                  std::string(compare::PairingName(pipeline.pairing)), ")\n");
  if (pipeline.shape_changes.empty()) {
    absl::StrAppend(out, "  shape: unchanged\n");
  } else {
    std::vector<std::string> changes;
    for (const compare::ShapeChange& change : pipeline.shape_changes) {
      changes.push_back(absl::StrCat(change.figure, " ", change.a, " -> ", change.b));
    }
    absl::StrAppend(out, "  shape changed: ", absl::StrJoin(changes, ", "), "\n");
  }
  // A side without a complete iteration shows "-" for its bubble and latency; here is why.
  for (const auto& [side, why] :
       {std::pair<const char*, const std::string*>{"A", &pipeline.no_complete_iteration_a},
        {"B", &pipeline.no_complete_iteration_b}}) {
    if (!why->empty()) {
      absl::StrAppend(out, "  ", side, ": no complete iteration: ", text::OneLine(*why), "\n");
    }
  }
  TextTable figures({{"figure", Align::kLeft}, {"A"}, {"B"}, {"delta"}, {"spread", Align::kLeft}});
  for (const NamedFigure& figure : PipelineFigures(pipeline)) {
    figures.AddRow({std::string(figure.label), FigureText(figure.change->a, figure.unit),
                    FigureText(figure.change->b, figure.unit),
                    DeltaText(*figure.change, figure.unit),
                    SpreadText(*figure.change, figure.unit)});
  }
  absl::StrAppend(out, figures.Render(2));

  if (!pipeline.stages.empty()) {
    absl::StrAppend(out, "  per stage (A -> B; fwd/bwd/wgt: ms per op):\n");
    std::vector<TextColumn> columns = {{"stage"}, {"ranks", Align::kLeft}};
    for (const NamedFigure& figure : StageFigures(pipeline.stages.front())) {
      columns.push_back({std::string(figure.label), Align::kLeft});
    }
    TextTable stages(std::move(columns));
    for (const StageDiff& stage : pipeline.stages) {
      std::vector<std::string> row = {
          absl::StrCat(stage.stage),
          absl::StrCat(OptionalRank(stage.rank_a), " | ", OptionalRank(stage.rank_b))};
      for (const NamedFigure& figure : StageFigures(stage)) {
        row.push_back(ChangeText(*figure.change, figure.unit));
      }
      stages.AddRow(std::move(row));
    }
    absl::StrAppend(out, stages.Render(2));
  }
  if (!pipeline.links.empty()) {
    absl::StrAppend(out, "  links (A -> B):\n");
    TextTable links({{"stages", Align::kLeft},
                     {"ranks", Align::kLeft},
                     {"transfer", Align::kLeft},
                     {"wait", Align::kLeft},
                     {"slow", Align::kLeft}});
    for (const LinkDiff& link : pipeline.links) {
      auto slow = [](const std::optional<bool>& flag) {
        return std::string(!flag.has_value() ? "-" : *flag ? "yes" : "no");
      };
      links.AddRow({absl::StrCat(link.src_stage, "->", link.dst_stage),
                    absl::StrCat(RankPair(link.ranks_a), " | ", RankPair(link.ranks_b)),
                    ChangeText(link.transfer_us_median, FigureUnit::kMicros),
                    ChangeText(link.wait_us, FigureUnit::kMicros),
                    absl::StrCat(slow(link.slow_a), " -> ", slow(link.slow_b))});
    }
    absl::StrAppend(out, links.Render(2));
  }
  int persisting = 0;
  std::string changed;
  for (const FindingDiff& finding : pipeline.findings) {
    if (finding.change == FindingChange::kPersisting) {
      ++persisting;
      continue;
    }
    const bool appeared = finding.change == FindingChange::kAppeared;
    absl::StrAppend(
        &changed, "    ", appeared ? "+ appeared   " : "- disappeared ", finding.kind, " (ranks ",
        Ranks(appeared ? finding.ranks_b : finding.ranks_a), ", ",
        FigureText(appeared ? finding.cost_us.b : finding.cost_us.a, FigureUnit::kMicros),
        " of rank time summed over the complete iterations): ", finding.message, "\n");
  }
  absl::StrAppend(out, "  findings: ", persisting, " on both sides",
                  changed.empty() ? ", none appeared or disappeared\n" : "\n", changed);
}

// A figure JSON cannot hold (a spread or delta of extreme values overflowing to infinity) is
// null, like one a side lacks.
void ChangeJson(const Change& change, JsonWriter& json) {
  auto optional = [&](std::string_view key, const std::optional<double>& value) {
    json.Key(key);
    if (value.has_value() && std::isfinite(*value)) {
      json.Double(*value);
    } else {
      json.Null();
    }
  };
  json.BeginObject();
  optional("a", change.a);
  optional("b", change.b);
  optional("delta", change.Both() ? std::optional<double>(change.Delta()) : std::nullopt);
  optional("relative", change.Relative());
  optional("spread", change.spread);
  json.BoolMember("within_spread", change.WithinSpread());
  json.EndObject();
}

void FiguresJson(const std::vector<NamedFigure>& figures, JsonWriter& json) {
  for (const NamedFigure& figure : figures) {
    json.Key(figure.name);
    ChangeJson(*figure.change, json);
  }
}

template <typename T, typename Write>
void OptionalJson(std::string_view key, const std::optional<T>& value, JsonWriter& json,
                  Write&& write) {
  json.Key(key);
  if (value.has_value()) {
    write(*value);
  } else {
    json.Null();
  }
}

void PipelineJson(const PipelineDiff& pipeline, JsonWriter& json) {
  json.BeginObject();
  json.StringMember("label", compare::PipelineLabel(pipeline));
  json.StringMember("pairing", compare::PairingName(pipeline.pairing));
  auto write_int = [&](int64_t value) { json.Int(value); };
  OptionalJson("index_a", pipeline.index_a, json, write_int);
  OptionalJson("index_b", pipeline.index_b, json, write_int);
  json.IntArrayMember("ranks_a", pipeline.ranks_a);
  json.IntArrayMember("ranks_b", pipeline.ranks_b);
  json.Key("shape_changes");
  json.BeginArray();
  for (const compare::ShapeChange& change : pipeline.shape_changes) {
    json.BeginObject();
    json.StringMember("figure", change.figure);
    json.StringMember("a", change.a);
    json.StringMember("b", change.b);
    json.EndObject();
  }
  json.EndArray();
  json.Key("figures");
  json.BeginObject();
  FiguresJson(PipelineFigures(pipeline), json);
  json.EndObject();
  json.Key("stages");
  json.BeginArray();
  for (const StageDiff& stage : pipeline.stages) {
    json.BeginObject();
    json.IntMember("stage", stage.stage);
    OptionalJson("rank_a", stage.rank_a, json, write_int);
    OptionalJson("rank_b", stage.rank_b, json, write_int);
    FiguresJson(StageFigures(stage), json);
    json.EndObject();
  }
  json.EndArray();
  json.Key("links");
  json.BeginArray();
  for (const LinkDiff& link : pipeline.links) {
    json.BeginObject();
    json.IntMember("src_stage", link.src_stage);
    json.IntMember("dst_stage", link.dst_stage);
    auto write_pair = [&](const std::pair<int32_t, int32_t>& ranks) {
      json.BeginArray();
      json.Int(ranks.first);
      json.Int(ranks.second);
      json.EndArray();
    };
    OptionalJson("ranks_a", link.ranks_a, json, write_pair);
    OptionalJson("ranks_b", link.ranks_b, json, write_pair);
    FiguresJson(LinkFigures(link), json);
    json.Key("gbps_median");
    ChangeJson(link.gbps_median, json);
    auto write_bool = [&](bool flag) { json.Bool(flag); };
    OptionalJson("slow_a", link.slow_a, json, write_bool);
    OptionalJson("slow_b", link.slow_b, json, write_bool);
    json.EndObject();
  }
  json.EndArray();
  json.Key("findings");
  json.BeginArray();
  for (const FindingDiff& finding : pipeline.findings) {
    json.BeginObject();
    json.StringMember("change", compare::FindingChangeName(finding.change));
    json.StringMember("kind", finding.kind);
    json.StringMember("severity", finding.severity);
    json.StringMember("message", finding.message);
    json.IntArrayMember("ranks_a", finding.ranks_a);
    json.IntArrayMember("ranks_b", finding.ranks_b);
    json.Key("cost_us");
    ChangeJson(finding.cost_us, json);
    json.EndObject();
  }
  json.EndArray();
  json.EndObject();
}

}  // namespace

std::string DiffText(const DiffResult& diff) {
  std::string out =
      absl::StrCat("bubblescope diff\n  A: ", diff.source_a, "\n  B: ", diff.source_b, "\n");
  for (const PipelineDiff& pipeline : diff.pipelines) AppendPipeline(pipeline, &out);
  return out;
}

absl::StatusOr<std::string> DiffJson(const DiffResult& diff, const std::string& tool_version) {
  JsonWriter json(JsonWriterOptions{.indent = 2});
  json.BeginObject();
  json.StringMember("schema", kDiffSchema);
  json.Key("tool");
  json.BeginObject();
  json.StringMember("name", "bubblescope");
  json.StringMember("version", tool_version);
  json.EndObject();
  json.StringMember("a", diff.source_a);
  json.StringMember("b", diff.source_b);
  json.Key("pipelines");
  json.BeginArray();
  for (const PipelineDiff& pipeline : diff.pipelines) PipelineJson(pipeline, json);
  json.EndArray();
  json.EndObject();
  absl::StatusOr<std::string> document = json.Finish();
  if (document.ok()) document->push_back('\n');
  return document;
}

}  // namespace bubblescope
