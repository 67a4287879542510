// The text report's first screen and the figures every report quotes. On simulated jobs whose
// truth is known, and on a real CPU run (sample_traces/torch_cpu): the first 15 lines give the
// bubble, the rank that idles most, the top cause and the next step, none wider than 120
// columns; and the excess bubble and the imbalance fix's saving in the text, JSON and HTML
// reports are the job result's stored figures, each quoted from one model and once.
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "job/job.h"
#include "loader/trace_loader.h"
#include "report/html_report.h"
#include "report/html_whatif.h"
#include "report/job_report.h"
#include "report/pipeline_report.h"
#include "report/units.h"
#include "report/whatif_report.h"
#include "simdjson.h"
#include "synth/synthetic_job.h"

namespace bubblescope {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::vector<std::string> FirstLines(const std::string& text, size_t count) {
  std::vector<std::string> lines = absl::StrSplit(text, '\n');
  if (lines.size() > count) lines.resize(count);
  return lines;
}

size_t Occurrences(const std::string& text, const std::string& part) {
  size_t count = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) {
    ++count;
  }
  return count;
}

// A p=4 m=8 1F1B job on fast links, stage 2 half again as slow as the others.
sim::Simulation Imbalanced() {
  sim::Config config;
  config.schedule = sim::Schedule::k1F1B;
  config.stages = 4;
  config.microbatches = 8;
  config.iterations = 3;
  config.costs.assign(4, sim::StageCost{.forward = 1'000'000, .backward = 2'000'000});
  config.costs[2] = sim::StageCost{.forward = 1'500'000, .backward = 3'000'000};
  config.weights_bytes.assign(4, int64_t{1} << 30);
  absl::StatusOr<sim::Simulation> simulation = sim::Simulate(config);
  EXPECT_TRUE(simulation.ok()) << simulation.status();
  return simulation.ok() ? *std::move(simulation) : sim::Simulation{};
}

// What the first screen must answer, checked against the job result and the simulator's truth
// of which rank idles most.
void ExpectFirstScreen(const job::Result& job, const std::string& text, int32_t most_idle_rank) {
  const std::vector<std::string> lines = FirstLines(text, 15);
  std::string screen;
  for (const std::string& line : lines) {
    EXPECT_LE(line.size(), 120u) << line;
    absl::StrAppend(&screen, line, " ");
  }
  const job::Pipeline& pipeline = job.pipelines.at(static_cast<size_t>(job.job.worst_pipeline));
  // Continuations are joined back with a space where the wrap cut them.
  std::string joined;
  for (absl::string_view word : absl::StrSplit(screen, ' ', absl::SkipEmpty())) {
    absl::StrAppend(&joined, word, " ");
  }
  EXPECT_THAT(joined,
              HasSubstr(absl::StrCat("bubble ", Percent(pipeline.bubble.bubble_fraction), "%")));
  EXPECT_THAT(joined, HasSubstr(absl::StrCat("(rank ", most_idle_rank, ") idles most")));
  ASSERT_FALSE(pipeline.causes.causes.empty());
  EXPECT_THAT(joined,
              HasSubstr(absl::StrCat("top cause: ", std::string(root_causes::CauseName(
                                                        pipeline.causes.causes.front().cause)))));
  EXPECT_THAT(joined, HasSubstr("next step: "));
  EXPECT_THAT(lines.front(), Not(HasSubstr("info")));
}

TEST(FirstScreenTest, SimulatedImbalancedJob) {
  sim::Simulation simulation = Imbalanced();
  absl::StatusOr<job::Result> job = job::Analyze(simulation.trace, job::Options{});
  ASSERT_TRUE(job.ok()) << job.status();
  // The truth's rank with the most idle time over the iterations (every rank shares the
  // windows, so the most idle time is the largest bubble share).
  std::vector<TimeNs> idle(4, 0);
  for (const sim::IterationTruth& iteration : simulation.truth.iterations) {
    for (const sim::RankIterationTruth& rank : iteration.ranks) {
      idle[static_cast<size_t>(rank.rank)] += rank.split.idle;
    }
  }
  const auto most = static_cast<int32_t>(std::max_element(idle.begin(), idle.end()) - idle.begin());
  ExpectFirstScreen(*job, AnalyzeText(*job, SummaryReportOptions{}), most);
}

