#include "report/summary_report.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "report/text_layout.h"
#include "report/text_table.h"
#include "report/units.h"
#include "report_view/report_view.h"
#include "text/json_writer.h"
#include "text/one_line.h"

namespace bubblescope {
namespace {

using rank_summary::RankFigures;
using rank_summary::Result;

std::string_view TimelineName(const RankFigures& figures) {
  return figures.cpu_timeline ? "cpu" : "gpu";
}

ImportCounter CounterAt(size_t index) { return static_cast<ImportCounter>(index); }

// An info counter's count in words, for the one line a clean import gets: "812 events of a
// kind bubblescope does not use (...)" rather than the table's "ignored_category 812".
std::string InfoInWords(ImportCounter counter, uint64_t count) {
  const bool one = count == 1;
  switch (counter) {
    case ImportCounter::kUnknownPhase:
      return absl::StrCat(count, one ? " event" : " events",
                          " of a phase bubblescope does not model");
    case ImportCounter::kIgnoredCategory:
      return absl::StrCat(count, one ? " event" : " events",
                          " of a kind bubblescope does not use (not an op, kernel, copy, "
                          "annotation or memory sample)");
    case ImportCounter::kUnmatchedFlow:
      return absl::StrCat(count, " flow ", one ? "arrow" : "arrows", " (launch to kernel) that ",
                          one ? "links" : "link", " no event");
    case ImportCounter::kUnterminatedArray:
      return absl::StrCat(count, one ? " trace" : " traces", " without the closing ']'");
    case ImportCounter::kOverlayEvent:
      return absl::StrCat(count, " of bubblescope's own overlay ", one ? "event" : "events",
                          " in a merged trace");
    case ImportCounter::kEmptyProfilerStep:
      return absl::StrCat(count, " empty ProfilerStep ", one ? "range" : "ranges",
                          " (nothing recorded in ", one ? "it" : "them",
                          ": torch closing a profiler window the loop left early), not ",
                          one ? "an iteration" : "iterations");
    default:  // no other counter is info; named as the table names it
      return absl::StrCat(count, " ", std::string(CounterSpec(counter).name));
  }
}

// A share as a percentage, "-" where it has none.
std::string PercentOrDash(const std::optional<double>& share) {
  return share.has_value() ? Percent(*share) : "-";
}

std::string Plural(size_t count, std::string_view noun) {
  return absl::StrCat(count, " ", std::string(noun), count == 1 ? "" : "s");
}

// One line on what the Nsight ranks' ids and times rest on (Rank::rank_source, time_base,
// docs/nsight-systems.md): each value, with its count of ranks where they differ; empty when no
// rank is an Nsight export's.
std::string NsightSourcesLine(const report_view::RanksTally& tally) {
  const std::map<std::string, size_t>& ids = tally.nsys_rank_id_sources;
  const std::map<std::string, size_t>& times = tally.nsys_time_bases;
  if (times.empty()) return "";
  const auto in_words = [](const std::map<std::string, size_t>& values) {
    if (values.size() == 1) return text::OneLine(values.begin()->first);
    std::vector<std::string> parts;
    for (const auto& [value, count] : values) {
      parts.push_back(absl::StrCat(text::OneLine(value), " (", Plural(count, "rank"), ")"));
    }
    return absl::StrJoin(parts, ", ");
  };
  return absl::StrCat("nsys exports: rank ids by ", in_words(ids), "; times by ", in_words(times),
                      " (each rank's time_evidence is in the JSON report)\n");
}

// Errors and warnings are listed per file, since each says something about that file. Info
// counters (events of kinds bubblescope does not model) appear on nearly every real trace, so
// they are summed over the ranks into one table rather than repeated under each file; the JSON
// report keeps them per file.
void AppendImportBlock(const Result& result, const report_view::RanksTally& tally,
                       std::string* out) {
  bool any_problem = false;
  for (const RankFigures& figures : result.ranks) {
    const ImportStats& stats = figures.import_stats;
    TextTable table({{"severity", Align::kLeft},
                     {"counter", Align::kLeft},
                     {"count", Align::kRight},
                     {"first_byte", Align::kRight},
                     {"meaning", Align::kLeft}});
    bool file_has_problems = false;
    for (size_t i = 0; i < kImportCounterCount; ++i) {
      uint64_t count = stats.count(CounterAt(i));
      if (count == 0) continue;
      const ImportCounterSpec& spec = CounterSpec(CounterAt(i));
      if (spec.severity == Severity::kInfo) continue;  // summed over the ranks below
      table.AddRow({std::string(SeverityName(spec.severity)), std::string(spec.name),
                    absl::StrCat(count), absl::StrCat(stats.first_offset(CounterAt(i))),
                    std::string(spec.description)});
      file_has_problems = true;
    }
    if (!file_has_problems) continue;
    if (!any_problem) absl::StrAppend(out, "\nimport issues:\n");
    any_problem = true;
    absl::StrAppend(out, "  rank ", figures.rank, ": ", text::OneLine(figures.source_path), "\n");
    absl::StrAppend(out, table.Render(4));
    if (stats.count(ImportCounter::kTruncated) != 0 && !stats.truncation_detail().empty()) {
      absl::StrAppend(out, "    truncated: ", stats.truncation_detail(), "\n");
    }
  }

  TextTable info({{"counter", Align::kLeft},
                  {"count", Align::kRight},
                  {"ranks", Align::kRight},
                  {"meaning", Align::kLeft}});
  bool any_info = false;
  std::vector<std::string> info_line;  // InfoInWords of each: a clean import's one line
  for (size_t i = 0; i < kImportCounterCount; ++i) {
    if (tally.info_counts[i] == 0) continue;
    const ImportCounterSpec& spec = CounterSpec(CounterAt(i));
    info.AddRow({std::string(spec.name), absl::StrCat(tally.info_counts[i]),
                 absl::StrCat(tally.info_ranks[i]), std::string(spec.description)});
    info_line.push_back(InfoInWords(CounterAt(i), tally.info_counts[i]));
    any_info = true;
  }
  if (!any_problem) {
    // Events skipped on purpose are no damage: on a clean import they are one line, not a table.
    absl::StrAppend(
        out, "\nimport issues: ", any_info ? "no errors or warnings" : "none",
        any_info ? absl::StrCat(" (skipped on purpose: ", absl::StrJoin(info_line, ", "), ")")
                 : std::string(),
        "\n");
    return;
  }
  if (any_info) {
    absl::StrAppend(out, "  info, summed over ranks (skipped on purpose, not damage):\n",
                    info.Render(4));
  }
}

}  // namespace

std::string MissingDeviceActivityText(const Result& result) {
  constexpr size_t kNamed = 4;
  std::string out;
  size_t ranks = 0;
  for (const RankFigures& f : result.ranks) {
    const uint64_t launches = f.import_stats.count(ImportCounter::kLaunchWithoutDeviceActivity);
    if (launches == 0) continue;
    if (++ranks > kNamed) continue;
    absl::StrAppend(&out, "NO DEVICE ACTIVITY: rank ", f.rank, " launched ",
                    Plural(launches, "kernel"),
                    " but its file records no device activity (profiled without "
                    "ProfilerActivity.CUDA?): its figures are its CPU thread's, not the "
                    "device's\n");
  }
  if (ranks > kNamed) {
    absl::StrAppend(&out, "NO DEVICE ACTIVITY: ", ranks - kNamed, " more ranks alike\n");
  }
  return out;
}

std::string SummaryText(const Result& result, const SummaryReportOptions& options,
                        const std::vector<int32_t>& folded_ranks, const std::string& folded_text,
                        bool pipelines_follow) {
  const report_view::RanksTally tally = report_view::RanksTallyOf(result);
  const size_t cpu_ranks = tally.cpu_ranks;
  const std::array<uint64_t, report_view::kSeverityCount>& issues = tally.by_severity;
  // The first line says what was loaded; errors and warnings of the import are named here
  // briefly (listed under "import issues" below), info counters only there.
  std::string out = absl::StrCat(options.tool_name, " ", options.tool_version,
                                 " analyze: ", Plural(result.ranks.size(), "rank"), " (",
                                 result.ranks.size() - cpu_ranks, " gpu, ", cpu_ranks, " cpu)");
  const uint64_t errors = issues[static_cast<size_t>(Severity::kError)];
  const uint64_t warnings = issues[static_cast<size_t>(Severity::kWarning)];
  if (errors + warnings > 0) {
    absl::StrAppend(&out, "; import issues: ", errors, " error, ", warnings,
                    " warning (listed below)");
  }
  out.push_back('\n');

  // Counts of kernels, transfers and memcpys, and steps, are the JSON report's: the text keeps
  // to a screen's width. dev_idle is no kernel or op running on the device, which a spinning
  // NCCL wait is not: the pipeline bubble is the pipeline table's.
  // Without a pipeline the job's idle is read from the table, and a rank with profiler steps
  // leads with the idle inside them: over the whole span it also counts the set-up and the time
  // between profiling cycles (93.8% against 33.3% inside the steps of a training loop).
  const bool lead_with_steps = !pipelines_follow && tally.any_profiler_steps;
  std::vector<TextColumn> columns = {{"rank"}, {"device", Align::kLeft}};
  if (lead_with_steps) columns.insert(columns.end(), {{"steps"}, {"step_ms"}, {"step_idle%"}});
  columns.insert(columns.end(), {{"span_ms"},
                                 {"compute_ms"},
                                 {"comm_ms"},
                                 {"dev_idle_ms"},
                                 {"dev_idle%"},
                                 {"peak_alloc"},
                                 {"peak_reserved"},
                                 {"source", Align::kLeft}});
  TextTable table(std::move(columns));
  std::vector<std::string> paths;
  for (const RankFigures& f : result.ranks) paths.push_back(text::OneLine(f.source_path));
  const std::vector<std::string> names = ShortestUniqueSuffixes(paths);
  size_t rows = 0;
  for (size_t r = 0; r < result.ranks.size(); ++r) {
    const RankFigures& f = result.ranks[r];
    if (std::binary_search(folded_ranks.begin(), folded_ranks.end(), f.rank)) continue;
    ++rows;
    const report_view::IdleShares idle = report_view::IdleSharesOf(f);
    std::vector<std::string> cells = {absl::StrCat(f.rank), std::string(TimelineName(f))};
    if (lead_with_steps) {
      cells.insert(cells.end(), {absl::StrCat(f.steps), f.step_time > 0 ? Millis(f.step_time) : "-",
                                 PercentOrDash(idle.in_steps)});
    }
    cells.insert(cells.end(), {Millis(f.span), Millis(f.compute), Millis(f.comm), Millis(f.idle),
                               PercentOrDash(idle.over_span), BinaryBytes(f.peak_allocated_bytes),
                               BinaryBytes(f.peak_reserved_bytes), names[r]});
    table.AddRow(std::move(cells));
  }
  // Every rank folded: no table of none.
  if (rows > 0 || result.ranks.empty()) {
    out.append(table.Render());
    if (rows > 0 && lead_with_steps) {
      out.append(
          "step_idle%: device idle inside the profiler steps (ProfilerStep#N), the job's work; "
          "dev_idle% is over the whole span\n");
    }
    if (rows > 0 && cpu_ranks < result.ranks.size() && pipelines_follow) {
      out.append(
          "dev_idle: no kernel running; NCCL kernels spin while they wait, so a pipeline's "
          "bubble shows in its bubble% below\n");
    }
  }
  out.append(NsightSourcesLine(tally));
  out.append(folded_text);
  AppendImportBlock(result, tally, &out);
  return out;
}

void WriteSummaryMembers(const Result& result, const SummaryReportOptions& options,
                         JsonWriter& json) {
  json.StringMember("schema", kAnalyzeSchema);
  json.Key("tool");
  json.BeginObject();
  json.StringMember("name", options.tool_name);
  json.StringMember("version", options.tool_version);
  json.EndObject();

  auto micros = [&](std::string_view key, TimeNs ns) { json.DecimalMember(key, ns, 3); };
  auto count = [&](std::string_view key, int64_t value) { json.IntMember(key, value); };
  auto optional_bytes = [&](std::string_view key, int64_t value) {
    json.Key(key);
    if (value < 0) {
      json.Null();
    } else {
      json.Int(value);
    }
  };

  json.Key("ranks");
  json.BeginArray();
  for (const RankFigures& f : result.ranks) {
    json.BeginObject();
    count("rank", f.rank);
    json.StringMember("source", f.source_path);
    json.Key("record_run");
    if (f.record_run_id.empty()) {
      json.Null();
    } else {
      json.String(f.record_run_id);
    }
    json.StringMember("timeline", TimelineName(f));
    // Only where the reader records them (Nsight exports): reports of other formats unchanged.
    if (!f.rank_source.empty()) json.StringMember("rank_source", f.rank_source);
    if (!f.time_base.empty()) {
      json.StringMember("time_base", f.time_base);
      json.StringMember("time_evidence", f.time_evidence);
    }
    micros("span_us", f.span);
    micros("compute_us", f.compute);
    micros("comm_us", f.comm);
    micros("memcpy_us", f.memcpy);
    micros("idle_us", f.idle);
    micros("step_time_us", f.step_time);
    micros("step_idle_us", f.step_idle);
    count("kernels", f.kernels);
    count("comm_ops", f.comm_ops);
    count("memcpy_ops", f.memcpys);
    count("steps", f.steps);
    optional_bytes("peak_allocated_bytes", f.peak_allocated_bytes);
    optional_bytes("peak_reserved_bytes", f.peak_reserved_bytes);
    json.Key("import");
    json.BeginObject();
    for (size_t i = 0; i < kImportCounterCount; ++i) {
      uint64_t n = f.import_stats.count(CounterAt(i));
      if (n == 0) continue;
      const ImportCounterSpec& spec = CounterSpec(CounterAt(i));
      json.Key(spec.name);
      json.BeginObject();
      json.UIntMember("count", n);
      json.StringMember("severity", SeverityName(spec.severity));
      json.IntMember("first_offset", f.import_stats.first_offset(CounterAt(i)));
      if (CounterAt(i) == ImportCounter::kTruncated &&
          !f.import_stats.truncation_detail().empty()) {
        json.StringMember("detail", f.import_stats.truncation_detail());
      }
      json.EndObject();
    }
    json.EndObject();
    json.EndObject();
  }
  json.EndArray();

  const report_view::RanksTally tally = report_view::RanksTallyOf(result);
  json.Key("import_issues");
  json.BeginObject();
  for (Severity severity : {Severity::kError, Severity::kWarning, Severity::kInfo}) {
    json.UIntMember(SeverityName(severity), tally.by_severity[static_cast<size_t>(severity)]);
  }
  json.EndObject();
}

absl::StatusOr<std::string> SummaryJson(const Result& result, const SummaryReportOptions& options) {
  JsonWriter json(JsonWriterOptions{.indent = options.json_indent});
  json.BeginObject();
  WriteSummaryMembers(result, options, json);
  json.EndObject();
  absl::StatusOr<std::string> document = json.Finish();
  if (document.ok()) document->push_back('\n');
  return document;
}

}  // namespace bubblescope
