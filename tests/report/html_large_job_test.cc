// The HTML page of a large job (docs/html-report.md, "Large jobs"): the 1,024-rank job
// (128 data-parallel replicas of 8 stages) stays under 10 MB with the 4 worst pipelines in full,
// every pipeline a row of the table and the replicas folded into one per-stage spread; the
// spread's cells on a DP 4 job with one slow replica; a small job's page as it always was.
#include <cstdint>
#include <cstdio>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "job/job.h"
#include "job/replica_job.h"
#include "report/html_parse.h"
#include "report/html_report.h"
#include "synth/synthetic_job.h"

namespace bubblescope {
namespace {

using html_testing::Between;
using html_testing::Count;
using ::testing::HasSubstr;
using ::testing::Not;

job::Result AnalyzeForHtml(const Trace& trace) {
  job::Options options;
  options.tradeoff = true;  // as analyze --html asks
  absl::StatusOr<job::Result> result = job::Analyze(trace, options);
  EXPECT_TRUE(result.ok()) << result.status();
  return result.ok() ? *std::move(result) : job::Result{};
}

// The ids of the pipelines drawn in full, in page order.
std::vector<int32_t> DetailIds(std::string_view page) {
  std::vector<int32_t> ids;
  constexpr std::string_view kOpen = "<details id=p";
  for (size_t at = page.find(kOpen); at != std::string_view::npos; at = page.find(kOpen, at + 1)) {
    ids.push_back(std::stoi(std::string(page.substr(at + kOpen.size(), 6))));
  }
  return ids;
}

// The first cell of every row of the table under `heading`.
std::vector<std::string> FirstCells(std::string_view page, std::string_view heading) {
  const std::string_view table = Between(page, heading, "</table>");
  std::vector<std::string> cells;
  // Rows are "<tr><td>..." or, the worst one, "<tr class=worst><td>...".
  for (size_t at = table.find("<tr"); at != std::string_view::npos;
       at = table.find("<tr", at + 1)) {
    const size_t line_end = table.find('\n', at);
    const std::string_view row = table.substr(at, line_end - at);
    const size_t first = row.find("<td>");
    if (first == std::string_view::npos) continue;  // the header row
    const size_t start = first + 4;
    cells.emplace_back(row.substr(start, row.find("<td>", start) - start));
  }
  return cells;
}

TEST(HtmlLargeJobTest, ThousandRanksStayUnderTenMegabytes) {
  absl::StatusOr<sim::Simulation> simulation = sim::Simulate(replica_testing::ThousandRanks());
  ASSERT_TRUE(simulation.ok()) << simulation.status();
  ASSERT_EQ(simulation->trace.ranks.size(), 1024u);
  const job::Result result = AnalyzeForHtml(simulation->trace);
  ASSERT_EQ(result.pipelines.size(), 128u);
  ASSERT_EQ(result.replica_sets.size(), 1u);
  EXPECT_EQ(result.replica_sets[0].pipelines.size(), 128u);

  const std::string page = AnalyzeHtml(result, SummaryReportOptions{});
  std::printf("[html] 1,024 ranks (128 x 8): %zu bytes\n", page.size());
  EXPECT_LT(page.size(), size_t{10} << 20);

  // In full: the 4 largest bubbles, worst first (the job's ranking), the worst one open.
  const std::vector<int32_t>& worst_first = result.job.pipelines_by_bubble;
  ASSERT_EQ(worst_first.size(), 128u);
  EXPECT_EQ(DetailIds(page), std::vector<int32_t>(worst_first.begin(), worst_first.begin() + 4));
  EXPECT_EQ(Count(page, "<details id=p"), 4u);
  EXPECT_EQ(Count(page, " open>"), 1u);
  for (size_t k = 0; k + 1 < worst_first.size(); ++k) {
    EXPECT_GE(result.pipelines[static_cast<size_t>(worst_first[k])].bubble.bubble_fraction,
              result.pipelines[static_cast<size_t>(worst_first[k + 1])].bubble.bubble_fraction);
  }

  // Every pipeline is one row of the table, worst first; only those in full are links.
  const std::vector<std::string> rows = FirstCells(page, "<h2>All pipelines");
  ASSERT_EQ(rows.size(), 128u);
  std::set<std::string> seen(rows.begin(), rows.end());
  EXPECT_EQ(seen.size(), 128u);
  for (size_t k = 0; k < rows.size(); ++k) {
    const std::string index = absl::StrCat(worst_first[k]);
    EXPECT_EQ(rows[k], k < 4 ? absl::StrCat("<a href=\"#p", index, "\">", index, "</a>") : index);
  }

  // The replicas folded: one set, one spread row per stage.
  EXPECT_THAT(page, HasSubstr("replica set 0: pipelines 0-127, 128 data-parallel copies of p=8 "
                              "m=8 v=1 1f1b"));
  EXPECT_EQ(FirstCells(page, "<h3 id=r0>"),
            (std::vector<std::string>{"0", "1", "2", "3", "4", "5", "6", "7"}));
}

TEST(HtmlLargeJobTest, ManyOpsMakeAJobLargeToo) {
  // 64 ranks only, but 16 pipelines of 4 stages x 64 microbatches over 3 iterations draw
  // 16 x 4 x 128 x 3 = 24,576 ops, past the 20,000 that make a page of several MB.
  sim::Config config = replica_testing::DataParallelJob(replica_testing::kForwardNs);
  config.stages = 4;
  config.microbatches = 64;
  config.costs.assign(4, config.costs[0]);
  config.weights_bytes.assign(4, config.weights_bytes[0]);
  config.parallel.data = 16;
  absl::StatusOr<sim::Simulation> simulation = sim::Simulate(config);
  ASSERT_TRUE(simulation.ok()) << simulation.status();
  const job::Result result = AnalyzeForHtml(simulation->trace);
  ASSERT_EQ(result.pipelines.size(), 16u);
  size_t ops = 0;
  for (const job::Pipeline& pipeline : result.pipelines) ops += pipeline.op_timeline.ops.size();
  EXPECT_EQ(ops, 16u * 4u * 128u * 3u);
  const std::string page = AnalyzeHtml(result, SummaryReportOptions{});
  EXPECT_EQ(Count(page, "<details id=p"), 4u);
  EXPECT_EQ(FirstCells(page, "<h2>All pipelines").size(), 16u);
  // Below both bounds the same job keeps every pipeline in full.
  SummaryReportOptions roomy;
  roomy.fold_above_ops = 30'000;
  EXPECT_EQ(Count(AnalyzeHtml(result, roomy), "<details id=p"), 16u);
}

TEST(HtmlLargeJobTest, TheSpreadNamesTheSlowReplica) {
  const replica_testing::OneSlowReplica job = replica_testing::MakeOneSlowReplica();
  const job::Result result = AnalyzeForHtml(job.trace);
  ASSERT_EQ(result.replica_sets.size(), 1u);
  const int32_t slow = result.replica_sets[0].worst_pipeline;
  ASSERT_EQ(result.pipelines[static_cast<size_t>(slow)].crossrank.pipeline.stage_order().front(),
            replica_testing::kSlowReplica);
  SummaryReportOptions options;
  options.fold_above_ranks = 0;  // fold this 8-rank job as if it were large
  const std::string page = AnalyzeHtml(result, options);
  const std::string_view set = Between(page, "<h3 id=r0>", "</table>");
  ASSERT_FALSE(set.empty());
  // Stage 1's forward: 1 ms, 1 ms (the nearest-rank median of four) and 1.5 ms on the slow
  // replica, which is drawn in full (4 pipelines, all among the worst 4), so a link.
  EXPECT_THAT(set, HasSubstr(absl::StrCat("1.000 / 1.000 / 1.500 <span class=note>(max <a "
                                          "href=\"#p",
                                          slow, "\">p", slow, "</a>)</span>")));
  // Compute per iteration on stage 1: 4 x 3 ms, and 4 x 3.5 ms on the slow one.
  EXPECT_THAT(set, HasSubstr("12.000 / 12.000 / 14.000"));
  // Stage 0's forward is 1 ms everywhere: one value.
  EXPECT_THAT(Between(set, "<tr><td>0<td>", "\n"), HasSubstr("<td>1.000<td>"));
  EXPECT_EQ(Count(page, "<details id=p"), 4u);
}

TEST(HtmlLargeJobTest, ASmallJobKeepsItsPage) {
  const replica_testing::OneSlowReplica job = replica_testing::MakeOneSlowReplica();
  const job::Result result = AnalyzeForHtml(job.trace);
  const std::string page = AnalyzeHtml(result, SummaryReportOptions{});  // 8 ranks <= 256
  SummaryReportOptions never;
  never.fold_above_ranks = -1;
  never.fold_above_ops = -1;
  EXPECT_EQ(page, AnalyzeHtml(result, never));
  EXPECT_THAT(page, Not(HasSubstr("Data-parallel replicas")));
  EXPECT_THAT(page, Not(HasSubstr("<th>replica set")));
  EXPECT_EQ(Count(page, "<details id=p"), 4u);
}

}  // namespace
}  // namespace bubblescope
