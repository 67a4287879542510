// End-to-end: `bubblescope analyze` on whole jobs: a DP x PP job written to disk by the
// simulator's set writer (two pipelines), the bundled slow-link set with and without
// --slow-link-threshold, and the real 8-rank DLRM traces, which hold no pipeline at all. Expected
// values come from the simulator's config and truth, or from counting kernel names in the raw
// files, never from bubblescope's own output.
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "job/sim_job.h"
#include "simdjson.h"
#include "support/shared_traces.h"
#include "support/subprocess.h"
#include "support/test_files.h"
#include "synth/simulated_set.h"
#include "synth/synthetic_job.h"

namespace bubblescope::testing {
namespace {

using ::testing::HasSubstr;

int64_t CountOccurrences(std::string_view text, std::string_view needle) {
  int64_t count = 0;
  for (size_t at = text.find(needle); at != std::string_view::npos;
       at = text.find(needle, at + needle.size())) {
    ++count;
  }
  return count;
}

// (src, dst) of every link the report marks slow, over all pipelines.
std::vector<std::pair<int64_t, int64_t>> SlowLinks(simdjson::dom::element report) {
  std::vector<std::pair<int64_t, int64_t>> slow;
  for (simdjson::dom::element pipeline : report["pipelines"]) {
    for (simdjson::dom::element link : pipeline["links"]) {
      if (bool(link["slow"])) slow.emplace_back(int64_t(link["src"]), int64_t(link["dst"]));
    }
  }
  return slow;
}

int SlowLinkFindings(simdjson::dom::element report) {
  int count = 0;
  for (simdjson::dom::element finding : report["findings"]) {
    if (std::string_view(finding["kind"]) == "slow_link") ++count;
  }
  return count;
}

TEST(CrossRankCliTest, DataParallelJobOnDiskIsTwoPipelines) {
  constexpr int32_t kStages = 4;
  sim::Config config;
  config.schedule = sim::Schedule::k1F1B;
  config.stages = kStages;
  config.microbatches = 4;
  config.iterations = 2;
  config.costs.assign(kStages, sim::StageCost{.forward = 100000, .backward = 200000});
  config.activation_bytes = 1 << 20;
  config.link = sim::Link{.gbps = 100.0, .latency_ns = 1000};
  config.launch_gap_ns = 1000;
  config.clock_offsets_ns = {0, 25'000'000, -40'000'000, 3'000'000};
  // Two identical replicas: each pipeline must reproduce the one truth.json written beside them.
  std::vector<sim::Simulation> replicas;
  for (int j = 0; j < 2; ++j) {
    absl::StatusOr<sim::Simulation> simulation = sim::Simulate(config);
    ASSERT_TRUE(simulation.ok()) << simulation.status();
    replicas.push_back(*std::move(simulation));
  }
  sim::Simulation job;
  job.truth = replicas[0].truth;
  job.trace = crossrank_testing::MergeReplicas(replicas);
  TempDir dir;
  absl::StatusOr<std::vector<std::string>> written =
      sim::WriteSimulationSet(config, job, dir.path(), sim::SetWriteOptions{});
  ASSERT_TRUE(written.ok()) << written.status();
  ASSERT_EQ(written->size(), 2u * kStages + 1);

  CommandResult run = RunCommand({BUBBLESCOPE_BINARY, "analyze", dir.path(), "--format", "json"});
  ASSERT_EQ(run.exit_status, 0) << run.err;
  simdjson::dom::parser parser;
  simdjson::dom::element report;
  ASSERT_EQ(parser.parse(run.out).get(report), simdjson::SUCCESS);
  EXPECT_EQ(std::string_view(report["schema"]), "bubblescope.analyze/1");
  simdjson::dom::array pipelines = report["pipelines"];
  ASSERT_EQ(pipelines.size(), 2u);
  for (size_t j = 0; j < 2; ++j) {
    SCOPED_TRACE("pipeline " + std::to_string(j));
    simdjson::dom::element pipeline = pipelines.at(j);
    simdjson::dom::array ranks = pipeline["ranks"];
    ASSERT_EQ(ranks.size(), static_cast<size_t>(kStages));
    for (size_t s = 0; s < kStages; ++s) {
      EXPECT_EQ(int64_t(ranks.at(s)), static_cast<int64_t>(j * kStages + s));
    }
    EXPECT_NEAR(double(pipeline["bubble_fraction"]), job.truth.bubble_fraction, 1e-9);
    simdjson::dom::element offsets = pipeline["clock_offsets_us"];
    for (int32_t r = 0; r < kStages; ++r) {
      const double expected = static_cast<double>(config.clock_offsets_ns[static_cast<size_t>(r)] -
                                                  config.clock_offsets_ns[0]) /
                              1000.0;
      EXPECT_NEAR(double(offsets[std::to_string(j * kStages + static_cast<size_t>(r))]), expected,
                  5.0);
    }
    simdjson::dom::array links = pipeline["links"];
    EXPECT_EQ(links.size(), 6u);
    for (simdjson::dom::element link : links) {
      EXPECT_FALSE(bool(link["slow"]));
      EXPECT_EQ(int64_t(link["transfers"]), 2 * 4);  // m per iteration
    }
  }
  simdjson::dom::element summary = report["job"];
  EXPECT_EQ(int64_t(summary["pipelines"]), 2);
  EXPECT_DOUBLE_EQ(double(summary["bubble_spread"]), 0.0);
  EXPECT_EQ(simdjson::dom::array(summary["ranks_without_p2p"]).size(), 0u);

  CommandResult text = RunCommand({BUBBLESCOPE_BINARY, "analyze", dir.path()});
  ASSERT_EQ(text.exit_status, 0) << text.err;
  EXPECT_THAT(text.out, HasSubstr("\npipeline 1: ranks 4,5,6,7\n"));
  EXPECT_THAT(text.out, HasSubstr("\njob: 2 pipelines; worst is pipeline "));
}

TEST(CrossRankCliTest, SlowLinkSetAndThreshold) {
  const std::string dir =
      std::string(BUBBLESCOPE_SOURCE_DIR) + "/sample_traces/sim_1f1b_slow_link_p4_m8";
  simdjson::dom::parser truth_parser;
  simdjson::dom::element truth;
  std::string truth_text = ReadFile(dir + "/truth.json");
  ASSERT_EQ(truth_parser.parse(truth_text).get(truth), simdjson::SUCCESS);
  simdjson::dom::element override_link = truth["config"]["link_overrides"].at(0);
  const int64_t src = override_link["src_rank"];
  const int64_t dst = override_link["dst_rank"];

  CommandResult run = RunCommand({BUBBLESCOPE_BINARY, "analyze", dir, "--format", "json"});
  ASSERT_EQ(run.exit_status, 0) << run.err;
  simdjson::dom::parser parser;
  simdjson::dom::element report;
  ASSERT_EQ(parser.parse(run.out).get(report), simdjson::SUCCESS);
  EXPECT_EQ(SlowLinks(report), (std::vector<std::pair<int64_t, int64_t>>{{src, dst}}));
  EXPECT_EQ(SlowLinkFindings(report), 1);

  // The overridden link carries 100 of 400 Gbit/s (a bit over a quarter with the 5 us
  // latency): a threshold of 0.2 no longer calls it slow.
  CommandResult lenient = RunCommand(
      {BUBBLESCOPE_BINARY, "analyze", dir, "--format", "json", "--slow-link-threshold", "0.2"});
  ASSERT_EQ(lenient.exit_status, 0) << lenient.err;
  simdjson::dom::parser lenient_parser;
  simdjson::dom::element lenient_report;
  ASSERT_EQ(lenient_parser.parse(lenient.out).get(lenient_report), simdjson::SUCCESS);
  EXPECT_TRUE(SlowLinks(lenient_report).empty());
  EXPECT_EQ(SlowLinkFindings(lenient_report), 0);

  CommandResult bad =
      RunCommand({BUBBLESCOPE_BINARY, "analyze", dir, "--slow-link-threshold", "2"});
  EXPECT_EQ(bad.exit_status, 2);
}

TEST(CrossRankCliTest, DlrmAllToAllIsNoPipeline) {
  const std::string dir = testing::SharedTracePath("param_dlrm_8rank");
  BUBBLESCOPE_NEED_SHARED(dir);
  int64_t sendrecv = 0;
  int64_t all_to_all_ranges = 0;
  int64_t allreduce = 0;
  int64_t sized = 0;  // events carrying a message size: none in these traces
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string text = Gunzip(ReadFile(entry.path().string()));
    sendrecv += CountOccurrences(text, "\"name\": \"ncclKernel_SendRecv");
    all_to_all_ranges += CountOccurrences(text, "\"name\": \"nccl:all_to_all\"");
    allreduce += CountOccurrences(text, "\"name\": \"ncclKernel_AllReduce");
    sized += CountOccurrences(text, "msg nelems");
  }
  ASSERT_GT(sendrecv, 0);
  // NCCL runs the all-to-all as SendRecv kernels, each launched inside an nccl:all_to_all range.
  ASSERT_EQ(all_to_all_ranges, sendrecv);

