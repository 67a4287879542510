// End to end: `bubblescope analyze --html FILE` (and `whatif --html`) writes the HTML report
// beside the usual report, never over an input, and refuses to share a file with -o.
#include <filesystem>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "support/subprocess.h"
#include "support/test_files.h"

namespace bubblescope::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::StartsWith;

// The bundled 1F1B set (p=4, m=8, its truth beside it), copied so nothing in the source tree
// can be touched.
class AnalyzeHtmlCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::copy(std::string(BUBBLESCOPE_SOURCE_DIR) + "/sample_traces/sim_1f1b_p4_m8", traces_);
  }
  CommandResult Analyze(std::vector<std::string> extra) {
    std::vector<std::string> argv = {BUBBLESCOPE_BINARY, "analyze", traces_.string()};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return RunCommand(argv);
  }
  std::string Path(const std::string& name) const {
    return (fs::path(dir_.path()) / name).string();
  }

  TempDir dir_;
  fs::path traces_ = fs::path(dir_.path()) / "traces";
};

TEST_F(AnalyzeHtmlCliTest, WritesThePageBesideTheTextReport) {
  const std::string page = Path("report.html");
  CommandResult run = Analyze({"--html", page});
  ASSERT_EQ(run.exit_status, 0) << run.err;
  EXPECT_THAT(run.out, HasSubstr("pipeline 0: ranks"));  // the text report, as without --html
  const std::string html = ReadFile(page);
  EXPECT_THAT(html, StartsWith("<!DOCTYPE html>"));
  // One pipeline of four stages, open: four stage rows in the shown iteration's picture.
  EXPECT_THAT(html, HasSubstr("<details id=p0 open>"));
  EXPECT_THAT(html, HasSubstr("<g class=sr data-stage=3 "));
  EXPECT_THAT(html, ::testing::Not(HasSubstr("<g class=sr data-stage=4 ")));
}

TEST_F(AnalyzeHtmlCliTest, NeverWrittenOverAnInput) {
  const std::string input = (traces_ / "rank0.pt.trace.json.gz").string();
  const std::string before = ReadFile(input);
  CommandResult run = Analyze({"--html", input});
  EXPECT_EQ(run.exit_status, 1);
  // The first line: the simulator's truth.json beside the ranks is passed over without a note.
  EXPECT_THAT(run.err,
              StartsWith("bubblescope: --html: cannot write " + input + ": it is the input"));
  EXPECT_EQ(ReadFile(input), before);
  // truth.json, passed over in the directory, is protected as well.
  const std::string truth = (traces_ / "truth.json").string();
  const std::string truth_before = ReadFile(truth);
  EXPECT_EQ(Analyze({"--html", truth}).exit_status, 1);
  EXPECT_EQ(ReadFile(truth), truth_before);
}

TEST_F(AnalyzeHtmlCliTest, SameFileAsTheReportIsAUsageError) {
  const std::string both = Path("report");
  CommandResult run = Analyze({"-o", both, "--html", both});
  EXPECT_EQ(run.exit_status, 2);
  EXPECT_EQ(run.err, "bubblescope: --html names the same file as -o (" + both +
                         "): one would replace the other\n");
  EXPECT_FALSE(fs::exists(both));
}

// whatif --html, from traces and from analyze's JSON report (no trace read): the predictions'
// table and the chart, for the one pipeline.
TEST_F(AnalyzeHtmlCliTest, WhatIfWritesItsPageToo) {
  const std::string report = Path("report.json");
  ASSERT_EQ(Analyze({"--format", "json", "-o", report}).exit_status, 0);
  for (const std::string& input : {traces_.string(), report}) {
    SCOPED_TRACE(input);
    const std::string page = Path("whatif.html");
    CommandResult run = RunCommand({BUBBLESCOPE_BINARY, "whatif", input, "--html", page});
    ASSERT_EQ(run.exit_status, 0) << run.err;
    EXPECT_THAT(run.out, HasSubstr("as measured, modelled"));  // the text report as before
    const std::string html = ReadFile(page);
    EXPECT_THAT(html, StartsWith("<!DOCTYPE html>"));
    EXPECT_THAT(html, HasSubstr("<details id=p0 open><summary>Pipeline 0: ranks "));
    EXPECT_THAT(html, HasSubstr("<h3>Predictions</h3>"));
    EXPECT_THAT(html, HasSubstr("<tr><td>as measured, modelled: 1f1b m=8 v=1<td>"));
    EXPECT_THAT(html, HasSubstr("<h3>What if: bubble and memory against m</h3>"));
  }
}

