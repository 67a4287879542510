// The HTML report in a real browser (headless Chromium): it loads without a console error, the
// inline script switches iterations (the address `#p0i{K}` opens iteration K, checked in the
// DOM after the script ran), and a screenshot is kept under the build directory for a person to
// look at. Prints each page's size and load time (navigation start to the load event, layout
// forced) for a job of 8 stages x 64 microbatches, one of 64 pipelines and the 1,024-rank job
// (128 data-parallel replicas of 8 stages, a large job's page).
//
// Skips, saying so, where no Chromium is installed (scripts/install-deps.sh installs it).
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "job/job.h"
#include "job/replica_job.h"
#include "job/sim_job.h"
#include "loader/trace_loader.h"
#include "report/html_parse.h"
#include "report/html_report.h"
#include "report/html_test_job.h"
#include "support/subprocess.h"
#include "support/test_files.h"
#include "synth/synthetic_job.h"

namespace bubblescope {
namespace {

using html_testing::Count;
using testing::CommandResult;
using testing::RunCommand;
using testing::TempDir;

// BUBBLESCOPE_CHROMIUM, else the names Debian and others install it under.
std::string FindChromium() {
  std::vector<std::string> candidates;
  if (const char* named = std::getenv("BUBBLESCOPE_CHROMIUM")) candidates.emplace_back(named);
  for (const char* path : {"/usr/bin/chromium", "/usr/bin/chromium-browser",
                           "/usr/bin/google-chrome", "/usr/bin/google-chrome-stable"}) {
    candidates.emplace_back(path);
  }
  for (const std::string& path : candidates) {
    if (::access(path.c_str(), X_OK) == 0) return path;
  }
  return "";
}

constexpr char kNoChromium[] =
    "no Chromium (chromium, chromium-browser, google-chrome, or $BUBBLESCOPE_CHROMIUM): run "
    "scripts/install-deps.sh to test the HTML report in a browser";

sim::Config Pipeline(int32_t p, int32_t m, int32_t iterations) {
  return html_testing::HtmlTestJob(
      sim::Schedule::k1F1B, p, m, iterations,
      sim::StageCost{.forward = 200'000, .backward = 400'000, .weight_grad = 0}, 0.05);
}

job::Result AnalyzeTrace(const Trace& trace) {
  absl::StatusOr<job::Result> result = job::Analyze(trace, [] {
    job::Options options;
    options.tradeoff = true;  // the what-if chart
    return options;
  }());
  EXPECT_TRUE(result.ok()) << result.status();
  return result.ok() ? *std::move(result) : job::Result{};
}

// Where the screenshots and pages stay after the test, for a person to open.
std::string ArtifactDir() {
  const std::string dir = std::string(BUBBLESCOPE_ARTIFACT_DIR) + "/html_report";
  std::filesystem::create_directories(dir);
  return dir;
}

struct BrowserRun {
  CommandResult command;
  std::vector<std::string> console_errors;  // lines the page's console or script errors left
};

// Chromium on `url` with `mode` (--dump-dom or --screenshot=FILE), as root in a container can
// run it: no sandbox, a throwaway profile, logging to stderr so script errors show.
BrowserRun RunChromium(const std::string& chromium, const std::string& url, const std::string& mode,
                       const std::string& window_size = "1400,1000") {
  TempDir profile;
  BrowserRun run;
  run.command =
      RunCommand({chromium, "--headless", "--disable-gpu", "--no-sandbox",
                  "--enable-logging=stderr", "--v=0", "--hide-scrollbars",
                  "--user-data-dir=" + profile.path(), "--window-size=" + window_size, mode, url},
                 90);
  for (const std::string& line : std::vector<std::string>(absl::StrSplit(run.command.err, '\n'))) {
    if (line.find("CONSOLE") != std::string::npos || line.find("Uncaught") != std::string::npos) {
      run.console_errors.push_back(line);
    }
  }
  return run;
}

// The page with a probe added (never in the product): on the load event, layout is forced
// and the time since navigation start written into the body, for --dump-dom to show.
std::string WithLoadProbe(std::string page) {
  const size_t end = page.rfind("</body>");
  page.insert(end,
              "<script>addEventListener('load',()=>{document.body.offsetHeight;"
              "document.body.dataset.loadMs=Math.round(performance.now())})</script>");
  return page;
}

int64_t LoadMs(const std::string& dom) {
  const std::string_view value = html_testing::Between(dom, "data-load-ms=\"", "\"");
  return value.empty() ? -1 : std::stoll(std::string(value));
}

// The load time of the probed page at `url` (DOM dumped into *dom when given); -1 when the
// page never finished loading.
int64_t MeasureLoad(const std::string& chromium, const std::string& url, std::string* dom) {
  const BrowserRun run = RunChromium(chromium, url, "--dump-dom");
  EXPECT_EQ(run.command.exit_status, 0) << run.command.err;
  EXPECT_TRUE(run.console_errors.empty()) << run.console_errors.front();
  if (dom != nullptr) *dom = run.command.out;
  return LoadMs(run.command.out);
}

// Writes `page` as `name`.html (and a probed copy), loads it, fails on console errors, and
// returns the DOM after the script ran at `fragment`; prints size and load time, beside the load
// time of an empty page in the same browser (what starting a page costs on this machine now).
std::string LoadAndMeasure(const std::string& chromium, const std::string& page,
                           const std::string& name, const std::string& fragment) {
  const std::string dir = ArtifactDir();
  const std::string path = dir + "/" + name + ".html";
  const std::string probed = dir + "/" + name + ".probe.html";
  const std::string empty = dir + "/empty.probe.html";
  testing::WriteFile(path, page);
  testing::WriteFile(probed, WithLoadProbe(page));
  testing::WriteFile(empty,
                     WithLoadProbe("<!DOCTYPE html>\n<html><body><p>empty</p></body></html>"));
  std::string dom;
  const int64_t load_ms = MeasureLoad(chromium, "file://" + probed + fragment, &dom);
  const int64_t empty_ms = MeasureLoad(chromium, "file://" + empty, nullptr);
  EXPECT_GE(load_ms, 0) << "no load time in the DOM: the page did not finish loading";
  EXPECT_GE(empty_ms, 0);
  std::printf("[html] %s: %zu bytes (%.2f MiB), load %lld ms (an empty page: %lld ms); page %s\n",
              name.c_str(), page.size(), static_cast<double>(page.size()) / (1 << 20),
              static_cast<long long>(load_ms), static_cast<long long>(empty_ms), path.c_str());
  // "Well under a second" on a quiet machine; the bound on what the page adds leaves room for a
  // loaded CI runner and still catches a page grown several times slower.
  EXPECT_LT(load_ms - empty_ms, 2000);
  const std::string shot = dir + "/" + name + ".png";
  const BrowserRun screenshot = RunChromium(chromium, "file://" + path, "--screenshot=" + shot);
  EXPECT_EQ(screenshot.command.exit_status, 0) << screenshot.command.err;
  EXPECT_TRUE(screenshot.console_errors.empty()) << screenshot.console_errors.front();
  EXPECT_TRUE(std::filesystem::exists(shot));
  std::printf("[html] screenshot: %s\n", shot.c_str());
  return dom;
}

TEST(HtmlBrowserTest, EightStagesBySixtyFourMicrobatches) {
  const std::string chromium = FindChromium();
  if (chromium.empty()) GTEST_SKIP() << kNoChromium;
  const auto begin = std::chrono::steady_clock::now();
  absl::StatusOr<sim::Simulation> simulation = sim::Simulate(Pipeline(8, 64, 3));
  ASSERT_TRUE(simulation.ok()) << simulation.status();
  const job::Result result = AnalyzeTrace(simulation->trace);
  ASSERT_EQ(result.pipelines.size(), 1u);
  const auto analysed = std::chrono::steady_clock::now();
  const std::string page = AnalyzeHtml(result, SummaryReportOptions{});
  const auto rendered = std::chrono::steady_clock::now();
  std::printf(
      "[html] 8x64: analysed in %lld ms, rendered in %lld ms\n",
      static_cast<long long>(
          std::chrono::duration_cast<std::chrono::milliseconds>(analysed - begin).count()),
      static_cast<long long>(
          std::chrono::duration_cast<std::chrono::milliseconds>(rendered - analysed).count()));
  // Readable at this size: every op of every iteration has its microbatch written on it.
  for (const html_testing::IterationSvg& iteration :
       html_testing::IterationSvgs(html_testing::PipelineBlock(page, 0))) {
    const std::vector<html_testing::SvgRow> rows = html_testing::Rows(iteration.svg);
    ASSERT_EQ(rows.size(), 8u);
    for (const html_testing::SvgRow& row : rows) {
      for (const char* type : {"F", "B"}) {
        const std::vector<const html_testing::Cell*> cells = row.Of(type);
        EXPECT_EQ(cells.size(), 64u);
        EXPECT_EQ(std::count_if(cells.begin(), cells.end(),
                                [](const html_testing::Cell* cell) { return cell->label.empty(); }),
                  0)
            << "iteration " << iteration.number << " stage " << row.stage << " " << type;
      }
    }
  }
  // The last iteration, chosen through the address: the script swaps it in.
  const int64_t last = result.pipelines[0].bubble.iterations.back().number;
  const std::string dom = LoadAndMeasure(chromium, page, "report_8x64", absl::StrCat("#p0i", last));
  const std::string_view box = html_testing::Between(dom, "id=\"p0t\"", "</div>");
  ASSERT_FALSE(box.empty()) << "no timeline box in the DOM";
  EXPECT_EQ(box.substr(0, box.find('>')).find(absl::StrCat("data-it=\"", last, "\"")) !=
                std::string_view::npos,
            true)
      << box.substr(0, 80);
  // The swapped-in iteration: 8 stage rows of 64 forward and 64 backward cells.
  EXPECT_EQ(Count(box, "class=\"sr\""), 8u);
  EXPECT_EQ(Count(box, "<rect class=\"F\""), 8u * 64u);
  EXPECT_EQ(Count(box, "<rect class=\"B\""), 8u * 64u);
  // The iteration it replaced went into a template: still 2 of the 3 iterations kept there.
  const std::string_view block = html_testing::Between(dom, "<details id=\"p0\"", "<h2>Job</h2>");
  EXPECT_EQ(Count(block, "<template data-it="), 2u);
  EXPECT_EQ(Count(block, "<option value="), 3u);
}

// What the page looks like after its script ran, read by a probe (never in the product) into
// the body's data attributes: the axis text's computed fill and the colour behind it, where the
// measured timeline ends against the window, how many of its cells are drawn inside the window,
// the axis labels at load, after a wheel turn over the picture, after "reset" and after "+", and
// where the picture of another iteration, chosen after that, ends.
std::string WithTimelineProbe(std::string page) {
  const size_t end = page.rfind("</body>");
  page.insert(end, R"(<script>addEventListener('load',()=>{const b=document.body.dataset,
s=document.querySelector('.tlb svg.tl'),r=s.getBoundingClientRect(),t=s.querySelector('.ax text');
let bg='rgb(255, 255, 255)';for(let e=s;e&&e.style;e=e.parentElement){
const c=getComputedStyle(e).backgroundColor;
if(c!=='rgba(0, 0, 0, 0)'&&c!=='transparent'){bg=c;break;}}
b.axisFill=getComputedStyle(t).fill;b.behind=bg;b.right=Math.ceil(r.right);b.window=innerWidth;
const cells=[...s.querySelectorAll('.sr rect')],shown=()=>cells.filter(e=>
+e.getAttribute('width')>0&&e.getBoundingClientRect().right<=innerWidth).length;
const axis=()=>[...s.querySelectorAll('.ax text')].map(e=>e.textContent).join('|');
b.cells=cells.length;b.shownAtLoad=shown();b.axisAtLoad=axis();
s.dispatchEvent(new WheelEvent('wheel',{deltaY:-600,clientX:r.left+r.width/2,clientY:r.top+10,
bubbles:true,cancelable:true}));b.shownWheel=shown();b.axisWheel=axis();
document.querySelector('.zb button[data-a=fit]').click();b.axisReset=axis();
document.querySelector('.zb button[data-a=in]').click();b.axisPlus=axis();
const it=document.querySelector('select.it'),other=[...it.options].find(o=>!o.selected).value;
it.value=other;it.dispatchEvent(new Event('change'));
Promise.resolve().then(()=>{const n=document.querySelector('.tlb svg.tl');
b.swapped=n.closest('.tlb').dataset.it===other&&n!==s;
b.swappedRight=Math.ceil(n.getBoundingClientRect().right);});})</script>)");
  return page;
}

