#include "report/html_report.h"

#include <algorithm>
#include <numeric>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "report/cause_report.h"
#include "report/html_pipeline.h"
#include "report/html_replicas.h"
#include "report/html_svg.h"
#include "report/html_timeline.h"
#include "report/html_whatif.h"
#include "report/job_report.h"
#include "report/large_job.h"
#include "report/summary_report.h"
#include "report/units.h"
#include "report_view/report_view.h"

namespace bubblescope {
namespace {

// Colours live here only: the markup names classes (html_svg.h). F/B/W and the idle kinds use
// the same colours in every picture and in the legend.
constexpr char kStyle[] = R"(
body{font:14px/1.4 system-ui,sans-serif;margin:16px 24px;color:#222;max-width:1500px}
h1{font-size:22px}h2{font-size:18px;margin-top:28px}h3{font-size:15px;margin:18px 0 6px}
table{border-collapse:collapse;margin:6px 0}
td,th{border:1px solid #ccc;padding:2px 8px;text-align:left}
th{background:#f2f2f2}td{white-space:nowrap}tr.slow td{background:#fde2e1;color:#a00}
tr.worst td{font-weight:600}.diag{background:#fff7e0;border-left:4px solid #e8a400;padding:6px 12px}
.diag p{margin:4px 0}.warn{color:#a00;font-weight:600}.note{color:#666}
details{border:1px solid #ddd;border-radius:4px;margin:8px 0;padding:4px 12px}
li details{border:none;margin:0;padding:0}li summary{font-weight:normal;color:#555}
.cz{white-space:normal}
summary{cursor:pointer;font-weight:600;padding:4px 0}.sc{overflow-x:auto;max-width:100%}
svg text{font-size:11px;fill:#222}svg .rl{text-anchor:start}.tl .sr text{fill:#fff;text-anchor:middle}
.tl .sr text.rl{fill:#222;text-anchor:start}.tl .sr text.h{font-size:8px}
.ax path{stroke:#888;fill:none}.ax text,text.c{text-anchor:middle}
text.r{text-anchor:end}.ax path.gr{stroke:#eee}path.ref{stroke:#444;stroke-dasharray:4 3}
.F{fill:#3a6ea5}.B{fill:#4a9a4a}.W{fill:#8e5ea2}.cp{fill:#6c8ebf}
.cm{stroke:#333;stroke-width:3;fill:none}.tl .k{fill-opacity:.6}.fi{fill:#f4c99a}.dr{fill:#f7e08c}.cw{fill:#e0524f}.em{fill:#c8c3bf}.bg{fill:#f3f3f3}
.ma{fill:#5b8def}.mr{fill:#b9cdf6}.lc{fill:#6c8ebf}.li{fill:#cfd8e6}
.s0{stroke:#3a6ea5;fill:#3a6ea5}.s1{stroke:#e07b00;fill:#e07b00}.s2{stroke:#4a9a4a;fill:#4a9a4a}
.s3{stroke:#8e5ea2;fill:#8e5ea2}polyline{fill:none!important;stroke-width:2}
circle.mk{fill:none;stroke:#d00;stroke-width:2}.row{display:flex;flex-wrap:wrap;gap:24px}
.lg span{margin-right:14px;white-space:nowrap}.lg i{display:inline-block;width:12px;height:12px;
margin-right:4px;vertical-align:-1px;border-radius:2px;background:currentColor}
.lg i.F{color:#3a6ea5}.lg i.B{color:#4a9a4a}.lg i.W{color:#8e5ea2}.lg i.fi{color:#f4c99a}
.lg i.dr{color:#f7e08c}.lg i.k{opacity:.6}
.lg i.cm{color:#333;height:3px;vertical-align:3px}.lg i.cw{color:#e0524f}.lg i.em{color:#c8c3bf}.lg i.s0{color:#3a6ea5}
.lg i.s1{color:#e07b00}.lg i.s2{color:#4a9a4a}.lg i.s3{color:#8e5ea2}
.lg i.mk{border:2px solid #d00;border-radius:50%;width:10px;height:10px;background:none}
.lg i.ov{background:linear-gradient(#3a6ea5 50%,#4a9a4a 50%)}
.sc[data-z]{cursor:grab;user-select:none;outline:none}.sc[data-z]:focus{box-shadow:0 0 0 1px #9ab}
.zb{color:#666;font-size:12px;margin-left:12px}.zb button{font:12px system-ui;min-width:26px;margin-right:3px}
)";

// Swaps a pipeline's shown iteration for the chosen one: the shown one's nodes go into a
// template of their own, the chosen template's into the box, so nothing is copied and every
// iteration stays one choice away. `#p{N}i{K}` in the address opens pipeline N at iteration K.
constexpr char kScript[] = R"(
function showIt(s,n){const b=document.getElementById(s.dataset.box);if(b.dataset.it===n)return;
const t=b.parentNode.querySelector('template[data-it="'+n+'"]');if(!t)return;
const k=document.createElement('template');k.dataset.it=b.dataset.it;
k.content.append(...b.childNodes);
b.after(k);b.replaceChildren(t.content);t.remove();b.dataset.it=n;s.value=n;}
for(const s of document.querySelectorAll('select.it'))
s.addEventListener('change',()=>showIt(s,s.value));
const h=/^#p(\d+)i(-?\d+)$/.exec(location.hash);
if(h){const d=document.getElementById('p'+h[1]);
if(d){d.open=true;const s=d.querySelector('select.it');
if(s)showIt(s,h[2]);d.scrollIntoView();}}
)";

// The colours of the pictures of the pipelines shown in full: forward, backward and the idle
// kinds always; weight-grad, odd chunks and overlapped ops only where a picture draws them.
std::string Legend(const job::Result& result, const ReportLayout& layout) {
  html::DrawnMarks marks;
  for (size_t i = 0; i < result.pipelines.size(); ++i) {
    if (layout.in_full[i]) marks |= html::MarksOf(result.pipelines[i]);
  }
  return absl::StrCat(
      "<p class=lg><span><i class=F></i>forward</span><span><i class=B></i>backward</span>",
      marks.weight_grad ? "<span><i class=W></i>weight-grad</span>" : "",
      "<span><i class=fi></i>fill</span><span><i class=cw></i>comm_wait (stall, a transfer "
      "running)</span><span><i class=em></i>empty (stall, nothing running)</span><span><i "
      "class=dr></i>drain</span><span><i class=cm></i>communication (under the row)</span>",
      marks.odd_chunks ? absl::StrCat("<span><i class=\"F k\"></i><i class=\"B k\"></i>",
                                      marks.weight_grad ? "<i class=\"W k\"></i>" : "",
                                      "odd chunks of an interleaved schedule</span>")
                       : "",
      marks.overlapped ? "<span><i class=ov></i>two ops at once (DualPipeV): the forward "
                         "above, the other below</span>"
                       : "",
      "</p>\n");
}

// The text report's diagnosis lines, one paragraph each.
std::string Diagnosis(const job::Result& result) {
  const std::string text = IncompleteJobText(result) + OneRunText(result.job.one_run) +
                           MissingDeviceActivityText(result.ranks) + DiagnosisText(result);
  if (text.empty()) return "";
  std::string out = "<div class=diag>";
  for (const std::string& line :
       std::vector<std::string>(absl::StrSplit(text, '\n', absl::SkipEmpty()))) {
    absl::StrAppend(&out, "<p>", html::Esc(line), "</p>");
  }
  absl::StrAppend(&out, "</div>\n");
  return out;
}

// One row per pipeline in `order`. A large job's table also says which replica set a pipeline is
// in, and links only the pipelines drawn in full.
std::string SummaryTable(const job::Result& result, const ReportLayout& layout,
                         const std::vector<int32_t>& order, const std::string& heading) {
  std::string out =
      absl::StrCat("<h2>", heading,
                   "</h2>\n<table><tr><th>pipeline<th>shape<th>ranks<th>bubble<th>its "
                   "schedule alone<th>excess<th>iteration median<th>top cause",
                   layout.large ? "<th>replica set" : "", "\n");
  for (const int32_t row : order) {
    const auto i = static_cast<size_t>(row);
    const job::Pipeline& pipeline = result.pipelines[i];
    const bubble::Result& bubble = pipeline.bubble;
    const bool ideal = pipeline.ideal.has_value();
    // One line per pipeline, so 64 of them read as a table: the cause's name and predicted
    // saving, its sentence in the tooltip.
    std::string top = "none";
    if (!pipeline.causes.causes.empty()) {
      const root_causes::RootCause& cause = pipeline.causes.causes.front();
      std::string name(root_causes::CauseName(cause.cause));
      if (cause.saving_per_iteration_ns.has_value()) {
        absl::StrAppend(&name, ", saves ",
                        Millis(static_cast<double>(*cause.saving_per_iteration_ns)),
                        " ms per iteration");
      }
      // Its own class lets the cell wrap (cells do not), so the table fits a 1,000 px window.
      top = absl::StrCat("<span class=cz title=\"", html::Esc(CauseSentence(cause)), "\">",
                         html::Esc(name), "</span>");
    }
    const size_t shown = bubble.ranks.size();
    // Without a complete iteration the bubble and latency are no figures: "-", never 0%.
    const bool measured = pipeline.no_complete_iteration.empty();
    std::vector<std::string> cells = {
        layout.in_full[i] ? absl::StrCat("<a href=\"#p", i, "\">", i, "</a>") : absl::StrCat(i),
        html::Esc(html::ShapeText(pipeline)),
        absl::StrCat(shown, shown == 1 ? " rank" : " ranks"),
        measured ? absl::StrCat(Percent(bubble.bubble_fraction), "%") : "-",
        ideal ? absl::StrCat(Percent(pipeline.ideal->fraction), "%") : "-",
        ideal && measured
            ? absl::StrFormat("%.1f pt", 100.0 * pipeline.excess_bubble_fraction.value_or(0.0))
            : "-",
        measured ? MillisWithUnit(static_cast<double>(bubble.latency.p50)) : "-",
        top};
    if (layout.large) {
      const int32_t set = layout.replica_set[i];
      cells.push_back(set < 0 ? std::string("-")
                              : absl::StrCat("<a href=\"#r", set, "\">", set, "</a>"));
    }
    absl::StrAppend(
        &out,
        html::Row(cells, static_cast<int32_t>(i) == result.job.worst_pipeline ? "worst" : ""));
  }
  absl::StrAppend(&out, "</table>\n");
  return out;
}

// A job without a pipeline: its ranks' own figures (the text report's table), the idle inside
// the profiler steps first where the ranks have steps. At most kRanksShown rows; the JSON
// report lists every rank.
std::string RanksTable(const job::Result& result, const report_view::RanksTally& tally) {
  constexpr size_t kRanksShown = 256;
  const std::vector<rank_summary::RankFigures>& ranks = result.ranks.ranks;
  const bool steps = tally.any_profiler_steps;
  const auto percent = [](const std::optional<double>& share) {
    return share.has_value() ? absl::StrCat(Percent(*share), "%") : std::string("-");
  };
  std::string out = absl::StrCat(
      "<h2>Ranks</h2>\n<p>Device idle inside the profiler steps (ProfilerStep#N, the job's "
      "work) and over the whole span, which also counts the set-up and the time between "
      "profiling cycles.</p>\n<table><tr><th>rank<th>device",
      steps ? "<th>steps<th>step time<th>idle in steps" : "",
      "<th>span<th>compute<th>communication<th>idle over the span\n");
  for (size_t r = 0; r < ranks.size() && r < kRanksShown; ++r) {
    const rank_summary::RankFigures& f = ranks[r];
    const report_view::IdleShares idle = report_view::IdleSharesOf(f);
    std::vector<std::string> cells = {absl::StrCat(f.rank), f.cpu_timeline ? "cpu" : "gpu"};
    if (steps) {
      cells.insert(cells.end(),
                   {absl::StrCat(f.steps),
                    f.step_time > 0 ? MillisWithUnit(static_cast<double>(f.step_time)) : "-",
                    percent(idle.in_steps)});
    }
    for (TimeNs time : {f.span, f.compute, f.comm}) {
      cells.push_back(MillisWithUnit(static_cast<double>(time)));
    }
    cells.push_back(percent(idle.over_span));
    absl::StrAppend(&out, html::Row(cells, ""));
  }
  absl::StrAppend(&out, "</table>\n");
  if (ranks.size() > kRanksShown) {
    absl::StrAppend(&out, "<p>", kRanksShown, " of ", ranks.size(),
                    " ranks shown; the JSON report lists every rank.</p>\n");
  }
  return out;
}

// The page up to its first heading and the note under it, which begins with the tool's name.
std::string PageOpen(const std::string& heading, const SummaryReportOptions& options) {
  return absl::StrCat(
      "<!DOCTYPE html>\n<html lang=en><head><meta charset=utf-8>"
      "<meta name=viewport content=\"width=device-width,initial-scale=1\">"
      "<title>bubblescope: ",
      html::Esc(heading), "</title><style>", kStyle, "</style></head><body>\n<h1>",
      html::Esc(heading), "</h1>\n<p class=note>", html::Esc(options.tool_name),
      options.tool_version.empty() ? "" : " ", html::Esc(options.tool_version), ", ");
}

std::string PageClose() {
  return absl::StrCat("<script>", kScript, html::TimelineScript(), "</script>\n</body></html>\n");
}

}  // namespace

std::string AnalyzeHtml(const job::Result& result, const SummaryReportOptions& options) {
  const report_view::JobView view = report_view::ViewOf(result);
  std::string out = absl::StrCat(
      PageOpen("Pipeline bubbles", options), result.ranks.ranks.size(),
      result.ranks.ranks.size() == 1 ? " rank, " : " ranks, ", result.pipelines.size(),
      result.pipelines.size() == 1 ? " pipeline" : " pipelines",
      ". Figures are defined in docs/bubble.md; this page in docs/html-report.md.</p>\n",
      Diagnosis(result));
  const ReportLayout layout = LayoutOf(result, options);
  if (result.pipelines.empty()) {
    absl::StrAppend(&out, "<p>No pipeline found: ", html::Esc(NoPipelineReason(result.job)),
                    ".</p>\n", RanksTable(result, view.ranks));
  } else {
    std::vector<int32_t> by_index(result.pipelines.size());
    std::iota(by_index.begin(), by_index.end(), 0);
    const std::vector<int32_t>& order = layout.large ? result.job.pipelines_by_bubble : by_index;
    if (layout.large) {
      size_t shown = 0;
      for (bool full : layout.in_full) shown += full ? 1 : 0;
      absl::StrAppend(
          &out, html::ReplicaSetsSection(result, layout), "<h2>Pipelines in full</h2>\n<p>", shown,
          " of the ", result.pipelines.size(),
          " pipelines, largest bubble first: a large job shows in full the ", kWorstInFull,
          " with the largest bubble and those picked with --show-pipelines; every pipeline is a "
          "row of the table below (docs/html-report.md, \"Large jobs\").</p>\n",
          Legend(result, layout));
    } else {
      absl::StrAppend(&out, SummaryTable(result, layout, order, "Pipelines"),
                      "<h2>Each pipeline</h2>\n", Legend(result, layout));
    }
    for (const int32_t i : order) {
      if (!layout.in_full[static_cast<size_t>(i)]) continue;
      // Only the worst pipeline opens by itself: the others cost nothing to lay out until asked.
      const auto index = static_cast<size_t>(i);
      absl::StrAppend(&out, html::PipelineDetails(result.pipelines[index], view.pipelines[index],
                                                  index, i == result.job.worst_pipeline));
    }
    if (layout.large) {
      absl::StrAppend(&out,
                      SummaryTable(result, layout, order, "All pipelines, largest bubble first"));
    }
  }
  absl::StrAppend(&out, "<h2>Job</h2>\n<pre>", html::Esc(JobText(result.job)), "</pre>\n",
                  PageClose());
  return out;
}

std::string WhatIfHtml(const std::vector<PipelineWhatIf>& pipelines,
                       const std::vector<ReportedPipeline>& models,
                       const SummaryReportOptions& options) {
  std::string out =
      absl::StrCat(PageOpen("What if", options), pipelines.size(),
                   pipelines.size() == 1 ? " pipeline" : " pipelines",
                   ". The what-if model and how far to trust it: docs/whatif.md; this page: "
                   "docs/html-report.md.</p>\n");
  for (size_t i = 0; i < pipelines.size(); ++i) {
    const PipelineWhatIf& pipeline = pipelines[i];
    absl::StrAppend(&out, "<details id=p", pipeline.pipeline, i == 0 ? " open" : "",
                    "><summary>Pipeline ", pipeline.pipeline, ": ranks ",
                    absl::StrJoin(pipeline.ranks, ","), "</summary>\n");
    if (pipeline.result.ok()) {
      absl::StrAppend(&out, "<h3>Predictions</h3>\n", html::PredictionTable(*pipeline.result));
    } else {
      absl::StrAppend(&out, "<p class=note>No prediction: ",
                      html::Esc(std::string(pipeline.result.status().message())), "</p>\n");
    }
    const ReportedPipeline* model = i < models.size() ? &models[i] : nullptr;
    if (model != nullptr && model->model.ok() && pipeline.tradeoff.has_value()) {
      absl::StrAppend(&out, html::WhatIfChart(*model->model, *pipeline.tradeoff));
    }
    absl::StrAppend(&out, "</details>\n");
  }
  absl::StrAppend(&out, PageClose());
  return out;
}

}  // namespace bubblescope
