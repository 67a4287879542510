// The gate's verdict as text, Markdown and JUnit, and the diff as text and JSON, on hand-built
// results: exact spellings, escaping of what a file name may hold, and documents that parse.
#include "report/gate_report.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "report/diff_report.h"
#include "simdjson.h"

namespace bubblescope {
namespace {

using ::testing::HasSubstr;

compare::GateResult TwoChecks() {
  compare::GateResult result;
  result.baseline_source = "base|<&>.json";
  result.current_source = "traces/";
  result.notes = {"pipeline 0: m changed from 8 to 4"};
  compare::Check bubble;
  bubble.kind = compare::CheckKind::kMaxBubbleIncrease;
  bubble.pipeline = "pipeline 0";
  bubble.baseline = 0.25;
  bubble.current = 0.30;
  bubble.limit = 0.02;
  bubble.outcome = compare::CheckOutcome::kFail;
  result.checks.push_back(bubble);
  compare::Check memory;
  memory.kind = compare::CheckKind::kMaxMemoryIncrease;
  memory.pipeline = "pipeline 0";
  memory.stage = 1;
  memory.rank = 5;
  memory.baseline = 1073741824.0;
  memory.current = 1073741824.0 + 52428800.0;
  memory.limit = 0.05;
  memory.outcome = compare::CheckOutcome::kPass;
  result.checks.push_back(memory);
  compare::Check skipped = memory;
  skipped.stage = 2;
  skipped.rank = 6;
  skipped.baseline.reset();
  skipped.current.reset();
  skipped.outcome = compare::CheckOutcome::kSkipped;
  skipped.note = "the current run has no memory samples";
  result.checks.push_back(skipped);
  return result;
}

TEST(GateReportTest, CheckCellsSpellEachFigure) {
  const compare::GateResult result = TwoChecks();
  EXPECT_EQ(CheckName(result.checks[0]), "pipeline 0: max-bubble-increase");
  EXPECT_EQ(CheckName(result.checks[1]), "pipeline 0 stage 1 (rank 5): max-memory-increase");
  const CheckCells bubble = CheckCellsOf(result.checks[0]);
  EXPECT_EQ(bubble.baseline, "25.0%");
  EXPECT_EQ(bubble.current, "30.0%");
  EXPECT_EQ(bubble.delta, "+5.0 pts");
  EXPECT_EQ(bubble.limit, "<= +2.0 pts");
  const CheckCells memory = CheckCellsOf(result.checks[1]);
  EXPECT_EQ(memory.baseline, "1.00 GiB");
  EXPECT_EQ(memory.delta, "+50.00 MiB (+4.9%)");
  EXPECT_EQ(memory.limit, "<= +5.0%");
  EXPECT_EQ(GateVerdictLine(result), "FAIL: 1 of 3 checks failed (1 skipped)");
}

TEST(GateReportTest, TextListsNotesAndOneRowPerCheck) {
  const std::string text = GateText(TwoChecks());
  EXPECT_THAT(text,
              ::testing::StartsWith("bubblescope gate: FAIL: 1 of 3 checks failed (1 skipped)\n"
                                    "  baseline: base|<&>.json\n  current:  traces/\n"
                                    "  note: pipeline 0: m changed from 8 to 4\n"));
  EXPECT_THAT(text, ::testing::ContainsRegex("pipeline 0: max-bubble-increase +25\\.0% +30\\.0% +"
                                             "\\+5\\.0 pts +<= \\+2\\.0 pts +FAIL\n"));
}

TEST(GateReportTest, MarkdownIsOneTableWithFailuresInBold) {
  const std::string markdown = GateMarkdown(TwoChecks());
  EXPECT_EQ(
      markdown,
      "## bubblescope gate: **regression**\n\n"
      "1 of 3 checks failed (1 skipped). Baseline `base|<&>.json`, current `traces/`.\n\n"
      "- pipeline 0: m changed from 8 to 4\n\n"
      "| check | baseline | current | delta | limit | result |\n"
      "|---|---:|---:|---:|---|---|\n"
      "| pipeline 0: max-bubble-increase | 25.0% | 30.0% | +5.0 pts | &lt;= +2.0 pts | **FAIL** |\n"
      "| pipeline 0 stage 1 (rank 5): max-memory-increase | 1.00 GiB | 1.05 GiB | "
      "+50.00 MiB (+4.9%) | &lt;= +5.0% | pass |\n"
      "| pipeline 0 stage 2 (rank 6): max-memory-increase | - | - | - | &lt;= +5.0% | "
      "skipped (the current run has no memory samples) |\n");
}

TEST(GateReportTest, JunitHasOneTestCasePerCheck) {
  const std::string junit = GateJunit(TwoChecks());
  EXPECT_THAT(junit, ::testing::StartsWith(
                         "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                         "<testsuites name=\"bubblescope gate\" tests=\"3\" failures=\"1\" "
                         "errors=\"0\" skipped=\"1\">\n"));
  EXPECT_THAT(junit,
              HasSubstr("    <testcase classname=\"bubblescope.gate\" "
                        "name=\"pipeline 0: max-bubble-increase\">\n"
                        "      <failure type=\"regression\" message=\"baseline 25.0%, current "
                        "30.0%, delta +5.0 pts, limit &lt;= +2.0 pts\">"));
  EXPECT_THAT(junit, HasSubstr("<skipped message=\"the current run has no memory samples\"/>"));
  EXPECT_THAT(junit, ::testing::EndsWith("  </testsuite>\n</testsuites>\n"));
  size_t cases = 0;
  for (size_t at = junit.find("<testcase "); at != std::string::npos;
       at = junit.find("<testcase ", at + 1)) {
    ++cases;
  }
  EXPECT_EQ(cases, 3u);
}

TEST(DiffReportTest, JsonParsesAndTextOpensWithTheShape) {
  compare::DiffResult diff;
  diff.source_a = "a.json";
  diff.source_b = "b/";
  compare::PipelineDiff pipeline;
  pipeline.index_a = 0;
  pipeline.index_b = 0;
  pipeline.ranks_a = {0, 1};
  pipeline.ranks_b = {0, 1};
  pipeline.shape_changes = {{.figure = "m", .a = "8", .b = "4"}};
  pipeline.bubble_fraction = {.a = 0.2, .b = 0.3, .spread = 0.01};
  pipeline.findings = {{.change = compare::FindingChange::kAppeared,
                        .kind = "stage_imbalance",
                        .severity = "warning",
                        .message = "stage 1 is slow",
                        .ranks_a = {},
                        .ranks_b = {1},
                        .cost_us = {.a = std::nullopt, .b = 1500.0, .spread = std::nullopt}}};
  diff.pipelines.push_back(pipeline);

  const std::string text = DiffText(diff);
  EXPECT_THAT(text, HasSubstr("pipeline 0: ranks 0,1 | 0,1 (paired by same_ranks)\n"
                              "  shape changed: m 8 -> 4\n"));
  EXPECT_THAT(text, HasSubstr("  findings: 0 on both sides\n"
                              "    + appeared   stage_imbalance (ranks 1, 1.500 ms of rank "
                              "time summed over the complete iterations): stage 1 is slow\n"));

  absl::StatusOr<std::string> json = DiffJson(diff, "1.2.3");
  ASSERT_TRUE(json.ok()) << json.status();
  simdjson::dom::parser parser;
  simdjson::dom::element document;
  ASSERT_EQ(parser.parse(*json).get(document), simdjson::SUCCESS) << *json;
  EXPECT_EQ(std::string_view(document["schema"]), "bubblescope.diff/1");
  simdjson::dom::element bubble = document["pipelines"].at(0)["figures"]["bubble_fraction"];
  EXPECT_NEAR(double(bubble["delta"]), 0.1, 1e-12);
  EXPECT_NEAR(double(bubble["relative"]), 0.5, 1e-12);
  EXPECT_FALSE(bool(bubble["within_spread"]));
  EXPECT_TRUE(document["pipelines"].at(0)["figures"]["latency_p50_us"]["a"].is_null());
  EXPECT_EQ(std::string_view(document["pipelines"].at(0)["findings"].at(0)["change"]), "appeared");
}

// A failed check with the diff's changes behind it: listed under the Markdown table, after the
// JUnit failure's figures, and under the text table.
TEST(GateReportTest, TheChangesBehindAFailedCheckFollowIt) {
  compare::GateResult result = TwoChecks();
  using Kind = compare::ChangeBehind::Kind;
  auto change = [](Kind kind, const char* figure, int32_t stage, int32_t dst, double a, double b) {
    compare::ChangeBehind behind;
    behind.kind = kind;
    behind.figure = figure;
    behind.stage = stage;
    behind.dst_stage = dst;
    behind.change = {.a = a, .b = b, .spread = std::nullopt};
    return behind;
  };
  compare::ChangeBehind shape = change(Kind::kShape, "m", 0, 0, 0, 0);
  shape.a = "8";
  shape.b = "4";
  result.checks[0].behind = {shape, change(Kind::kStageOp, "backward", 2, 0, 2000.0, 3000.0),
                             change(Kind::kLink, "transfer", 1, 2, 500.0, 750.0)};
  EXPECT_THAT(GateMarkdown(result),
              HasSubstr("\n### What changed behind the failed checks\n\n"
                        "- **pipeline 0: max-bubble-increase**\n"
                        "  - m 8 -&gt; 4\n"
                        "  - stage 2 backward 2.000 ms -&gt; 3.000 ms (+1.000 ms (+50.0%))\n"
                        "  - link 1-&gt;2 transfer (median) 0.500 ms -&gt; 0.750 ms (+0.250 ms "
                        "(+50.0%))\n"));
  EXPECT_THAT(GateJunit(result),
              HasSubstr("limit &lt;= +2.0 pts&#10;what changed: m 8 -&gt; 4; stage 2 backward "
                        "2.000 ms -&gt; 3.000 ms (+1.000 ms (+50.0%)); link 1-&gt;2 transfer "
                        "(median) 0.500 ms -&gt; 0.750 ms (+0.250 ms (+50.0%))</failure>"));
  EXPECT_THAT(GateText(result), HasSubstr("  pipeline 0: max-bubble-increase: what changed: m "
                                          "8 -> 4; stage 2 backward"));
}

// A report's strings (its schedule, a reason, a file name) reach the PR comment a CI posts, which
// GitHub renders as Markdown with raw HTML: they are escaped as the JUnit output escapes them,
// with Markdown's own syntax characters too, and a file name stays one code span.
TEST(GateReportTest, MarkdownEscapesTheReportsStrings) {
  compare::GateResult result = TwoChecks();
  result.baseline_source = "a`<b>`.json";
  result.notes = {"pipeline 0: schedule changed from 1f1b to <img src=x onerror=alert(1)>"};
  result.checks[2].note = "no complete iteration (</td><script>x()</script> *bold* [l](u) a|b)";
  compare::ChangeBehind shape;
  shape.kind = compare::ChangeBehind::Kind::kShape;
  shape.figure = "schedule";
  shape.a = "1f1b";
  shape.b = "<b>zb</b>";
  result.checks[0].behind = {shape};
  const std::string markdown = GateMarkdown(result);
  EXPECT_THAT(markdown, HasSubstr("Baseline ``a`<b>`.json``, current `traces/`."));
  EXPECT_THAT(markdown, HasSubstr("- pipeline 0: schedule changed from 1f1b to &lt;img src=x "
                                  "onerror=alert(1)&gt;\n"));
  EXPECT_THAT(markdown, HasSubstr("| skipped (no complete iteration (&lt;/td&gt;&lt;script&gt;x()"
                                  "&lt;/script&gt; \\*bold\\* \\[l\\](u) a\\|b)) |\n"));
  EXPECT_THAT(markdown, HasSubstr("  - schedule 1f1b -&gt; &lt;b&gt;zb&lt;/b&gt;\n"));
  EXPECT_THAT(markdown, ::testing::Not(HasSubstr("<img")));
  EXPECT_THAT(markdown, ::testing::Not(HasSubstr("<script")));
  EXPECT_THAT(markdown, ::testing::Not(HasSubstr("<b>zb")));
}

TEST(GateReportTest, EveryCheckSkippedIsNothingChecked) {
  compare::GateResult result = TwoChecks();
  result.checks.erase(result.checks.begin(), result.checks.begin() + 2);
  EXPECT_TRUE(result.NothingChecked());
  EXPECT_THAT(GateText(result), HasSubstr("bubblescope gate: NOTHING CHECKED: 0 of 1 checks "
                                          "failed (1 skipped)\n"));
  EXPECT_THAT(GateMarkdown(result), HasSubstr("## bubblescope gate: **nothing checked**\n"));
}

}  // namespace
}  // namespace bubblescope
