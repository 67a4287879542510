// End to end: `bubblescope gate` on simulated pairs whose differences are known in advance
// (compare_sets.h): fewer microbatches raise the bubble from 3/11 to 3/7, a 1.5x slower stage
// lengthens the iteration to the simulator's truth, more stash raises each stage's peak by
// min(m, p - s) x the extra stash, and another seed of the same jittery job passes. Each case
// checks the exit status, which checks fail, and the Markdown and JUnit files; broken inputs
// exit 2 with one line naming the file.
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "cli/compare_sets.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "simdjson.h"

namespace bubblescope::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::StartsWith;

class GateCliTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    const std::vector<std::string> stash64 = {"--stash-mb", "64"};
    base_ = new std::string(AnalyzeToJson(SimulateRun(*dir_, "base", stash64)));
    fewer_ =
        new std::string(SimulateRun(*dir_, "fewer", {"--stash-mb", "64", "--microbatches", "4"}));
    slow_ = new std::string(SimulateRun(*dir_, "slow",
                                        {"--stash-mb", "64", "--fwd-us", "1000,1000,1500,1000",
                                         "--bwd-us", "2000,2000,3000,2000"}));
    stash96_ = new std::string(SimulateRun(*dir_, "stash96", {"--stash-mb", "96"}));
    const std::vector<std::string> jittery = {"--stash-mb", "64",           "--jitter",
                                              "0.02",       "--iterations", "4"};
    std::vector<std::string> seed2 = jittery;
    seed2.insert(seed2.end(), {"--seed", "2"});
    seed1_ = new std::string(AnalyzeToJson(SimulateRun(*dir_, "seed1", jittery)));
    seed2_ = new std::string(SimulateRun(*dir_, "seed2", seed2));
  }
  static void TearDownTestSuite() {
    for (std::string* path : {base_, fewer_, slow_, stash96_, seed1_, seed2_}) delete path;
    delete dir_;
  }

  // Runs gate with --markdown and --junit into the temp dir; reads both back.
  CommandResult Gate(const std::string& baseline, const std::string& current,
                     const std::vector<std::string>& flags) {
    markdown_ = dir_->path() + "/gate.md";
    junit_ = dir_->path() + "/gate.xml";
    std::vector<std::string> argv = {BUBBLESCOPE_BINARY, "gate",    "--baseline", baseline, current,
                                     "--markdown",       markdown_, "--junit",    junit_};
    argv.insert(argv.end(), flags.begin(), flags.end());
    std::remove(markdown_.c_str());
    std::remove(junit_.c_str());
    return RunCommand(argv);
  }

  // The names of the JUnit test cases that hold a <failure>.
  std::vector<std::string> JunitFailures() const {
    std::vector<std::string> failed;
    const std::string xml = ReadFile(junit_);
    size_t at = 0;
    while ((at = xml.find("<testcase ", at)) != std::string::npos) {
      const size_t end = xml.find("</testcase>", at);
      const std::string testcase = xml.substr(at, end - at);
      const size_t name = testcase.find(" name=\"") + 7;
      if (testcase.find("<failure") != std::string::npos) {
        failed.push_back(testcase.substr(name, testcase.find('"', name) - name));
      }
      at = end;
    }
    return failed;
  }

  static TempDir* dir_;
  static std::string* base_;
  static std::string* fewer_;
  static std::string* slow_;
  static std::string* stash96_;
  static std::string* seed1_;
  static std::string* seed2_;
  std::string markdown_;
  std::string junit_;
};

TempDir* GateCliTest::dir_ = nullptr;
std::string* GateCliTest::base_ = nullptr;
std::string* GateCliTest::fewer_ = nullptr;
std::string* GateCliTest::slow_ = nullptr;
std::string* GateCliTest::stash96_ = nullptr;
std::string* GateCliTest::seed1_ = nullptr;
std::string* GateCliTest::seed2_ = nullptr;