// Stages whose bubble shares read the same (to the digit shown) are said to idle alike, not
// one of them named as both the most and the least idle.
TEST(FirstScreenTest, StagesThatIdleAlikeAreSaidToBeAlike) {
  sim::Simulation simulation = Imbalanced();
  absl::StatusOr<job::Result> job = job::Analyze(simulation.trace, job::Options{});
  ASSERT_TRUE(job.ok()) << job.status();
  std::vector<bubble::RankTotals>& ranks = job->pipelines.at(0).bubble.per_rank;
  ASSERT_EQ(ranks.size(), 4u);
  // 38.59%, 38.60%, 38.61% and 38.62% all read 38.6%.
  for (size_t i = 0; i < ranks.size(); ++i) {
    ranks[i].bubble_fraction = 0.3859 + 0.0001 * static_cast<double>(i);
  }
  const std::string text = DiagnosisText(*job);
  EXPECT_THAT(text, HasSubstr("\n  where: all 4 stages idle alike, 38.6% of their time\n"));
  EXPECT_THAT(text, Not(HasSubstr("idles most")));
  // Apart at the digit shown, the most and the least idle are named.
  ranks[3].bubble_fraction = 0.40;
  EXPECT_THAT(DiagnosisText(*job),
              HasSubstr(absl::StrCat("idles most, 40.0% of its time; stage ",
                                     StagePosition(job->pipelines.at(0), ranks[0].rank))));
}

TEST(FirstScreenTest, RealCpuRun) {
  LoadOptions load;
  load.jobs = 2;
  absl::StatusOr<Trace> trace = LoadTrace(
      {std::string(BUBBLESCOPE_SOURCE_DIR) + "/sample_traces/torch_cpu/1f1b_p4_m8"}, load);
  ASSERT_TRUE(trace.ok()) << trace.status();
  absl::StatusOr<job::Result> job = job::Analyze(*trace, job::Options{});
  ASSERT_TRUE(job.ok()) << job.status();
  const job::Pipeline& pipeline = job->pipelines.at(0);
  const auto most =
      std::max_element(pipeline.bubble.per_rank.begin(), pipeline.bubble.per_rank.end(),
                       [](const bubble::RankTotals& a, const bubble::RankTotals& b) {
                         return a.bubble_fraction < b.bubble_fraction;
                       });
  ExpectFirstScreen(*job, AnalyzeText(*job, SummaryReportOptions{}), most->rank);
}

// One rank's trace alone: no pipeline evidence, said plainly; the cause asks for the other
// ranks' traces rather than pointing at a links table that cannot have any link.
TEST(FirstScreenTest, OneRankAloneHasNoPipelineEvidence) {
  sim::Simulation simulation = Imbalanced();
  simulation.trace.ranks.resize(1);
  absl::StatusOr<job::Result> job = job::Analyze(simulation.trace, job::Options{});
  ASSERT_TRUE(job.ok()) << job.status();
  const std::string text = AnalyzeText(*job, SummaryReportOptions{});
  std::string screen;
  for (const std::string& line : FirstLines(text, 15)) absl::StrAppend(&screen, line, "\n");
  EXPECT_THAT(screen, HasSubstr("one rank loaded (rank 0): no pipeline evidence"));
  EXPECT_THAT(screen, Not(HasSubstr("links table")));
  EXPECT_THAT(screen, Not(HasSubstr("where:")));
}