std::string DataAttribute(const std::string& dom, const std::string& name) {
  return std::string(html_testing::Between(dom, " data-" + name + "=\"", "\""));
}

// The timeline in a 1,400 px window: the axis readable on its background, the whole iteration of
// 8 stages x 64 microbatches inside the window at load (every cell drawn, none past its right
// edge), the wheel and the buttons changing the scale the axis reads, and another iteration fitted
// as it is chosen.
TEST(HtmlBrowserTest, TimelineFitsTheWindowAndZooms) {
  const std::string chromium = FindChromium();
  if (chromium.empty()) GTEST_SKIP() << kNoChromium;
  absl::StatusOr<sim::Simulation> simulation = sim::Simulate(Pipeline(8, 64, 2));
  ASSERT_TRUE(simulation.ok()) << simulation.status();
  const job::Result result = AnalyzeTrace(simulation->trace);
  ASSERT_EQ(result.pipelines.size(), 1u);
  const std::string page = AnalyzeHtml(result, SummaryReportOptions{});
  // Drawn at the labels' own scale, the picture is far wider than the window without the script.
  const std::string_view svg =
      html_testing::IterationSvgs(html_testing::PipelineBlock(page, 0)).front().svg;
  EXPECT_GT(html_testing::IntAttr(svg.substr(0, svg.find('>')), "width"), 1400);
  const std::string path = ArtifactDir() + "/timeline_8x64.probe.html";
  testing::WriteFile(path, WithTimelineProbe(page));
  const BrowserRun run = RunChromium(chromium, "file://" + path, "--dump-dom");
  ASSERT_EQ(run.command.exit_status, 0) << run.command.err;
  EXPECT_TRUE(run.console_errors.empty()) << run.console_errors.front();
  const std::string& dom = run.command.out;
  ASSERT_FALSE(DataAttribute(dom, "axis-fill").empty()) << "the probe did not run";
  EXPECT_NE(DataAttribute(dom, "axis-fill"), DataAttribute(dom, "behind"));
  EXPECT_EQ(DataAttribute(dom, "behind"), "rgb(255, 255, 255)");
  EXPECT_LE(std::stoi(DataAttribute(dom, "right")), std::stoi(DataAttribute(dom, "window")));
  // 8 rows of 64 forward and 64 backward ops, and their idle spans: all inside the window.
  const int cells = std::stoi(DataAttribute(dom, "cells"));
  EXPECT_GT(cells, 8 * 128);
  EXPECT_EQ(std::stoi(DataAttribute(dom, "shown-at-load")), cells);
  // The axis at load runs from 0 ms to the window's length (about 0.6 ms per microbatch).
  const std::string at_load = DataAttribute(dom, "axis-at-load");
  EXPECT_EQ(at_load.substr(0, 5), "0 ms|") << at_load;
  // A wheel turn zooms in about the cursor: fewer cells in the window, other labels.
  EXPECT_LT(std::stoi(DataAttribute(dom, "shown-wheel")), cells);
  EXPECT_NE(DataAttribute(dom, "axis-wheel"), at_load);
  EXPECT_EQ(DataAttribute(dom, "axis-reset"), at_load);
  EXPECT_NE(DataAttribute(dom, "axis-plus"), at_load);
  // Another iteration, chosen, is fitted to the window as it comes in.
  EXPECT_EQ(DataAttribute(dom, "swapped"), "true");
  EXPECT_LE(std::stoi(DataAttribute(dom, "swapped-right")),
            std::stoi(DataAttribute(dom, "window")));
}

