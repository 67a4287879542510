#include "checked_figures.h"

#include <bit>
#include <charconv>
#include <cmath>
#include <map>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "bubblescope/idle_split.h"
#include "pipeline/schedule_inference.h"

namespace bubblescope::bench {
namespace {

using Value = std::variant<int64_t, double, std::string>;

// This Abseil predates std::string_view as absl::string_view, so views cross over by hand.
absl::string_view AsAbsl(std::string_view view) { return {view.data(), view.size()}; }

void Add(Figures& figures, std::string field, std::string where, Value value) {
  figures.push_back(Figure{std::move(field), std::move(where), std::move(value)});
}

std::string StageWhere(int32_t stage) { return absl::StrCat("stage ", stage); }
std::string RankWhere(int32_t rank) { return absl::StrCat("rank ", rank); }
std::string IterationWhere(size_t index) { return absl::StrCat("iteration ", index); }
std::string IterationRankWhere(size_t index, int32_t rank) {
  return absl::StrCat("iteration ", index, " rank ", rank);
}

// The per-iteration, per-rank split of idle time, which both sides hold as an IdleSplit, and the
// bounds of the rank's work on the reference clock.
void AddRankSplit(Figures& figures, const std::string& where, TimeNs first_compute_start,
                  TimeNs last_compute_end, const IdleSplit& split) {
  Add(figures, "iteration.rank.first_compute_start_ns", where, first_compute_start);
  Add(figures, "iteration.rank.last_compute_end_ns", where, last_compute_end);
  Add(figures, "iteration.rank.compute_ns", where, split.compute);
  Add(figures, "iteration.rank.idle_ns", where, split.idle);
  Add(figures, "iteration.rank.fill_ns", where, split.fill);
  Add(figures, "iteration.rank.drain_ns", where, split.drain);
  Add(figures, "iteration.rank.stall_ns", where, split.stall);
  Add(figures, "iteration.rank.comm_wait_ns", where, split.comm_wait);
  Add(figures, "iteration.rank.empty_ns", where, split.empty);
}

// One op type's time on one stage: count, mean and p90 (analysis: OpStats, truth: OpTimeStats).
void AddOpStats(Figures& figures, std::string_view op, const std::string& where, int64_t count,
                double mean_ns, TimeNs p90_ns) {
  Add(figures, absl::StrCat("stage.", AsAbsl(op), ".count"), where, count);
  Add(figures, absl::StrCat("stage.", AsAbsl(op), ".mean_ns"), where, mean_ns);
  Add(figures, absl::StrCat("stage.", AsAbsl(op), ".p90_ns"), where, p90_ns);
}

// The family name schedule inference gives a simulated schedule: zb-h1 is of the "zb" family,
// and with one microbatch 1f1b runs exactly gpipe's order, so it is reported as gpipe.
std::string ExpectedFamily(const sim::Config& config) {
  if (config.schedule == sim::Schedule::kZeroBubbleH1) return "zb";
  if (config.schedule == sim::Schedule::k1F1B && config.microbatches == 1) return "gpipe";
  return std::string(sim::ScheduleName(config.schedule));
}

// GoogleTest's DOUBLE_EQ: equal, or at most 4 representable doubles apart.
bool WithinFourUlps(double a, double b) {
  if (a == b) return true;
  if (std::isnan(a) || std::isnan(b)) return false;
  constexpr uint64_t kSign = uint64_t{1} << 63;
  // Orders the bit patterns of all doubles monotonically, negative ones below positive ones.
  auto ordered = [](double x) {
    const uint64_t bits = std::bit_cast<uint64_t>(x);
    return (bits & kSign) != 0 ? ~bits + 1 : bits | kSign;
  };
  const uint64_t x = ordered(a);
  const uint64_t y = ordered(b);
  return (x > y ? x - y : y - x) <= 4;
}

bool SameValue(const Value& a, const Value& b) {
  if (a.index() != b.index()) return false;
  if (const double* x = std::get_if<double>(&a)) return WithinFourUlps(*x, std::get<double>(b));
  return a == b;
}

std::string ShortestDouble(double value) {
  char buffer[32];
  auto [end, error] = std::to_chars(buffer, buffer + sizeof(buffer), value);
  return error == std::errc() ? std::string(buffer, end) : std::string("?");
}

std::string Describe(const Value& value) {
  if (const int64_t* integer = std::get_if<int64_t>(&value)) return absl::StrCat(*integer);
  if (const double* real = std::get_if<double>(&value)) return ShortestDouble(*real);
  return absl::StrCat("\"", std::get<std::string>(value), "\"");
}

}  // namespace

Figures FiguresOfJob(const job::Result& result) {
  Figures figures;
  Add(figures, "pipelines", "", static_cast<int64_t>(result.pipelines.size()));
  if (result.pipelines.empty()) return figures;
  const job::Pipeline& pipeline = result.pipelines.front();

  if (!pipeline.shape.has_value()) {
    Add(figures, "shape", "", absl::StrCat("not inferred: ", pipeline.shape_problem));
  } else {
    const schedule_inference::Result& shape = *pipeline.shape;
    Add(figures, "shape", "", std::string("inferred"));
    Add(figures, "p", "", int64_t{shape.p});
    Add(figures, "m", "", int64_t{shape.m});
    Add(figures, "v", "", int64_t{shape.v});
    Add(figures, "family", "", std::string(schedule_inference::ScheduleFamilyName(shape.family)));
    Add(figures, "stage_order", "", absl::StrJoin(shape.stage_order, ","));
    Add(figures, "slowest_stage", "", int64_t{shape.slowest_stage});
    for (const schedule_inference::StageFigures& stage : shape.stages) {
      const std::string where = StageWhere(stage.stage);
      Add(figures, "stage.rank", where, int64_t{stage.rank});
      AddOpStats(figures, "forward", where, stage.forward.count, stage.forward.mean_ns,
                 stage.forward.p90_ns);
      AddOpStats(figures, "backward", where, stage.backward.count, stage.backward.mean_ns,
                 stage.backward.p90_ns);
      AddOpStats(figures, "weight_grad", where, stage.weight_grad.count, stage.weight_grad.mean_ns,
                 stage.weight_grad.p90_ns);
      Add(figures, "stage.mean_total_ns", where, stage.mean_total_ns);
    }
  }
  for (const clock_alignment::RankOffset& offset : pipeline.crossrank.offsets) {
    Add(figures, "clock_offset_ns", RankWhere(offset.rank),
        offset.aligned ? Value(offset.offset_ns) : Value(std::string("not aligned")));
  }

  const bubble::Result& bubble = pipeline.bubble;
  Add(figures, "complete_iterations", "", bubble.complete_iterations);
  Add(figures, "idle_ns", "", bubble.idle);
  Add(figures, "capacity_ns", "", bubble.capacity);
  Add(figures, "bubble_fraction", "", bubble.bubble_fraction);
  Add(figures, "latency.iterations", "", bubble.latency.iterations);
  Add(figures, "latency.p50_ns", "", bubble.latency.p50);
  Add(figures, "latency.p90_ns", "", bubble.latency.p90);
  Add(figures, "latency.max_ns", "", bubble.latency.max);
  for (size_t i = 0; i < bubble.iterations.size(); ++i) {
    const bubble::IterationFigures& iteration = bubble.iterations[i];
    const std::string where = IterationWhere(i);
    Add(figures, "iteration.number", where, iteration.number);
    Add(figures, "iteration.complete", where, int64_t{iteration.complete ? 1 : 0});
    Add(figures, "iteration.window_start_ns", where, iteration.window_start);
    Add(figures, "iteration.window_end_ns", where, iteration.window_end);
    Add(figures, "iteration.idle_ns", where, iteration.idle);
    Add(figures, "iteration.bubble_fraction", where, iteration.bubble_fraction);
    for (const bubble::RankIterationFigures& rank : iteration.ranks) {
      AddRankSplit(figures, IterationRankWhere(i, rank.rank), rank.first_compute_start,
                   rank.last_compute_end, rank.split);
    }
  }
  for (const bubble::RankTotals& rank : bubble.per_rank) {
    Add(figures, "peak_allocated_bytes", RankWhere(rank.rank), rank.memory.allocated_bytes);
    Add(figures, "peak_reserved_bytes", RankWhere(rank.rank), rank.memory.reserved_bytes);
  }
  return figures;
}

Figures FiguresOfTruth(const sim::Config& config, const sim::Truth& truth) {
  auto offset_of = [&](int32_t rank) {
    return config.clock_offsets_ns.empty() ? TimeNs{0}
                                           : config.clock_offsets_ns[static_cast<size_t>(rank)];
  };
  const TimeNs reference = truth.stage_to_rank.empty() ? 0 : offset_of(truth.stage_to_rank[0]);
  Figures figures;
  Add(figures, "pipelines", "", int64_t{1});
  Add(figures, "shape", "", std::string("inferred"));
  Add(figures, "p", "", int64_t{truth.stages});
  Add(figures, "m", "", int64_t{truth.microbatches});
  Add(figures, "v", "", int64_t{truth.virtual_stages});
  Add(figures, "family", "", ExpectedFamily(config));
  Add(figures, "stage_order", "", absl::StrJoin(truth.stage_to_rank, ","));
  Add(figures, "slowest_stage", "", int64_t{truth.slowest_stage});
  for (const sim::StageTruth& stage : truth.per_stage) {
    const std::string where = StageWhere(stage.stage);
    Add(figures, "stage.rank", where, int64_t{stage.rank});
    AddOpStats(figures, "forward", where, stage.forward.count, stage.forward.mean_ns,
               stage.forward.p90_ns);
    AddOpStats(figures, "backward", where, stage.backward.count, stage.backward.mean_ns,
               stage.backward.p90_ns);
    AddOpStats(figures, "weight_grad", where, stage.weight_grad.count, stage.weight_grad.mean_ns,
               stage.weight_grad.p90_ns);
    Add(figures, "stage.mean_total_ns", where, stage.mean_total_ns);
  }
  // The analysis lists offsets in stage order, relative to the first stage's rank.
  for (int32_t rank : truth.stage_to_rank) {
    Add(figures, "clock_offset_ns", RankWhere(rank), offset_of(rank) - reference);
  }

  const auto iterations = static_cast<int64_t>(truth.iterations.size());
  Add(figures, "complete_iterations", "", iterations);
  Add(figures, "idle_ns", "", truth.idle_ns);
  Add(figures, "capacity_ns", "", truth.capacity_ns);
  Add(figures, "bubble_fraction", "", truth.bubble_fraction);
  Add(figures, "latency.iterations", "", iterations);
  Add(figures, "latency.p50_ns", "", truth.latency_p50_ns);
  Add(figures, "latency.p90_ns", "", truth.latency_p90_ns);
  Add(figures, "latency.max_ns", "", truth.latency_max_ns);
  for (size_t i = 0; i < truth.iterations.size(); ++i) {
    const sim::IterationTruth& iteration = truth.iterations[i];
    const std::string where = IterationWhere(i);
    Add(figures, "iteration.number", where, int64_t{iteration.iteration});
    Add(figures, "iteration.complete", where, int64_t{1});
    Add(figures, "iteration.window_start_ns", where, iteration.window_start + reference);
    Add(figures, "iteration.window_end_ns", where, iteration.window_end + reference);
    Add(figures, "iteration.idle_ns", where, iteration.idle);
    Add(figures, "iteration.bubble_fraction", where, iteration.bubble_fraction);
    // The analysis lists a pipeline's ranks in stage order.
    for (int32_t rank_id : truth.stage_to_rank) {
      const sim::RankIterationTruth& rank = iteration.ranks[static_cast<size_t>(rank_id)];
      AddRankSplit(figures, IterationRankWhere(i, rank.rank), rank.first_compute_start + reference,
                   rank.last_compute_end + reference, rank.split);
    }
  }
  for (int32_t rank_id : truth.stage_to_rank) {
    const sim::RankMemoryTruth& memory = truth.memory[static_cast<size_t>(rank_id)];
    Add(figures, "peak_allocated_bytes", RankWhere(memory.rank), memory.peak_allocated_bytes);
    Add(figures, "peak_reserved_bytes", RankWhere(memory.rank), memory.peak_reserved_bytes);
  }
  return figures;
}

std::string SerializeFigures(const Figures& figures) {
  std::string text;
  for (const Figure& figure : figures) {
    absl::StrAppend(&text, figure.field, "\t", figure.where, "\t");
    if (const int64_t* integer = std::get_if<int64_t>(&figure.value)) {
      absl::StrAppend(&text, "i\t", *integer, "\n");
    } else if (const double* real = std::get_if<double>(&figure.value)) {
      absl::StrAppend(&text, "d\t", ShortestDouble(*real), "\n");
    } else {
      // Names and problems are one line of text; a tab or newline in them would split the record.
      std::string line = std::get<std::string>(figure.value);
      for (char& c : line) {
        if (c == '\t' || c == '\n' || c == '\r') c = ' ';
      }
      absl::StrAppend(&text, "s\t", line, "\n");
    }
  }
  return text;
}

absl::StatusOr<Figures> ParseFigures(std::string_view text) {
  Figures figures;
  for (absl::string_view line : absl::StrSplit(AsAbsl(text), '\n', absl::SkipEmpty())) {
    std::vector<absl::string_view> parts = absl::StrSplit(line, absl::MaxSplits('\t', 3));
    if (parts.size() != 4 || parts[2].size() != 1) {
      return absl::InvalidArgumentError(absl::StrCat("malformed figure line: ", line));
    }
    Figure figure{std::string(parts[0]), std::string(parts[1]), int64_t{0}};
    const absl::string_view value = parts[3];
    bool ok = true;
    if (parts[2] == "i") {
      int64_t integer = 0;
      ok = absl::SimpleAtoi(value, &integer);
      figure.value = integer;
    } else if (parts[2] == "d") {
      double real = 0;
      auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), real);
      ok = error == std::errc() && end == value.data() + value.size();
      figure.value = real;
    } else if (parts[2] == "s") {
      figure.value = std::string(value);
    } else {
      ok = false;
    }
    if (!ok) return absl::InvalidArgumentError(absl::StrCat("malformed figure line: ", line));
    figures.push_back(std::move(figure));
  }
  return figures;
}