  CommandResult run = RunCommand({BUBBLESCOPE_BINARY, "analyze", dir, "--format", "json"});
  ASSERT_EQ(run.exit_status, 0) << run.err;
  simdjson::dom::parser parser;
  simdjson::dom::element report;
  ASSERT_EQ(parser.parse(run.out).get(report), simdjson::SUCCESS);
  EXPECT_EQ(simdjson::dom::array(report["pipelines"]).size(), 0u);
  simdjson::dom::element job = report["job"];
  EXPECT_FALSE(bool(job["pipeline_found"]));
  EXPECT_EQ(simdjson::dom::array(job["ranks_without_p2p"]).size(), 8u);
  int64_t got_all_to_all = -1;
  int64_t got_allreduce = -1;
  for (simdjson::dom::element kind : job["collectives"]) {
    if (std::string_view(kind["kind"]) == "all_to_all") got_all_to_all = kind["count"];
    if (std::string_view(kind["kind"]) == "all_reduce") got_allreduce = kind["count"];
    EXPECT_GT(double(kind["time_us"]), 0.0);
    EXPECT_EQ(int64_t(kind["sized_count"]), sized);
  }
  EXPECT_EQ(got_all_to_all, sendrecv);
  EXPECT_EQ(got_allreduce, allreduce);