// A 1,000 px window (a laptop's half screen): the Pipelines table fits it, its top cause wrapped
// inside its cell rather than cut at the window's edge, and the page scrolls no way but down.
// The probe (never in the product) writes the table's right edge, the page's width and the
// cause cell's height against the row's first cell into the body's data attributes.
TEST(HtmlBrowserTest, PipelinesTableFitsAThousandPixelWindow) {
  const std::string chromium = FindChromium();
  if (chromium.empty()) GTEST_SKIP() << kNoChromium;
  // The bundled CPU run: its top cause, "host_bound, saves ... ms per iteration", is the
  // longest cell of the table.
  LoadOptions load;
  load.jobs = 2;
  absl::StatusOr<Trace> trace = LoadTrace(
      {std::string(BUBBLESCOPE_SOURCE_DIR) + "/sample_traces/torch_cpu/1f1b_p4_m8"}, load);
  ASSERT_TRUE(trace.ok()) << trace.status();
  const job::Result result = AnalyzeTrace(*trace);
  ASSERT_EQ(result.pipelines.size(), 1u);
  ASSERT_FALSE(result.pipelines[0].causes.causes.empty());
  std::string page = AnalyzeHtml(result, SummaryReportOptions{});
  page.insert(page.rfind("</body>"),
              R"(<script>addEventListener('load',()=>{const b=document.body.dataset,
t=document.querySelector('table'),row=t.rows[1];
b.tableRight=Math.ceil(t.getBoundingClientRect().right);b.window=innerWidth;
b.pageWidth=document.documentElement.scrollWidth;
b.causeLines=Math.round(row.cells[7].querySelector('span').getClientRects().length);})</script>)");
  const std::string path = ArtifactDir() + "/pipelines_1000px.probe.html";
  testing::WriteFile(path, page);
  const BrowserRun run = RunChromium(chromium, "file://" + path, "--dump-dom", "1000,900");
  ASSERT_EQ(run.command.exit_status, 0) << run.command.err;
  EXPECT_TRUE(run.console_errors.empty()) << run.console_errors.front();
  const std::string& dom = run.command.out;
  ASSERT_FALSE(DataAttribute(dom, "window").empty()) << "the probe did not run";
  const int window = std::stoi(DataAttribute(dom, "window"));
  EXPECT_EQ(window, 1000);
  EXPECT_LE(std::stoi(DataAttribute(dom, "table-right")), window);
  EXPECT_LE(std::stoi(DataAttribute(dom, "page-width")), window);
  // The cause wraps onto a second line of its cell rather than running past the window.
  EXPECT_GE(std::stoi(DataAttribute(dom, "cause-lines")), 2);
  const std::string shot = ArtifactDir() + "/pipelines_1000px.png";
  RunChromium(chromium, "file://" + path, "--screenshot=" + shot, "1000,900");
  std::printf("[html] screenshot: %s\n", shot.c_str());
}