TEST(OneFigureTest, ExcessBubbleAndImbalanceSavingAsStored) {
  sim::Simulation simulation = Imbalanced();
  absl::StatusOr<job::Result> job = job::Analyze(simulation.trace, job::Options{});
  ASSERT_TRUE(job.ok()) << job.status();
  const job::Pipeline& pipeline = job->pipelines.at(0);
  ASSERT_TRUE(pipeline.ideal.has_value());
  ASSERT_TRUE(pipeline.excess_bubble_fraction.has_value());
  // The stored excess is the measured bubble above the schedule's own, against the truth.
  EXPECT_NEAR(*pipeline.excess_bubble_fraction,
              simulation.truth.bubble_fraction - pipeline.ideal->fraction, 0.005);
  const std::string excess = absl::StrFormat("%.1f", 100.0 * *pipeline.excess_bubble_fraction);

  const std::string text = AnalyzeText(*job, SummaryReportOptions{});
  EXPECT_THAT(text, HasSubstr(absl::StrCat("excess ", excess, " points")));
  const std::string html = AnalyzeHtml(*job, SummaryReportOptions{});
  EXPECT_THAT(html, HasSubstr(absl::StrCat("excess ", excess, " points")));
  EXPECT_THAT(html, HasSubstr(absl::StrCat(excess, " pt")));
  absl::StatusOr<std::string> json = AnalyzeJson(*job, SummaryReportOptions{});
  ASSERT_TRUE(json.ok());
  simdjson::dom::parser parser;
  simdjson::dom::element root = parser.parse(*json);
  EXPECT_EQ(double(root["pipelines"].at(0)["excess_bubble_fraction"]),
            *pipeline.excess_bubble_fraction);

  // The imbalance fix: one prediction, from the what-if model, which its cause quotes once.
  ASSERT_TRUE(pipeline.slowest_stage_effect.has_value());
  EXPECT_EQ(pipeline.slowest_stage_effect->stage, 2);
  const root_causes::RootCause* imbalance = nullptr;
  for (const root_causes::RootCause& cause : pipeline.causes.causes) {
    if (cause.cause == root_causes::Cause::kStageImbalance) imbalance = &cause;
  }
  ASSERT_NE(imbalance, nullptr);
  EXPECT_EQ(imbalance->iteration_before_ns, pipeline.slowest_stage_effect->iteration_ns);
  EXPECT_EQ(imbalance->iteration_after_ns, pipeline.slowest_stage_effect->iteration_at_mean_ns);
  const std::string modelled =
      absl::StrCat("modelled ", Millis(static_cast<double>(imbalance->iteration_before_ns)),
                   " ms -> ", Millis(static_cast<double>(imbalance->iteration_after_ns)), " ms");
  // Once in the first screen's top cause, once in the causes' list: the same figures.
  EXPECT_EQ(Occurrences(text, modelled), 2u) << text;
  // No other model's iteration time for the same fix anywhere in the report.
  for (const findings::Finding& finding : pipeline.findings.findings) {
    if (finding.kind != findings::Kind::kStageImbalance) continue;
    EXPECT_THAT(finding.message, HasSubstr("what-if model"));
    EXPECT_THAT(finding.message, Not(HasSubstr(" ms per iteration")));
  }
}

// whatif's text and --html tables: a row of another m says which it keeps, the microbatch size
// (more samples per step) or the global batch (as analyze's findings predict m); a row of the
// measured m says neither.
TEST(OneFigureTest, WhatIfTableSaysWhatItsMMeans) {
  whatif::Result result;
  result.baseline.candidate = whatif::Candidate{sim::Schedule::k1F1B, 8, 1, false, {}};
  whatif::Prediction more;
  more.candidate = whatif::Candidate{sim::Schedule::k1F1B, 16, 1, false, {}};
  whatif::Prediction same;
  same.candidate = whatif::Candidate{sim::Schedule::k1F1B, 16, 1, true, {}};
  whatif::Prediction interleaved;
  interleaved.candidate = whatif::Candidate{sim::Schedule::kInterleaved1F1B, 8, 2, false, {}};
  result.candidates = {more, same, interleaved};
  const std::string table = html::PredictionTable(result);
  EXPECT_EQ(Occurrences(table, "(microbatch size kept)"), 1u) << table;
  EXPECT_EQ(Occurrences(table, "(same global batch)"), 1u) << table;
  EXPECT_THAT(table, HasSubstr("1f1b m=16 v=1 (microbatch size kept)<td>"));

  const std::string text = WhatIfText({PipelineWhatIf{0, {0, 1}, result, std::nullopt}});
  EXPECT_EQ(Occurrences(text, "(microbatch size kept)"), 1u) << text;
  EXPECT_EQ(Occurrences(text, "(same global batch)"), 1u) << text;
  EXPECT_THAT(text, HasSubstr("\n  1f1b m=16 v=1 (microbatch size kept) "));
  EXPECT_THAT(text, HasSubstr("\n  1f1b m=16 v=1 (same global batch) "));
  EXPECT_THAT(text, HasSubstr("\n  interleaved m=8 v=2 "));
}

}  // namespace
}  // namespace bubblescope