  CommandResult text = RunCommand({BUBBLESCOPE_BINARY, "analyze", dir});
  ASSERT_EQ(text.exit_status, 0) << text.err;
  EXPECT_THAT(text.out, HasSubstr("job: no pipeline found"));
  EXPECT_THAT(text.out, HasSubstr("collectives over all ranks"));
  // No sizes recorded: the MiB column says so rather than 0.00.
  EXPECT_THAT(text.out, ::testing::ContainsRegex("all_to_all +40 +- +[0-9]"));
  EXPECT_THAT(text.out, ::testing::Not(HasSubstr("sendrecv")));
}

// Two of the four ranks of the bundled 1F1B set: the ranks declare world size 4, and rank 1
// sends to rank 2. The report says so under its headline and on the pipeline, the JSON lists
// what is missing, and --strict refuses it; the whole set is complete.
TEST(CrossRankCliTest, HalfAJobIsReportedIncomplete) {
  const std::string set = std::string(BUBBLESCOPE_SOURCE_DIR) + "/sample_traces/sim_1f1b_p4_m8";
  TempDir dir;
  for (const char* name : {"rank0.pt.trace.json.gz", "rank1.pt.trace.json.gz"}) {
    std::filesystem::copy_file(set + "/" + name, dir.path() + "/" + name);
  }
  CommandResult text = RunCommand({BUBBLESCOPE_BINARY, "analyze", dir.path()});
  ASSERT_EQ(text.exit_status, 0) << text.err;
  const std::string second_line =
      text.out.substr(text.out.find('\n') + 1,
                      text.out.find('\n', text.out.find('\n') + 1) - text.out.find('\n') - 1);
  // Wrapped to the first screen's 120 columns.
  EXPECT_EQ(second_line,
            "INCOMPLETE JOB: the trace holds 2 of the 4 ranks the job declares (world size); "
            "missing 2,3. Pipelines and their figures");
  EXPECT_THAT(text.out, HasSubstr(second_line + "\n  cover the loaded ranks only.\n"));
  EXPECT_THAT(text.out, HasSubstr("pipeline 0: ranks 0,1\n  INCOMPLETE: its ranks send to or "
                                  "receive from rank 2, not in the trace"));
  EXPECT_THAT(text.err, HasSubstr("warning: INCOMPLETE JOB: "));

  CommandResult json = RunCommand({BUBBLESCOPE_BINARY, "analyze", dir.path(), "--format", "json"});
  ASSERT_EQ(json.exit_status, 0) << json.err;
  simdjson::dom::parser parser;
  simdjson::dom::element report;
  ASSERT_EQ(parser.parse(json.out).get(report), simdjson::SUCCESS);
  EXPECT_EQ(int64_t(report["job"]["world_size"]), 4);
  std::vector<int64_t> missing;
  for (int64_t rank : report["job"]["missing_ranks"].get_array()) missing.push_back(rank);
  EXPECT_EQ(missing, (std::vector<int64_t>{2, 3}));
  std::vector<int64_t> peers;
  for (int64_t rank : report["pipelines"].at(0)["missing_peers"].get_array()) peers.push_back(rank);
  EXPECT_EQ(peers, (std::vector<int64_t>{2}));

  CommandResult strict = RunCommand({BUBBLESCOPE_BINARY, "analyze", dir.path(), "--strict"});
  EXPECT_EQ(strict.exit_status, 2);
  EXPECT_EQ(strict.out, "");
  EXPECT_THAT(strict.err, HasSubstr("bubblescope: --strict: INCOMPLETE JOB: the trace holds 2 of"));

  CommandResult whole = RunCommand({BUBBLESCOPE_BINARY, "analyze", set, "--strict"});
  EXPECT_EQ(whole.exit_status, 0) << whole.err;
  EXPECT_THAT(whole.out, ::testing::Not(HasSubstr("INCOMPLETE")));
}

// Rank 9 in a job of world size 4 is not one of its ranks: the headline counts the 3 of the 4
// held and names 9 as outside (it read "holds 4 of the 4 ranks ... missing 3"), and the JSON
// lists it.
TEST(CrossRankCliTest, ARankOutsideTheWorldSizeIsNamed) {
  const std::string set = std::string(BUBBLESCOPE_SOURCE_DIR) + "/sample_traces/sim_1f1b_p4_m8";
  CommandResult text =
      RunCommand({BUBBLESCOPE_BINARY, "analyze", set, "--rank", set + "/rank3.pt.trace.json.gz=9"});
  ASSERT_EQ(text.exit_status, 0) << text.err;
  EXPECT_THAT(text.err, HasSubstr("warning: INCOMPLETE JOB: the trace holds 3 of the 4 ranks the "
                                  "job declares (world size); missing 3; rank 9 is outside it "
                                  "(ids 0 to 3: a file of another job, or a wrong rank id)."));
  CommandResult json = RunCommand({BUBBLESCOPE_BINARY, "analyze", set, "--rank",
                                   set + "/rank3.pt.trace.json.gz=9", "--format", "json"});
  ASSERT_EQ(json.exit_status, 0) << json.err;
  simdjson::dom::parser parser;
  simdjson::dom::element report;
  ASSERT_EQ(parser.parse(json.out).get(report), simdjson::SUCCESS);
  std::vector<int64_t> outside;
  for (int64_t rank : report["job"]["ranks_outside_world"].get_array()) outside.push_back(rank);
  EXPECT_EQ(outside, (std::vector<int64_t>{9}));
}

}  // namespace
}  // namespace bubblescope::testing