TEST(HtmlBrowserTest, SixtyFourPipelines) {
  const std::string chromium = FindChromium();
  if (chromium.empty()) GTEST_SKIP() << kNoChromium;
  constexpr int kPipelines = 64;
  std::vector<sim::Simulation> replicas;
  for (int j = 0; j < kPipelines; ++j) {
    sim::Config config = Pipeline(4, 8, 2);
    config.seed = static_cast<uint64_t>(j + 1);
    absl::StatusOr<sim::Simulation> simulation = sim::Simulate(config);
    ASSERT_TRUE(simulation.ok()) << simulation.status();
    replicas.push_back(*std::move(simulation));
  }
  const job::Result result = AnalyzeTrace(crossrank_testing::MergeReplicas(replicas));
  ASSERT_EQ(result.pipelines.size(), static_cast<size_t>(kPipelines));
  const auto begin = std::chrono::steady_clock::now();
  const std::string page = AnalyzeHtml(result, SummaryReportOptions{});
  std::printf("[html] 64 pipelines: rendered in %lld ms\n",
              static_cast<long long>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                         std::chrono::steady_clock::now() - begin)
                                         .count()));
  const std::string dom = LoadAndMeasure(chromium, page, "report_64_pipelines", "");
  EXPECT_EQ(Count(dom, "<details id=\"p"), static_cast<size_t>(kPipelines));
  EXPECT_EQ(Count(dom, "<details id=\"p") - Count(dom, " open=\"\""), kPipelines - 1u);
}

