// The HTML report's structure against simulated jobs whose truth is known: one stage row per
// stage in stage order, one cell per op with its microbatch as label and tooltip (times checked
// against the simulator's own kernel records), the bubble's idle spans as cells whose lengths
// add up to the truth's fill, drain and comm_wait, every iteration reachable, the theoretical
// schedule's rows, and user-controlled text escaped.
#include "report/html_report.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "job/job.h"
#include "job/sim_job.h"
#include "report/html_parse.h"
#include "report/html_test_job.h"
#include "report/html_whatif.h"
#include "report/units.h"
#include "support/timeline_fixtures.h"
#include "synth/synthetic_job.h"

namespace bubblescope {
namespace {

using html_testing::Cell;
using html_testing::Count;
using html_testing::IterationSvgs;
using html_testing::PipelineBlock;
using html_testing::Rows;
using html_testing::SvgRow;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr TimeNs kForward = 200'000;
constexpr TimeNs kBackward = 400'000;
constexpr TimeNs kWeightGrad = 150'000;

// A p-stage job, stages on the ranks in reverse order (so stage and rank differ), no jitter.
sim::Config Config(sim::Schedule schedule, int32_t p, int32_t m, int32_t iterations) {
  return html_testing::HtmlTestJob(
      schedule, p, m, iterations,
      sim::StageCost{.forward = kForward, .backward = kBackward, .weight_grad = kWeightGrad}, 0.0);
}

struct Rendered {
  sim::Simulation simulation;
  job::Result job;
  std::string page;
};

Rendered Render(const sim::Config& config) {
  Rendered out;
  absl::StatusOr<sim::Simulation> simulation = sim::Simulate(config);
  EXPECT_TRUE(simulation.ok()) << simulation.status();
  if (!simulation.ok()) return out;
  out.simulation = *std::move(simulation);
  absl::StatusOr<job::Result> result = job::Analyze(out.simulation.trace, [] {
    job::Options options;
    options.tradeoff = true;  // the what-if chart
    return options;
  }());
  EXPECT_TRUE(result.ok()) << result.status();
  if (!result.ok()) return out;
  out.job = *std::move(result);
  out.page = AnalyzeHtml(out.job, SummaryReportOptions{});
  return out;
}

// The tooltip the report gives an op, from the simulator's record of it: its compute kernels'
// first start and last end, relative to the iteration window's start (true clock).
std::string ExpectedOpTitle(const sim::RankRecord& rank, size_t op_index, TimeNs window_start) {
  const sim::OpRecord& op = rank.ops[op_index];
  TimeNs start = INT64_MAX;
  TimeNs end = 0;
  for (const sim::KernelRecord& kernel : rank.kernels) {
    if (kernel.role == sim::KernelRole::kCompute && kernel.op == static_cast<int32_t>(op_index)) {
      start = std::min(start, kernel.start);
      end = std::max(end, kernel.end);
    }
  }
  const char* word = op.op.type == sim::OpType::kForward    ? "forward"
                     : op.op.type == sim::OpType::kBackward ? "backward"
                                                            : "weight-grad";
  return absl::StrCat(word, " mb ", op.op.microbatch, ": ",
                      Millis(static_cast<double>(end - start)), " ms at ",
                      Millis(static_cast<double>(start - window_start)), " ms");
}

// "fill 0.400 ms at ..." -> 400000 (ns, to the microsecond the tooltip keeps).
TimeNs TooltipNs(const std::string& title) {
  const size_t space = title.find(' ');
  return static_cast<TimeNs>(std::llround(std::stod(title.substr(space + 1)) * 1e6));
}

std::set<int32_t> Labels(const std::vector<const Cell*>& cells) {
  std::set<int32_t> labels;
  for (const Cell* cell : cells) {
    if (!cell->label.empty()) labels.insert(std::stoi(cell->label));
  }
  return labels;
}

std::set<int32_t> Range(int32_t n) {
  std::set<int32_t> out;
  for (int32_t i = 0; i < n; ++i) out.insert(i);
  return out;
}

// Every measured iteration of the only pipeline against the simulator: rows, op cells, labels,
// tooltips and idle spans.
void ExpectTimelinesMatchTruth(const Rendered& rendered, const sim::Config& config,
                               int32_t ops_per_microbatch) {
  const sim::Truth& truth = rendered.simulation.truth;
  ASSERT_EQ(rendered.job.pipelines.size(), 1u);
  const job::Pipeline& pipeline = rendered.job.pipelines[0];
  const std::string_view block = PipelineBlock(rendered.page, 0);
  ASSERT_FALSE(block.empty());
  // Every iteration is one choice away: one option each, one drawn, the others in templates.
  EXPECT_EQ(Count(block, "<option value="), truth.iterations.size());
  const std::vector<html_testing::IterationSvg> svgs = IterationSvgs(block);
  ASSERT_EQ(svgs.size(), truth.iterations.size());
  EXPECT_EQ(std::count_if(svgs.begin(), svgs.end(), [](const auto& s) { return s.shown; }), 1);
  ASSERT_EQ(pipeline.bubble.iterations.size(), truth.iterations.size());
  for (size_t i = 0; i < truth.iterations.size(); ++i) {
    const int64_t number = pipeline.bubble.iterations[i].number;
    SCOPED_TRACE(absl::StrCat("iteration ", number));
    auto svg =
        std::find_if(svgs.begin(), svgs.end(), [&](const auto& s) { return s.number == number; });
    ASSERT_NE(svg, svgs.end());
    const std::vector<SvgRow> rows = Rows(svg->svg);
    ASSERT_EQ(rows.size(), static_cast<size_t>(config.stages));
    const sim::IterationTruth& want = truth.iterations[i];
    for (int32_t stage = 0; stage < config.stages; ++stage) {
      const SvgRow& row = rows[static_cast<size_t>(stage)];
      const int32_t rank = truth.stage_to_rank[static_cast<size_t>(stage)];
      SCOPED_TRACE(absl::StrCat("stage ", stage, " rank ", rank));
      EXPECT_EQ(row.stage, stage);
      EXPECT_EQ(row.rank, rank);
      // One cell per op: each microbatch once per op type, its number written on it.
      const int32_t m = config.microbatches;
      EXPECT_EQ(row.Of("F").size(), static_cast<size_t>(m));
      EXPECT_EQ(row.Of("B").size(), static_cast<size_t>(m));
      EXPECT_EQ(row.Of("W").size(), ops_per_microbatch == 3 ? static_cast<size_t>(m) : 0u);
      EXPECT_EQ(Labels(row.Of("F")), Range(m));
      EXPECT_EQ(Labels(row.Of("B")), Range(m));
      if (ops_per_microbatch == 3) {
        EXPECT_EQ(Labels(row.Of("W")), Range(m));
      }
      std::multiset<std::string> titles;
      for (const Cell& cell : row.cells) {
        EXPECT_FALSE(cell.title.empty()) << cell.css_class;
        titles.insert(cell.title);
      }
      const sim::RankRecord& record = rendered.simulation.records.ranks[static_cast<size_t>(rank)];
      int32_t ops = 0;
      for (size_t op = 0; op < record.ops.size(); ++op) {
        if (record.ops[op].iteration != want.iteration) continue;
        ++ops;
        EXPECT_EQ(titles.count(ExpectedOpTitle(record, op, want.window_start)), 1u)
            << ExpectedOpTitle(record, op, want.window_start);
      }
      EXPECT_EQ(ops, m * ops_per_microbatch);
      // The bubble: one fill and one drain cell where the truth has them, and the idle cells'
      // lengths adding up to the truth's (each tooltip rounds to the microsecond).
      const sim::RankIterationTruth& figures = want.ranks[static_cast<size_t>(rank)];
      EXPECT_EQ(row.Of("fi").size(), figures.split.fill > 0 ? 1u : 0u);
      EXPECT_EQ(row.Of("dr").size(), figures.split.drain > 0 ? 1u : 0u);
      const auto expect_sum = [&row](const char* kind, TimeNs want_ns) {
        TimeNs total = 0;
        for (const Cell* cell : row.Of(kind)) total += TooltipNs(cell->title);
        const auto cells = static_cast<TimeNs>(row.Of(kind).size());
        EXPECT_LE(std::llabs(total - want_ns), 500 * std::max<TimeNs>(1, cells))
            << kind << ": " << total << " ns in the cells, " << want_ns << " ns in the truth";
      };
      expect_sum("fi", figures.split.fill);
      expect_sum("dr", figures.split.drain);
      expect_sum("cw", figures.split.comm_wait);
      expect_sum("em", figures.split.empty);
      // The communication line: the union of its transfer kernels in the iteration.
      std::vector<std::pair<TimeNs, TimeNs>> transfers;
      for (const sim::KernelRecord& kernel : record.kernels) {
        if (kernel.iteration == want.iteration && kernel.role != sim::KernelRole::kCompute &&
            kernel.role != sim::KernelRole::kOptimizer) {
          transfers.emplace_back(kernel.start, kernel.end);
        }
      }
      std::sort(transfers.begin(), transfers.end());
      std::vector<std::pair<TimeNs, TimeNs>> merged;
      for (const auto& transfer : transfers) {
        if (!merged.empty() && transfer.first <= merged.back().second) {
          merged.back().second = std::max(merged.back().second, transfer.second);
        } else {
          merged.push_back(transfer);
        }
      }
      TimeNs communicating = 0;
      for (const auto& span : merged) communicating += span.second - span.first;
      EXPECT_EQ(row.comm_spans, merged.size());
      EXPECT_EQ(row.comm_title,
                absl::StrCat("communication ", Millis(static_cast<double>(communicating)),
                             " ms in ", merged.size(), merged.size() == 1 ? " span" : " spans"));
      // And exactly the analysis' idle spans, one cell each.
      const bubble::IterationFigures& iteration = pipeline.bubble.iterations[i];
      size_t spans = 0;
      for (const bubble::RankIterationFigures& ranked : iteration.ranks) {
        if (ranked.rank == rank) spans = ranked.idle_spans.size();
      }
      EXPECT_EQ(
          row.Of("fi").size() + row.Of("dr").size() + row.Of("cw").size() + row.Of("em").size(),
          spans);
    }
  }
  // The theoretical schedule: the same rows, every op once, labelled.
  const std::vector<SvgRow> ideal = Rows(html_testing::TheoreticalSvg(block));
  ASSERT_EQ(ideal.size(), static_cast<size_t>(config.stages));
  for (int32_t stage = 0; stage < config.stages; ++stage) {
    const SvgRow& row = ideal[static_cast<size_t>(stage)];
    SCOPED_TRACE(absl::StrCat("theoretical stage ", stage));
    EXPECT_EQ(row.stage, stage);
    EXPECT_EQ(row.rank, -1);
    EXPECT_EQ(Labels(row.Of("F")), Range(config.microbatches));
    EXPECT_EQ(Labels(row.Of("B")), Range(config.microbatches));
    EXPECT_EQ(row.Of("F").size() + row.Of("B").size() + row.Of("W").size(),
              static_cast<size_t>(config.microbatches * ops_per_microbatch));
  }
}

TEST(HtmlReportTest, OneFOneBTimelineMatchesTheSimulatedJob) {
  const sim::Config config = Config(sim::Schedule::k1F1B, 4, 8, 3);
  const Rendered rendered = Render(config);
  ExpectTimelinesMatchTruth(rendered, config, 2);
}

// The legend of the pipelines' pictures: its entries (text), in order.
std::vector<std::string> LegendEntries(const std::string& page) {
  std::vector<std::string> entries;
  std::string_view legend = html_testing::Between(page, "<p class=lg>", "</p>");
  for (size_t at = legend.find("</i>"); at != std::string_view::npos;
       at = legend.find("</i>", at + 1)) {
    const size_t end = legend.find('<', at + 4);
    if (end > at + 4) entries.emplace_back(legend.substr(at + 4, end - at - 4));
  }
  return entries;
}

constexpr char kIdleEntries[] =
    "fill|comm_wait (stall, a transfer running)|empty (stall, nothing "
    "running)|drain|communication (under the row)";

std::string Joined(const std::vector<std::string>& entries) {
  std::string out;
  for (const std::string& entry : entries) absl::StrAppend(&out, out.empty() ? "" : "|", entry);
  return out;
}

// The legend names what the pictures draw: a plain 1F1B job's has no weight-grad, chunk or
// overlap entry (DualPipeV's), a zero-bubble job's a weight-grad one, an interleaved job's
// the odd chunks.
TEST(HtmlReportTest, TheLegendNamesOnlyWhatThePicturesDraw) {
  EXPECT_EQ(Joined(LegendEntries(Render(Config(sim::Schedule::k1F1B, 4, 8, 2)).page)),
            absl::StrCat("forward|backward|", kIdleEntries));
  EXPECT_EQ(Joined(LegendEntries(Render(Config(sim::Schedule::kZeroBubbleH1, 4, 8, 2)).page)),
            absl::StrCat("forward|backward|weight-grad|", kIdleEntries));
  sim::Config interleaved = Config(sim::Schedule::kInterleaved1F1B, 4, 8, 2);
  interleaved.virtual_stages = 2;
  EXPECT_EQ(
      Joined(LegendEntries(Render(interleaved).page)),
      absl::StrCat("forward|backward|", kIdleEntries, "|odd chunks of an interleaved schedule"));
}

TEST(HtmlReportTest, ZeroBubbleRowsHaveWeightGradCells) {
  const sim::Config config = Config(sim::Schedule::kZeroBubbleH1, 4, 8, 2);
  const Rendered rendered = Render(config);
  ExpectTimelinesMatchTruth(rendered, config, 3);
}

TEST(HtmlReportTest, AnnotatedGpipeTimelineMatchesTheSimulatedJob) {
  sim::Config config = Config(sim::Schedule::kGpipe, 3, 5, 2);
  config.annotations = sim::AnnotationStyle::kPpGpu;
  const Rendered rendered = Render(config);
  ExpectTimelinesMatchTruth(rendered, config, 2);
}

// Interleaved v=2: every microbatch twice per op type on each stage, once per chunk, the second
// chunk's cells marked (drawn lighter), in the measured and in the theoretical rows.
TEST(HtmlReportTest, InterleavedChunksAreToldApart) {
  sim::Config config = Config(sim::Schedule::kInterleaved1F1B, 4, 8, 2);
  config.virtual_stages = 2;
  const Rendered rendered = Render(config);
  const std::string_view block = PipelineBlock(rendered.page, 0);
  const std::vector<html_testing::IterationSvg> svgs = IterationSvgs(block);
  ASSERT_EQ(svgs.size(), 2u);
  for (std::string_view svg : {svgs[0].svg, html_testing::TheoreticalSvg(block)}) {
    const std::vector<SvgRow> rows = Rows(svg);
    ASSERT_EQ(rows.size(), 4u);
    for (const SvgRow& row : rows) {
      SCOPED_TRACE(absl::StrCat("stage ", row.stage));
      for (const char* type : {"F", "B"}) {
        std::vector<const Cell*> first;
        std::vector<const Cell*> second;
        for (const Cell* cell : row.Of(type)) (cell->odd_chunk ? second : first).push_back(cell);
        EXPECT_EQ(first.size(), 8u) << type;
        EXPECT_EQ(second.size(), 8u) << type;
        EXPECT_EQ(Labels(first), Range(8)) << type;
        EXPECT_EQ(Labels(second), Range(8)) << type;
        for (const Cell* cell : second) EXPECT_THAT(cell->title, HasSubstr(" chunk 1: "));
      }
    }
  }
}

TEST(HtmlReportTest, PageIsSelfContained) {
  const Rendered rendered = Render(Config(sim::Schedule::k1F1B, 4, 8, 2));
  const std::string& page = rendered.page;
  EXPECT_EQ(page.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_THAT(page, HasSubstr("</html>\n"));
  // Nothing fetched: no external address, no linked resource, one inline script.
  EXPECT_THAT(page, Not(HasSubstr("http:")));
  EXPECT_THAT(page, Not(HasSubstr("https:")));
  EXPECT_THAT(page, Not(HasSubstr(" src=")));
  EXPECT_THAT(page, Not(HasSubstr("<link")));
  EXPECT_EQ(Count(page, "<script"), 1u);
  // The sections a reader looks for, in order: diagnosis, summary, then the pipeline.
  const size_t diagnosis = page.find("<div class=diag>");
  const size_t summary = page.find("<h2>Pipelines</h2>");
  const size_t details = page.find("<details id=p0 open>");
  ASSERT_NE(diagnosis, std::string::npos);
  ASSERT_NE(summary, std::string::npos);
  ASSERT_NE(details, std::string::npos);
  EXPECT_LT(diagnosis, summary);
  EXPECT_LT(summary, details);
  for (const char* heading :
       {"Measured schedule", "Theoretical schedule", "Per stage: where the window goes",
        "Latency per iteration", "Memory peaks per stage", "Links",
        "What if: bubble and memory against m"}) {
    EXPECT_THAT(page, HasSubstr(absl::StrCat("<h3>", heading, "</h3>")));
  }
}

TEST(HtmlReportTest, MemoryBarsShowEachStagesPeak) {
  const sim::Config config = Config(sim::Schedule::k1F1B, 4, 8, 2);
  const Rendered rendered = Render(config);
  const std::string_view block = PipelineBlock(rendered.page, 0);
  const std::string_view memory =
      html_testing::Between(block, "<h3>Memory peaks per stage</h3>", "</svg>");
  ASSERT_FALSE(memory.empty());
  EXPECT_THAT(std::string(memory), HasSubstr("in GiB."));
  // 1F1B keeps p - s microbatches in flight on stage s: the truth's peaks differ by stage.
  for (int32_t stage = 0; stage < config.stages; ++stage) {
    const int32_t rank = config.stage_to_rank[static_cast<size_t>(stage)];
    const int64_t peak =
        rendered.simulation.truth.memory[static_cast<size_t>(rank)].peak_allocated_bytes;
    EXPECT_GE(peak, (int64_t{3} << 30) + (int64_t{256} << 20) * (config.stages - stage));
    EXPECT_THAT(std::string(memory),
                HasSubstr(absl::StrCat("<title>stage ", stage, " \xC2\xB7 rank ", rank,
                                       ": peak allocated ", BinaryBytes(peak), "</title>")));
  }
}

// p=4, m=8 1F1B: m/2, m, 2m and 4m under 1f1b, interleaved v=2 and zb-h1, the measured
// configuration itself (1f1b m=8) being the model's baseline rather than a candidate.
TEST(HtmlReportTest, WhatIfChartHasOnePointPerConfiguration) {
  const Rendered rendered = Render(Config(sim::Schedule::k1F1B, 4, 8, 2));
  ASSERT_EQ(rendered.job.pipelines.size(), 1u);
  ASSERT_TRUE(rendered.job.pipelines[0].model.has_value());
  const std::vector<whatif::Candidate> sweep =
      whatif::TradeoffCandidates(*rendered.job.pipelines[0].model);
  std::vector<std::string> labels;
  for (const whatif::Candidate& candidate : sweep)
    labels.push_back(whatif::CandidateLabel(candidate));
  EXPECT_THAT(labels,
              ::testing::ElementsAre(
                  "1f1b m=4 v=1 (same global batch)", "1f1b m=16 v=1 (same global batch)",
                  "1f1b m=32 v=1 (same global batch)", "interleaved m=4 v=2 (same global batch)",
                  "interleaved m=8 v=2", "interleaved m=16 v=2 (same global batch)",
                  "interleaved m=32 v=2 (same global batch)", "zb-h1 m=4 v=1 (same global batch)",
                  "zb-h1 m=8 v=1", "zb-h1 m=16 v=1 (same global batch)",
                  "zb-h1 m=32 v=1 (same global batch)"));
  const std::string_view block = PipelineBlock(rendered.page, 0);
  const std::string_view bubble_chart =
      html_testing::Between(block, "<h3>What if: bubble and memory against m</h3>", "</svg>");
  // Three lines of four points each, and the measured job ringed once.
  EXPECT_EQ(Count(bubble_chart, "<polyline "), 3u);
  EXPECT_EQ(Count(bubble_chart, "<circle cx="), 12u);
  EXPECT_EQ(Count(bubble_chart, "<circle class=mk "), 1u);
  EXPECT_THAT(std::string(bubble_chart), HasSubstr("<title>measured: m=8, bubble "));
  // The memory chart beside it has the same points: every configuration's peak is known.
  const size_t memory = block.find("peak allocated, GiB (largest stage)");
  ASSERT_NE(memory, std::string_view::npos);
  EXPECT_EQ(Count(html_testing::Between(block, "", "</svg>", memory), "<circle cx="), 12u);
}

TEST(HtmlReportTest, SlowLinkRowIsMarked) {
  sim::Config config = Config(sim::Schedule::k1F1B, 4, 8, 2);
  config.link_overrides.push_back(sim::LinkOverride{.src_rank = config.stage_to_rank[1],
                                                    .dst_rank = config.stage_to_rank[2],
                                                    .link = sim::Link{.gbps = 20.0}});
  const Rendered rendered = Render(config);
  const std::string_view block = PipelineBlock(rendered.page, 0);
  // Six directed links between three neighbour pairs; only stage 1 -> 2 is slow.
  const std::string_view links = html_testing::Between(block, "<h3>Links</h3>", "</table>");
  EXPECT_EQ(Count(links, "<tr><td>") + Count(links, "<tr class=slow><td>"), 6u);
  EXPECT_EQ(Count(links, "<tr class=slow><td>"), 1u);
  // Every column has a header, the last the slow-link mark's.
  EXPECT_THAT(std::string(links), HasSubstr("<th>receiver wait<th>slow link\n"));
  EXPECT_THAT(std::string(links), Not(HasSubstr("<th>\n")));
  EXPECT_THAT(std::string(links),
              HasSubstr(absl::StrCat("<tr class=slow><td>", config.stage_to_rank[1], "\xE2\x86\x92",
                                     config.stage_to_rank[2],
                                     "<td>1\xE2\x86\x92"
                                     "2<td>")));
}

TEST(HtmlReportTest, ManyPipelinesOpenFoldedWithTheWorstOpen) {
  constexpr int kReplicas = 6;
  std::vector<sim::Simulation> replicas;
  for (int j = 0; j < kReplicas; ++j) {
    sim::Config config = Config(sim::Schedule::k1F1B, 2, 4, 2);
    // Replica 4 has a slow second stage: the worst bubble.
    if (j == 4) config.costs[1].backward = 3 * kBackward;
    absl::StatusOr<sim::Simulation> simulation = sim::Simulate(config);
    ASSERT_TRUE(simulation.ok()) << simulation.status();
    replicas.push_back(*std::move(simulation));
  }
  const Trace trace = crossrank_testing::MergeReplicas(replicas);
  absl::StatusOr<job::Result> result = job::Analyze(trace, [] {
    job::Options options;
    options.tradeoff = true;  // the what-if chart
    return options;
  }());
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_EQ(result->pipelines.size(), static_cast<size_t>(kReplicas));
  const std::string page = AnalyzeHtml(*result, SummaryReportOptions{});
  const std::string_view summary = html_testing::Between(page, "<h2>Pipelines</h2>", "</table>");
  EXPECT_EQ(Count(summary, "<a href=\"#p"), static_cast<size_t>(kReplicas));
  EXPECT_EQ(Count(summary, "<tr class=worst>"), 1u);
  EXPECT_EQ(Count(page, "<details id=p"), static_cast<size_t>(kReplicas));
  EXPECT_EQ(Count(page, " open>"), 1u);
  // Replica 4's ranks are 8 and 9: that pipeline is the worst and the open one.
  const int32_t worst = result->job.worst_pipeline;
  ASSERT_GE(worst, 0);
  EXPECT_THAT(result->pipelines[static_cast<size_t>(worst)].bubble.ranks,
              ::testing::UnorderedElementsAre(8, 9));
  EXPECT_THAT(page, HasSubstr(absl::StrCat("<details id=p", worst, " open>")));
}

// A job without a pipeline shows its ranks' figures, not only "No pipeline found": one rank
// with kernels [0,100) and [900,1000) us and one profiler step [0,200) us: 50.0% idle inside
// the step (100 of 200 us), 80.0% over the 1 ms span (800 of 1,000 us).
TEST(HtmlReportTest, AJobWithoutAPipelineShowsItsRanks) {
  Trace trace;
  Rank rank;
  rank.rank = 0;
  rank.source_path = "loop.json";
  rank.timelines.push_back(
      testing::Stream(7, {testing::Op(IntervalKind::kComputeKernel, 0, 100'000),
                          testing::Op(IntervalKind::kComputeKernel, 900'000, 1'000'000)}));
  rank.steps = {ProfilerStep{.number = 1, .start = 0, .end = 200'000}};
  trace.ranks.push_back(std::move(rank));
  absl::StatusOr<job::Result> result = job::Analyze(trace, job::Options{});
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_TRUE(result->pipelines.empty());
  const std::string page = AnalyzeHtml(*result, SummaryReportOptions{});
  EXPECT_THAT(page, HasSubstr("No pipeline found"));
  EXPECT_THAT(page, HasSubstr("<h2>Ranks</h2>"));
  EXPECT_THAT(page, HasSubstr("<th>idle in steps"));
  EXPECT_THAT(page, HasSubstr("<td>50.0%"));
  EXPECT_THAT(page, HasSubstr("<td>80.0%"));
}

TEST(HtmlReportTest, UserControlledTextIsEscaped) {
  job::Result result;
  job::Pipeline pipeline;
  pipeline.bubble.ranks = {0, 1};
  pipeline.shape_problem = "<img src=x onerror=alert(1)>";
  pipeline.model_problem = "\"quoted\" & <b>bold</b>";
  result.pipelines.push_back(pipeline);
  result.job.pipelines = 1;
  result.job.worst_pipeline = 0;
  result.job.notes.push_back("note </pre><script>alert(2)</script>");
  SummaryReportOptions options;
  options.tool_version = "1.0<x>";
  const std::string page = AnalyzeHtml(result, options);
  EXPECT_THAT(page, Not(HasSubstr("<img")));
  EXPECT_THAT(page, Not(HasSubstr("<b>bold")));
  EXPECT_THAT(page, Not(HasSubstr("1.0<x>")));
  EXPECT_EQ(Count(page, "<script"), 1u);
  EXPECT_THAT(page, HasSubstr("shape unknown: &lt;img src=x onerror=alert(1)&gt;"));
  EXPECT_THAT(page, HasSubstr("&quot;quoted&quot; &amp; &lt;b&gt;bold&lt;/b&gt;"));
  EXPECT_THAT(page, HasSubstr("note &lt;/pre&gt;&lt;script&gt;alert(2)&lt;/script&gt;"));
}

}  // namespace
}  // namespace bubblescope