// (p-1)/(m+p-1): 3/11 = 27.3 % at m = 8, 3/7 = 42.9 % at m = 4; the iteration (m+p-1) x 3 ms.
TEST_F(GateCliTest, FewerMicrobatchesFailTheBubbleChecks) {
  CommandResult run = Gate(
      *base_, *fewer_,
      {"--max-bubble", "0.30", "--max-bubble-increase", "0.02", "--max-latency-increase", "5%"});
  EXPECT_EQ(run.exit_status, 1) << run.err;
  EXPECT_THAT(run.out, StartsWith("bubblescope gate: FAIL: 2 of 3 checks failed\n"));
  EXPECT_THAT(JunitFailures(),
              ElementsAre("pipeline 0: max-bubble", "pipeline 0: max-bubble-increase"));
  const std::string junit = ReadFile(junit_);
  EXPECT_THAT(junit, HasSubstr("<testsuite name=\"bubblescope gate\" tests=\"3\" failures=\"2\""));
  EXPECT_THAT(junit,
              HasSubstr("baseline 27.3%, current 42.9%, delta +15.6 pts, limit &lt;= 30.0%"));
  const std::string markdown = ReadFile(markdown_);
  EXPECT_THAT(markdown, StartsWith("## bubblescope gate: **regression**\n"));
  EXPECT_THAT(markdown, HasSubstr("- pipeline 0: m changed from 8 to 4\n"));
  EXPECT_THAT(
      markdown,
      HasSubstr("| pipeline 0: max-bubble | 27.3% | 42.9% | +15.6 pts | &lt;= 30.0% | **FAIL** |"));
  EXPECT_THAT(markdown, HasSubstr("| pipeline 0: max-bubble-increase | 27.3% | 42.9% | +15.6 pts | "
                                  "&lt;= +2.0 pts | **FAIL** |"));
  // Fewer microbatches shorten the iteration: 33 ms -> 21 ms passes the latency limit.
  EXPECT_THAT(markdown, HasSubstr("| pipeline 0: max-latency-increase | 33.000 ms | 21.000 ms | "
                                  "-12.000 ms (-36.4%) | &lt;= +5.0% | pass |"));
}

TEST_F(GateCliTest, ASlowerStageFailsTheLatencyCheckOnly) {
  simdjson::dom::parser parser;
  simdjson::dom::element truth;
  const std::string truth_text = ReadFile(*slow_ + "/truth.json");
  ASSERT_EQ(parser.parse(truth_text).get(truth), simdjson::SUCCESS);
  const double slow_p50_us = double(truth["latency_us"]["p50"]);
  ASSERT_GT(slow_p50_us, 33000.0 * 1.05);

  CommandResult run =
      Gate(*base_, *slow_, {"--max-latency-increase", "5%", "--max-memory-increase", "5%"});
  EXPECT_EQ(run.exit_status, 1) << run.err;
  EXPECT_THAT(JunitFailures(), ElementsAre("pipeline 0: max-latency-increase"));
  const std::string expected_row = absl::StrFormat(
      "| pipeline 0: max-latency-increase | 33.000 ms | %.3f ms | +%.3f ms (+%.1f%%) | &lt;= "
      "+5.0%% | "
      "**FAIL** |",
      slow_p50_us / 1e3, (slow_p50_us - 33000.0) / 1e3, 100.0 * (slow_p50_us / 33000.0 - 1.0));
  EXPECT_THAT(ReadFile(markdown_), HasSubstr(expected_row));
  // Per-stage memory is unchanged: four passing checks.
  EXPECT_THAT(ReadFile(junit_), HasSubstr("tests=\"5\" failures=\"1\""));
}

// Each stage's bubble against its own: the truths' per-rank idle / (compute + idle) give which
// stages rise by more than 5 points (the fast stages now wait on stage 2; stage 2's own falls).
TEST_F(GateCliTest, EachStagesBubbleRiseIsCheckedWhenAsked) {
  const auto stage_bubbles = [](const std::string& truth_path) {
    simdjson::dom::parser parser;
    simdjson::dom::element truth;
    const std::string text = ReadFile(truth_path);
    EXPECT_EQ(parser.parse(text).get(truth), simdjson::SUCCESS);
    std::vector<double> bubbles(4, 0.0);
    for (simdjson::dom::element rank : simdjson::dom::array(truth["rank_stats"])) {
      const double idle = double(rank["idle_us"]);
      bubbles[static_cast<size_t>(int64_t(rank["stage"]))] =
          idle / (idle + double(rank["compute_us"]));
    }
    return bubbles;
  };
  const std::string base_dir = base_->substr(0, base_->size() - std::string(".json").size());
  const std::vector<double> before = stage_bubbles(base_dir + "/truth.json");
  const std::vector<double> after = stage_bubbles(*slow_ + "/truth.json");
  std::vector<std::string> expected_failures;
  for (int32_t s = 0; s < 4; ++s) {
    if (after[static_cast<size_t>(s)] - before[static_cast<size_t>(s)] > 0.05) {
      expected_failures.push_back(
          absl::StrFormat("pipeline 0 stage %d (rank %d): max-stage-bubble-increase", s, s));
    }
  }
  ASSERT_FALSE(expected_failures.empty());
  ASSERT_LT(expected_failures.size(), 4u);  // stage 2's own bubble does not rise
  CommandResult run = Gate(*base_, *slow_, {"--max-stage-bubble-increase", "5%"});
  EXPECT_EQ(run.exit_status, 1) << run.err;
  EXPECT_EQ(JunitFailures(), expected_failures);
  EXPECT_THAT(ReadFile(junit_), HasSubstr("tests=\"4\""));
}