std::vector<FieldCheck> CompareFigures(const Figures& truth, const Figures& analysis) {
  std::map<std::pair<std::string, std::string>, const Value*> found;
  for (const Figure& figure : analysis) found[{figure.field, figure.where}] = &figure.value;

  std::vector<FieldCheck> checks;
  std::map<std::string, size_t> check_of_field;
  auto check_for = [&](const std::string& field) -> FieldCheck& {
    auto [it, added] = check_of_field.emplace(field, checks.size());
    if (added) {
      checks.emplace_back();
      checks.back().field = field;
    }
    return checks[it->second];
  };
  auto mismatch = [](FieldCheck& check, std::string what) {
    if (check.mismatched++ == 0) check.first_mismatch = std::move(what);
  };
  for (const Figure& want : truth) {
    FieldCheck& check = check_for(want.field);
    ++check.compared;
    const std::string where = want.where.empty() ? "" : absl::StrCat(want.where, ": ");
    auto it = found.find({want.field, want.where});
    if (it == found.end()) {
      mismatch(check,
               absl::StrCat(where, "missing from the analysis (truth ", Describe(want.value), ")"));
      continue;
    }
    if (!SameValue(*it->second, want.value)) {
      mismatch(check, absl::StrCat(where, "analysis ", Describe(*it->second), ", truth ",
                                   Describe(want.value)));
    }
    found.erase(it);
  }
  // Whatever is left the analysis found and the truth does not have (an extra iteration, a
  // rank outside the pipeline).
  for (const Figure& extra : analysis) {
    if (!found.contains({extra.field, extra.where})) continue;
    mismatch(check_for(extra.field),
             absl::StrCat(extra.where.empty() ? "" : absl::StrCat(extra.where, ": "),
                          "only in the analysis (", Describe(extra.value), ")"));
  }
  return checks;
}

}  // namespace bubblescope::bench
