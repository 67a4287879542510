#include "report/replica_report.h"

#include <algorithm>
#include <cmath>
#include <string_view>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "report/html_pipeline.h"
#include "report/text_table.h"
#include "report/units.h"

namespace bubblescope {
namespace {

// A spread as "min / median / max" in one unit.
std::string Triple(const job::Spread& spread, const std::function<std::string(double)>& format) {
  return absl::StrCat(format(spread.min), " / ", format(spread.median), " / ", format(spread.max));
}

std::string RankRuns(const std::vector<int32_t>& ranks) {
  constexpr size_t kShown = 8;
  if (ranks.size() <= kShown) return absl::StrJoin(ranks, ",");
  return absl::StrCat(absl::StrJoin(ranks.begin(), ranks.begin() + kShown - 1, ","), ",...,",
                      ranks.back());
}

// Where the largest value is, or "-" when every replica has the same (no replica stands out).
std::string MaxIn(const job::Spread& spread) {
  return spread.max > spread.min ? absl::StrCat("p", spread.max_pipeline) : "-";
}

enum class Unit { kFraction, kMicros, kBytes };

void SpreadJson(std::string_view key, const std::optional<job::Spread>& spread, Unit unit,
                JsonWriter& json) {
  json.Key(key);
  if (!spread.has_value()) {
    json.Null();
    return;
  }
  json.BeginObject();
  for (const auto& [name, value] : {std::pair<std::string_view, double>{"min", spread->min},
                                    {"median", spread->median},
                                    {"max", spread->max}}) {
    switch (unit) {
      case Unit::kFraction:
        json.DoubleMember(name, value);
        break;
      case Unit::kMicros:
        json.DecimalMember(name, RoundToNs(value), 3);
        break;
      case Unit::kBytes:
        json.IntMember(name, std::llround(value));
        break;
    }
  }
  json.IntMember("min_pipeline", spread->min_pipeline);
  json.IntMember("max_pipeline", spread->max_pipeline);
  json.EndObject();
}

// A stage's rows of a spread table: its min, median and max, and "max in" where some figure
// differs between the replicas.
template <typename Stage>
void AddStageRows(int32_t stage_number, const Stage& stage,
                  const std::vector<StageColumn<Stage>>& columns, TextTable& table) {
  std::vector<std::string> rows[4] = {
      {absl::StrCat(stage_number), "min"}, {"", "median"}, {"", "max"}, {"", "max in"}};
  for (const StageColumn<Stage>& column : columns) {
    const std::optional<job::Spread> spread = column.spread(stage);
    rows[0].push_back(spread ? column.format(spread->min) : "-");
    rows[1].push_back(spread ? column.format(spread->median) : "-");
    rows[2].push_back(spread ? column.format(spread->max) : "-");
    rows[3].push_back(spread ? MaxIn(*spread) : "-");
  }
  const bool differs = std::any_of(rows[3].begin() + 2, rows[3].end(),
                                   [](const std::string& cell) { return cell != "-"; });
  for (size_t r = 0; r < (differs ? 4 : 3); ++r) table.AddRow(std::move(rows[r]));
}

template <typename Stage>
TextTable StageTable(const std::vector<StageColumn<Stage>>& columns) {
  std::vector<TextColumn> headers = {{"stage"}, {"", Align::kLeft}};
  for (const StageColumn<Stage>& column : columns) headers.push_back({column.header});
  return TextTable(std::move(headers));
}

// The per-rank table's columns over a set's ranks, as the table spells them.
std::vector<StageColumn<job::RankSummarySpread>> RankSummaryColumns(const job::ReplicaSet& set) {
  using Row = job::RankSummarySpread;
  const auto field = [](job::Spread Row::*member) {
    return [member](const Row& stage) -> std::optional<job::Spread> { return stage.*member; };
  };
  const auto ms = [](double ns) { return Millis(ns); };
  const auto count = [](double value) { return absl::StrCat(std::llround(value)); };
  std::vector<StageColumn<Row>> columns = {
      {"span_ms", field(&Row::span_ns), ms},
      {"compute_ms", field(&Row::compute_ns), ms},
      {"comm_ms", field(&Row::comm_ns), ms},
      {"memcpy_ms", field(&Row::memcpy_ns), ms},
      {"idle_ms", field(&Row::idle_ns), ms},
      {"idle%", field(&Row::idle_fraction), [](double fraction) { return Percent(fraction); }},
      {"kernels", field(&Row::kernels), count},
      {"comm_ops", field(&Row::comm_ops), count},
      {"memcpys", field(&Row::memcpys), count},
      {"steps", field(&Row::steps), count}};
  for (const auto& column : {std::pair<const char*, std::optional<job::Spread> Row::*>{
                                 "peak_alloc", &Row::peak_allocated_bytes},
                             {"peak_reserved", &Row::peak_reserved_bytes}}) {
    // Not a structured binding: Clang before 16 cannot capture one in a lambda.
    const auto member = column.second;
    const bool any =
        std::any_of(set.rank_summaries.begin(), set.rank_summaries.end(),
                    [member](const Row& stage) { return (stage.*member).has_value(); });
    if (any) {
      columns.push_back(
          {column.first, [member](const Row& stage) { return stage.*member; }, RoundedBinaryBytes});
    }
  }
  return columns;
}

}  // namespace

FoldedRanks FoldRankTable(const job::Result& result) {
  FoldedRanks folded;
  for (size_t s = 0; s < result.replica_sets.size(); ++s) {
    const job::ReplicaSet& set = result.replica_sets[s];
    if (set.rank_summaries.empty()) continue;
    size_t ranks = 0;
    for (const job::RankSummarySpread& stage : set.rank_summaries) {
      folded.ranks.insert(folded.ranks.end(), stage.ranks.begin(), stage.ranks.end());
      ranks += stage.ranks.size();
    }
    absl::StrAppend(&folded.text, "replica set ", s, " (pipelines ", IndexRuns(set.pipelines),
                    "): its ", ranks, " ranks per stage over the ", set.pipelines.size(),
                    " replicas; \"max in\" names the pipeline with the largest value:\n");
    const std::vector<StageColumn<job::RankSummarySpread>> columns = RankSummaryColumns(set);
    TextTable table = StageTable(columns);
    for (const job::RankSummarySpread& stage : set.rank_summaries) {
      AddStageRows(stage.stage, stage, columns, table);
    }
    absl::StrAppend(&folded.text, table.Render(2));
  }
  if (folded.text.empty()) return folded;
  folded.text = absl::StrCat(
      "the ranks of the replica sets, folded (min / median / max over the replicas; the JSON "
      "report lists every rank):\n",
      folded.text);
  std::sort(folded.ranks.begin(), folded.ranks.end());
  return folded;
}

std::vector<SpreadColumn> SpreadColumns(const job::ReplicaSet& set) {
  const auto ms = [](double ns) { return Millis(ns); };
  const auto field = [](job::Spread job::StageSpread::*member) {
    return [member](const job::StageSpread& stage) -> std::optional<job::Spread> {
      return stage.*member;
    };
  };
  const auto optional = [](std::optional<job::Spread> job::StageSpread::*member) {
    return [member](const job::StageSpread& stage) { return stage.*member; };
  };
  std::vector<SpreadColumn> columns = {{"bubble%", field(&job::StageSpread::bubble_fraction),
                                        [](double fraction) { return Percent(fraction); }},
                                       {"compute_ms", field(&job::StageSpread::compute_ns), ms},
                                       {"fill_ms", field(&job::StageSpread::fill_ns), ms},
                                       {"drain_ms", field(&job::StageSpread::drain_ns), ms},
                                       {"comm_wait_ms", field(&job::StageSpread::comm_wait_ns), ms},
                                       {"empty_ms", field(&job::StageSpread::empty_ns), ms}};
  const auto any = [&set](std::optional<job::Spread> job::StageSpread::*member) {
    for (const job::StageSpread& stage : set.stages) {
      if ((stage.*member).has_value()) return true;
    }
    return false;
  };
  const std::pair<const char*, std::optional<job::Spread> job::StageSpread::*> optional_columns[] =
      {{"forward_ms", &job::StageSpread::forward_ns},
       {"backward_ms", &job::StageSpread::backward_ns},
       {"weight_grad_ms", &job::StageSpread::weight_grad_ns}};
  for (const auto& [header, member] : optional_columns) {
    if (any(member)) columns.push_back({header, optional(member), ms});
  }
  if (any(&job::StageSpread::peak_allocated_bytes)) {
    columns.push_back(
        {"peak_alloc", optional(&job::StageSpread::peak_allocated_bytes), RoundedBinaryBytes});
  }
  return columns;
}

std::string IndexRuns(const std::vector<int32_t>& indices) {
  std::vector<std::string> runs;
  for (size_t i = 0; i < indices.size();) {
    size_t j = i;
    while (j + 1 < indices.size() && indices[j + 1] == indices[j] + 1) ++j;
    runs.push_back(j == i ? absl::StrCat(indices[i])
                          : absl::StrCat(indices[i], j == i + 1 ? "," : "-", indices[j]));
    i = j + 1;
  }
  return absl::StrJoin(runs, ",");
}

std::vector<std::string> ReplicaSetHeadline(const job::Result& result, size_t set_index) {
  const job::ReplicaSet& set = result.replica_sets[set_index];
  const job::Pipeline& first = result.pipelines[static_cast<size_t>(set.pipelines.front())];
  std::vector<std::string> lines = {absl::StrCat(
      "replica set ", set_index, ": pipelines ", IndexRuns(set.pipelines), ", ",
      set.pipelines.size(), " data-parallel copies of ", html::ShapeText(first),
      set.inferred_from_ranks
          ? " (each stage's ranks share a group without a description, inferred as data "
            "parallel from the groups' ranks)"
          : absl::StrCat(" (each stage's ranks share a group described as ",
                         absl::StrJoin(set.group_descriptions, " or "), ")"))};
  const auto percent = [](double fraction) { return Percent(fraction); };
  std::string figures = absl::StrCat("bubble ", Triple(set.bubble_fraction, percent),
                                     "% (min / median / max over the replicas)");
  if (set.excess_bubble_fraction.has_value()) {
    absl::StrAppend(&figures, "; excess ", Triple(*set.excess_bubble_fraction, percent), " points");
  }
  absl::StrAppend(&figures, "; iteration median ",
                  Triple(set.latency_p50_ns, [](double ns) { return Millis(ns); }), " ms");
  lines.push_back(std::move(figures));
  return lines;
}

std::string ReplicaSetText(const job::Result& result, size_t set_index) {
  const job::ReplicaSet& set = result.replica_sets[set_index];
  const std::vector<std::string> headline = ReplicaSetHeadline(result, set_index);
  std::string out = absl::StrCat("\n", headline.front(), "\n");
  for (size_t i = 1; i < headline.size(); ++i) absl::StrAppend(&out, "  ", headline[i], "\n");
  const size_t worst = static_cast<size_t>(set.worst_pipeline);
  absl::StrAppend(&out, "  worst replica (largest bubble): pipeline ", worst, ", ranks ",
                  RankRuns(result.pipelines[worst].bubble.ranks), "; printed in full below\n");
  absl::StrAppend(&out, "  per stage over the ", set.pipelines.size(),
                  " replicas, ms per complete iteration and per microbatch; \"max in\" names the "
                  "pipeline with the largest value:\n");
  const std::vector<SpreadColumn> columns = SpreadColumns(set);
  TextTable table = StageTable(columns);
  for (const job::StageSpread& stage : set.stages) AddStageRows(stage.stage, stage, columns, table);
  absl::StrAppend(&out, table.Render(2));
  return out;
}

void WriteReplicaSetsMember(const std::vector<job::ReplicaSet>& sets, JsonWriter& json) {
  json.Key("replica_sets");
  json.BeginArray();
  for (const job::ReplicaSet& set : sets) {
    json.BeginObject();
    json.IntArrayMember("pipelines", set.pipelines);
    json.Key("group_descriptions");
    json.BeginArray();
    for (const std::string& description : set.group_descriptions) json.String(description);
    json.EndArray();
    // Only for inferred groups: a report of described ones stays as it was.
    if (set.inferred_from_ranks) json.StringMember("dp_groups_source", "structure");
    json.IntMember("worst_pipeline", set.worst_pipeline);
    SpreadJson("bubble_fraction", set.bubble_fraction, Unit::kFraction, json);
    SpreadJson("excess_bubble_fraction", set.excess_bubble_fraction, Unit::kFraction, json);
    SpreadJson("latency_p50_us", set.latency_p50_ns, Unit::kMicros, json);
    json.Key("stages");
    json.BeginArray();
    for (const job::StageSpread& stage : set.stages) {
      json.BeginObject();
      json.IntMember("stage", stage.stage);
      json.IntArrayMember("ranks", stage.ranks);
      SpreadJson("bubble_fraction", stage.bubble_fraction, Unit::kFraction, json);
      SpreadJson("compute_us_per_iteration", stage.compute_ns, Unit::kMicros, json);
      SpreadJson("fill_us_per_iteration", stage.fill_ns, Unit::kMicros, json);
      SpreadJson("drain_us_per_iteration", stage.drain_ns, Unit::kMicros, json);
      SpreadJson("comm_wait_us_per_iteration", stage.comm_wait_ns, Unit::kMicros, json);
      SpreadJson("empty_us_per_iteration", stage.empty_ns, Unit::kMicros, json);
      SpreadJson("fwd_us_per_microbatch", stage.forward_ns, Unit::kMicros, json);
      SpreadJson("bwd_us_per_microbatch", stage.backward_ns, Unit::kMicros, json);
      SpreadJson("wgt_us_per_microbatch", stage.weight_grad_ns, Unit::kMicros, json);
      SpreadJson("peak_allocated_bytes", stage.peak_allocated_bytes, Unit::kBytes, json);
      json.EndObject();
    }
    json.EndArray();
    json.EndObject();
  }
  json.EndArray();
}

}  // namespace bubblescope