// 1F1B holds min(m, p - s) microbatches on stage s: 4, 3, 2, 1 x (96 - 64) MiB more, against
// 1 GiB + 4, 3, 2, 1 x 64 MiB: +10.0 %, +7.9 %, +5.6 % fail a 5 % limit, +2.9 % passes.
TEST_F(GateCliTest, MoreStashFailsTheMemoryChecksOfTheStagesHoldingMore) {
  CommandResult run = Gate(*base_, *stash96_, {"--max-memory-increase", "5%"});
  EXPECT_EQ(run.exit_status, 1) << run.err;
  EXPECT_THAT(JunitFailures(), ElementsAre("pipeline 0 stage 0 (rank 0): max-memory-increase",
                                           "pipeline 0 stage 1 (rank 1): max-memory-increase",
                                           "pipeline 0 stage 2 (rank 2): max-memory-increase"));
  const std::string markdown = ReadFile(markdown_);
  EXPECT_THAT(markdown, HasSubstr("| pipeline 0 stage 0 (rank 0): max-memory-increase | 1.25 GiB | "
                                  "1.38 GiB | +128.00 MiB (+10.0%) | &lt;= +5.0% | **FAIL** |"));
  EXPECT_THAT(markdown, HasSubstr("| pipeline 0 stage 3 (rank 3): max-memory-increase | 1.06 GiB | "
                                  "1.09 GiB | +32.00 MiB (+2.9%) | &lt;= +5.0% | pass |"));
  EXPECT_THAT(markdown, HasSubstr("3 of 4 checks failed"));
}

TEST_F(GateCliTest, TheSameJobWithAnotherSeedPasses) {
  CommandResult run = Gate(*seed1_, *seed2_,
                           {"--max-bubble-increase", "0.02", "--max-latency-increase", "5%",
                            "--max-memory-increase", "5%"});
  EXPECT_EQ(run.exit_status, 0) << run.out << run.err;
  EXPECT_THAT(run.out, StartsWith("bubblescope gate: PASS: 0 of 6 checks failed\n"));
  EXPECT_THAT(JunitFailures(), ElementsAre());
  EXPECT_THAT(ReadFile(junit_), HasSubstr("tests=\"6\" failures=\"0\" errors=\"0\" skipped=\"0\""));
  EXPECT_THAT(ReadFile(markdown_),
              StartsWith("## bubblescope gate: pass\n\n0 of 6 checks failed."));
}

TEST_F(GateCliTest, AConfigFileSetsThresholdsAndFlagsOverrideIt) {
  const std::string config = dir_->Write("gate.conf",
                                         "# thresholds\nmax-bubble = 25%   # absolute\n\n"
                                         "max-bubble-increase = 0.02\n");
  CommandResult run = Gate(*base_, *fewer_, {"--config", config});
  EXPECT_EQ(run.exit_status, 1) << run.err;
  EXPECT_THAT(JunitFailures(),
              ElementsAre("pipeline 0: max-bubble", "pipeline 0: max-bubble-increase"));
  run = Gate(*base_, *fewer_,
             {"--config", config, "--max-bubble", "0.5", "--max-bubble-increase", "0.2"});
  EXPECT_EQ(run.exit_status, 0) << run.out << run.err;

  const std::string bad = dir_->Write("bad.conf", "max-bubble = 0.3\n\nmax-bubbles = 0.3\n");
  run = Gate(*base_, *fewer_, {"--config", bad});
  EXPECT_EQ(run.exit_status, 2);
  EXPECT_THAT(run.err,
              StartsWith("bubblescope: --config: " + bad + ":3: unknown threshold 'max-bubbles'"));
}

