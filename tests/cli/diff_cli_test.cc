// End to end: `bubblescope diff` on simulated pairs with known differences (compare_sets.h):
// the figures on both sides are the closed forms, shape changes come first, a new slow stage
// brings its findings, another seed stays within the iteration spread, and a trace directory
// reads the same as its own analyze report.
#include <string>
#include <vector>

#include "cli/compare_sets.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "simdjson.h"

namespace bubblescope::testing {
namespace {

using ::testing::HasSubstr;

class DiffCliTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    base_set_ = new std::string(SimulateRun(*dir_, "base", {}));
    base_ = new std::string(AnalyzeToJson(*base_set_));
    fewer_ = new std::string(SimulateRun(*dir_, "fewer", {"--microbatches", "4"}));
    slow_ = new std::string(SimulateRun(
        *dir_, "slow", {"--fwd-us", "1000,1000,1500,1000", "--bwd-us", "2000,2000,3000,2000"}));
  }
  static void TearDownTestSuite() {
    for (std::string* path : {base_set_, base_, fewer_, slow_}) delete path;
    delete dir_;
  }

  // diff A B --format json, parsed into `document_`; the first pipeline's diff.
  simdjson::dom::element DiffJson(const std::string& a, const std::string& b) {
    CommandResult run = RunCommand({BUBBLESCOPE_BINARY, "diff", a, b, "--format", "json"});
    EXPECT_EQ(run.exit_status, 0) << run.err;
    json_ = run.out;
    simdjson::dom::element report;
    EXPECT_EQ(parser_.parse(json_).get(report), simdjson::SUCCESS) << json_;
    EXPECT_EQ(std::string_view(report["schema"]), "bubblescope.diff/1");
    return report["pipelines"].at(0);
  }

  static TempDir* dir_;
  static std::string* base_set_;
  static std::string* base_;
  static std::string* fewer_;
  static std::string* slow_;
  simdjson::dom::parser parser_;
  std::string json_;
};

TempDir* DiffCliTest::dir_ = nullptr;
std::string* DiffCliTest::base_set_ = nullptr;
std::string* DiffCliTest::base_ = nullptr;
std::string* DiffCliTest::fewer_ = nullptr;
std::string* DiffCliTest::slow_ = nullptr;

TEST_F(DiffCliTest, FewerMicrobatchesShowAsAShapeChangeAndABiggerBubble) {
  simdjson::dom::element pipeline = DiffJson(*base_, *fewer_);
  EXPECT_EQ(std::string_view(pipeline["pairing"]), "same_ranks");
  simdjson::dom::array shape = pipeline["shape_changes"];
  ASSERT_EQ(shape.size(), 1u);
  EXPECT_EQ(std::string_view(shape.at(0)["figure"]), "m");
  EXPECT_EQ(std::string_view(shape.at(0)["a"]), "8");
  EXPECT_EQ(std::string_view(shape.at(0)["b"]), "4");
  simdjson::dom::element bubble = pipeline["figures"]["bubble_fraction"];
  EXPECT_NEAR(double(bubble["a"]), 3.0 / 11.0, 1e-9);
  EXPECT_NEAR(double(bubble["b"]), 3.0 / 7.0, 1e-9);
  EXPECT_NEAR(double(bubble["delta"]), 3.0 / 7.0 - 3.0 / 11.0, 1e-9);
  // Three identical iterations a side: a spread of 0, so any change lies beyond it.
  EXPECT_EQ(double(bubble["spread"]), 0.0);
  EXPECT_FALSE(bool(bubble["within_spread"]));
  simdjson::dom::element latency = pipeline["figures"]["latency_p50_us"];
  EXPECT_EQ(double(latency["a"]), 33000.0);
  EXPECT_EQ(double(latency["b"]), 21000.0);
  EXPECT_NEAR(double(latency["relative"]), -12.0 / 33.0, 1e-12);

  CommandResult text = RunCommand({BUBBLESCOPE_BINARY, "diff", *base_, *fewer_});
  ASSERT_EQ(text.exit_status, 0) << text.err;
  // The shape change is the first line of the pipeline's block.
  EXPECT_THAT(text.out, HasSubstr("(paired by same_ranks)\n  shape changed: m 8 -> 4\n"));
  EXPECT_THAT(text.out, ::testing::ContainsRegex(
                            "\n +bubble +27\\.3% +42\\.9% +\\+15\\.6 pts +beyond the spread "
                            "\\(0\\.0 pts\\)\n"));
}