TEST_F(AnalyzeHtmlCliTest, HelpNamesTheFlag) {
  for (const char* verb : {"analyze", "whatif"}) {
    CommandResult help = RunCommand({BUBBLESCOPE_BINARY, verb, "--help"});
    EXPECT_EQ(help.exit_status, 0);
    EXPECT_THAT(help.out, HasSubstr("--html FILE"));
    EXPECT_THAT(help.out, HasSubstr("docs/html-report.md"));
  }
}

// A large job (100 data-parallel replicas of 3 stages: 300 ranks, above the 256 that make a job
// large): the page draws the 4 worst pipelines in full plus the ones --show-pipelines picks, the
// text report folds the replicas, and a pipeline the job lacks is a usage error.
TEST(AnalyzeLargeJobCliTest, ShowPipelinesAddsToTheWorstInFull) {
  TempDir dir;
  const std::string traces = (fs::path(dir.path()) / "dp100").string();
  CommandResult made =
      RunCommand({BUBBLESCOPE_BINARY, "simulate", "-o", traces, "--data-parallel", "100",
                  "--stages", "3", "-m", "4", "-k", "2", "--dp-sync-us", "100"});
  ASSERT_EQ(made.exit_status, 0) << made.err;
  const std::string page = (fs::path(dir.path()) / "report.html").string();
  CommandResult run = RunCommand(
      {BUBBLESCOPE_BINARY, "analyze", traces, "--html", page, "--show-pipelines", "57,98-99"});
  ASSERT_EQ(run.exit_status, 0) << run.err;
  EXPECT_THAT(run.out, HasSubstr("\nreplica set 0: pipelines 0-99, 100 data-parallel copies"));
  EXPECT_THAT(run.out, HasSubstr("\npipeline 57: ranks 57,157,257\n"));
  EXPECT_THAT(run.out, HasSubstr("\npipeline 99: ranks 99,199,299\n"));
  EXPECT_THAT(run.out, HasSubstr("\npipeline 98: ranks 98,198,298\n"));
  EXPECT_THAT(run.out, ::testing::Not(HasSubstr("\npipeline 97: ")));
  const std::string html = ReadFile(page);
  size_t details = 0;
  for (size_t at = html.find("<details id=p"); at != std::string::npos;
       at = html.find("<details id=p", at + 1)) {
    ++details;
  }
  EXPECT_EQ(details, 7u);  // the worst 4 and the three picked
  EXPECT_THAT(html, HasSubstr("<details id=p57>"));
  EXPECT_THAT(html, HasSubstr("<details id=p99>"));

  for (const char* list : {"100", "98-120"}) {
    CommandResult missing =
        RunCommand({BUBBLESCOPE_BINARY, "analyze", traces, "--show-pipelines", list});
    EXPECT_EQ(missing.exit_status, 2);
    EXPECT_THAT(missing.err,
                HasSubstr("bubblescope: --show-pipelines: no pipeline 100 (the job has 100)\n"));
  }
  CommandResult backwards =
      RunCommand({BUBBLESCOPE_BINARY, "analyze", traces, "--show-pipelines", "5-2"});
  EXPECT_EQ(backwards.exit_status, 2);
  EXPECT_THAT(backwards.err, HasSubstr("--show-pipelines"));
}

}  // namespace
}  // namespace bubblescope::testing