// Every input error: exit 2, one line on stderr naming the file, no verdict files.
class GateInputErrorTest : public GateCliTest {
 protected:
  void ExpectInputError(const std::string& baseline, const std::string& current,
                        const std::string& message) {
    CommandResult run = Gate(baseline, current, {"--max-bubble-increase", "0.02"});
    EXPECT_EQ(run.exit_status, 2) << run.out;
    EXPECT_EQ(LinesWith(run.err, "bubblescope:").size(), 1u) << run.err;
    EXPECT_THAT(run.err, HasSubstr(message));
    EXPECT_TRUE(run.out.empty());
    EXPECT_FALSE(std::filesystem::exists(markdown_));
  }
};

TEST_F(GateInputErrorTest, AMalformedBaselineNamesTheFileAndByte) {
  const std::string report = ReadFile(*base_);
  const std::string cut = dir_->Write("cut.json", report.substr(0, report.size() / 2));
  ExpectInputError(cut, *fewer_, absl::StrCat("bubblescope: ", cut, ": byte "));
  const std::string wrong_type = dir_->Write(
      "wrong_type.json",
      R"({"schema": "bubblescope.analyze/1", "pipelines": [{"ranks": [0, 1], "bubble_fraction": "high"}]})");
  ExpectInputError(
      wrong_type, *fewer_,
      absl::StrCat(wrong_type, ": byte 87: \"bubble_fraction\" is a string, expected a number"));
}

TEST_F(GateInputErrorTest, AnUnknownMajorVersionIsAClearError) {
  std::string report = ReadFile(*base_);
  report.replace(report.find("bubblescope.analyze/1"), 21, "bubblescope.analyze/2");
  const std::string future = dir_->Write("future.json", report);
  ExpectInputError(future, *fewer_,
                   absl::StrCat(future,
                                ": byte 14: schema \"bubblescope.analyze/2\" has major "
                                "version 2; this bubblescope reads bubblescope.analyze/1.x"));
}

TEST_F(GateInputErrorTest, ASideWithoutAPipelineIsAnError) {
  const std::string empty =
      dir_->Write("empty.json", R"({"schema": "bubblescope.analyze/1", "pipelines": []})");
  ExpectInputError(empty, *fewer_, absl::StrCat(empty, ": no pipeline"));
  const std::string single = SimulateRun(*dir_, "single_stage", {"--stages", "1"});
  ExpectInputError(*base_, single, absl::StrCat(single, ": no pipeline"));
  ExpectInputError(dir_->path() + "/absent.json", *fewer_,
                   "cannot read " + dir_->path() + "/absent.json");
}

TEST_F(GateCliTest, ANewerMinorVersionWithUnknownMembersIsRead) {
  std::string report = ReadFile(*base_);
  report.replace(report.find("bubblescope.analyze/1"), 21,
                 "bubblescope.analyze/1.4\", \"added_in_1_4\": {\"x\": [1, 2]}, \"z\": \"");
  const std::string newer = dir_->Write("newer.json", report);
  CommandResult run = Gate(newer, *base_, {"--max-bubble-increase", "0"});
  EXPECT_EQ(run.exit_status, 0) << run.err;
}

TEST_F(GateCliTest, NoThresholdAndOutputOverAnInputAreErrors) {
  CommandResult run = RunCommand({BUBBLESCOPE_BINARY, "gate", "--baseline", *base_, *fewer_});
  EXPECT_EQ(run.exit_status, 2);
  EXPECT_THAT(run.err, HasSubstr("no threshold given"));
  const std::string before = ReadFile(*base_);
  run = RunCommand({BUBBLESCOPE_BINARY, "gate", "--baseline", *base_, *fewer_, "--max-bubble",
                    "0.9", "--markdown", *base_});
  EXPECT_EQ(run.exit_status, 2);
  EXPECT_THAT(run.err, HasSubstr("cannot write " + *base_));
  EXPECT_EQ(ReadFile(*base_), before);
  run = RunCommand(
      {BUBBLESCOPE_BINARY, "gate", "--baseline", *base_, *fewer_, "--max-latency", "30"});
  EXPECT_EQ(run.exit_status, 2);
  EXPECT_THAT(run.err, HasSubstr("--max-latency: '30' is not a time with its unit"));
}

}  // namespace
}  // namespace bubblescope::testing