TEST(HtmlBrowserTest, ThousandRanks) {
  const std::string chromium = FindChromium();
  if (chromium.empty()) GTEST_SKIP() << kNoChromium;
  absl::StatusOr<sim::Simulation> simulation = sim::Simulate(replica_testing::ThousandRanks());
  ASSERT_TRUE(simulation.ok()) << simulation.status();
  const job::Result result = AnalyzeTrace(simulation->trace);
  ASSERT_EQ(result.pipelines.size(), 128u);
  const std::string page = AnalyzeHtml(result, SummaryReportOptions{});
  // The fourth worst pipeline, drawn in full though closed, opened at its last iteration.
  const int32_t fourth = result.job.pipelines_by_bubble[3];
  const int64_t last =
      result.pipelines[static_cast<size_t>(fourth)].bubble.iterations.back().number;
  const std::string dom =
      LoadAndMeasure(chromium, page, "report_1024_ranks", absl::StrCat("#p", fourth, "i", last));
  EXPECT_EQ(Count(dom, "<details id=\"p"), 4u);
  // The script swapped the chosen iteration into that pipeline's timeline box.
  const std::string_view box =
      html_testing::Between(dom, absl::StrCat("id=\"p", fourth, "t\""), "</div>");
  ASSERT_FALSE(box.empty()) << "no timeline box in the DOM";
  EXPECT_NE(box.substr(0, box.find('>')).find(absl::StrCat("data-it=\"", last, "\"")),
            std::string_view::npos)
      << box.substr(0, 80);
  // Every pipeline a row of the table: 128 rows and its header.
  EXPECT_EQ(Count(html_testing::Between(dom, "All pipelines", "</table>"), "<tr"), 129u);
}

}  // namespace
}  // namespace bubblescope