TEST_F(DiffCliTest, ASlowStageShowsInItsTimesAndItsFindingsAppear) {
  simdjson::dom::element pipeline = DiffJson(*base_, *slow_);
  EXPECT_EQ(simdjson::dom::array(pipeline["shape_changes"]).size(), 0u);
  simdjson::dom::element stage2 = pipeline["stages"].at(2);
  EXPECT_EQ(int64_t(stage2["stage"]), 2);
  EXPECT_EQ(double(stage2["fwd_us_per_microbatch"]["a"]), 1000.0);
  EXPECT_EQ(double(stage2["fwd_us_per_microbatch"]["b"]), 1500.0);
  EXPECT_EQ(double(stage2["bwd_us_per_microbatch"]["b"]), 3000.0);
  EXPECT_EQ(double(pipeline["stages"].at(0)["fwd_us_per_microbatch"]["delta"]), 0.0);
  bool stage_imbalance_appeared = false;
  for (simdjson::dom::element finding : simdjson::dom::array(pipeline["findings"])) {
    if (std::string_view(finding["kind"]) == "stage_imbalance") {
      EXPECT_EQ(std::string_view(finding["change"]), "appeared");
      EXPECT_EQ(int64_t(finding["ranks_b"].at(0)), 2);
      stage_imbalance_appeared = true;
    }
    if (std::string_view(finding["kind"]) == "pipeline_depth") {
      EXPECT_EQ(std::string_view(finding["change"]), "persisting");
    }
  }
  EXPECT_TRUE(stage_imbalance_appeared) << json_;
}

// A trace directory's figures are read from its analysis through the rows its report is
// written from: against its own report file nothing differs.
TEST_F(DiffCliTest, ATraceDirectoryReadsTheSameAsItsReport) {
  simdjson::dom::element pipeline = DiffJson(*base_set_, *base_);
  EXPECT_EQ(simdjson::dom::array(pipeline["shape_changes"]).size(), 0u);
  for (auto [key, figure] : simdjson::dom::object(pipeline["figures"])) {
    EXPECT_EQ(double(figure["delta"]), 0.0) << key;
  }
  for (simdjson::dom::element finding : simdjson::dom::array(pipeline["findings"])) {
    EXPECT_EQ(std::string_view(finding["change"]), "persisting");
  }
}

// A report gzip'd or saved with a UTF-8 byte-order mark is still a report: both were read as
// traces ("no traceEvents array"). Each reads the same as the report itself.
TEST_F(DiffCliTest, AGzippedOrMarkedReportIsAReport) {
  const std::string gzipped = dir_->path() + "/base.json.gz";
  const std::string marked = dir_->path() + "/marked.json";
  const CommandResult zipped =
      RunCommand({"/bin/sh", "-c", "gzip -c '" + *base_ + "' > '" + gzipped + "'"});
  ASSERT_EQ(zipped.exit_status, 0) << zipped.err;
  WriteFile(marked, "\xEF\xBB\xBF" + ReadFile(*base_));
  for (const std::string& side : {gzipped, marked}) {
    SCOPED_TRACE(side);
    simdjson::dom::element pipeline = DiffJson(side, *base_);
    for (auto [key, figure] : simdjson::dom::object(pipeline["figures"])) {
      EXPECT_EQ(double(figure["delta"]), 0.0) << key;
    }
  }
}

// Another seed of a jittery job moves every figure by less than its iterations vary.
TEST_F(DiffCliTest, AnotherSeedStaysWithinTheIterationSpread) {
  const std::vector<std::string> jittery = {"--jitter", "0.02", "--iterations", "4"};
  std::vector<std::string> seed2 = jittery;
  seed2.insert(seed2.end(), {"--seed", "2"});
  simdjson::dom::element pipeline =
      DiffJson(SimulateRun(*dir_, "seed1", jittery), SimulateRun(*dir_, "seed2", seed2));
  for (const char* figure : {"bubble_fraction", "latency_p50_us", "latency_max_us"}) {
    simdjson::dom::element change = pipeline["figures"][figure];
    EXPECT_GT(double(change["spread"]), 0.0) << figure;
    EXPECT_TRUE(bool(change["within_spread"])) << figure;
  }
}

TEST_F(DiffCliTest, OutputNeverReplacesAnInput) {
  const std::string before = ReadFile(*base_);
  CommandResult run = RunCommand({BUBBLESCOPE_BINARY, "diff", *base_, *fewer_, "-o", *base_});
  EXPECT_EQ(run.exit_status, 1);
  EXPECT_THAT(run.err, HasSubstr("cannot write " + *base_));
  EXPECT_EQ(ReadFile(*base_), before);
}

}  // namespace
}  // namespace bubblescope::testing
