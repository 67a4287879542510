// `bubblescope simulate`: flag parsing (in process), and the real binary end to
// end: the written set loads back into the simulator's own trace, truth.json
// matches the simulation, and bad values, an occupied directory and a missing
// -o are one-line errors with exit status 2.
#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "cli/simulate_command.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "loader/trace_loader.h"
#include "simdjson.h"
#include "simulator/simulator.h"
#include "support/subprocess.h"
#include "support/test_files.h"

namespace bubblescope {
namespace {

namespace fs = std::filesystem;
using ::bubblescope::testing::CommandResult;
using ::bubblescope::testing::ReadFile;
using ::bubblescope::testing::RunCommand;
using ::bubblescope::testing::TempDir;
using ::testing::HasSubstr;
using ::testing::StartsWith;

size_t LineCount(const std::string& text) {
  return static_cast<size_t>(std::count(text.begin(), text.end(), '\n'));
}

CommandResult Simulate(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {BUBBLESCOPE_BINARY, "simulate"};
  argv.insert(argv.end(), args.begin(), args.end());
  return RunCommand(argv);
}

TEST(ParseMicrosTest, ExactNanoseconds) {
  EXPECT_EQ(*ParseMicros("1000"), 1'000'000);
  EXPECT_EQ(*ParseMicros("2.5"), 2'500);
  EXPECT_EQ(*ParseMicros("0.001"), 1);
  EXPECT_EQ(*ParseMicros("0"), 0);
  EXPECT_EQ(*ParseMicros("-1.5", /*allow_negative=*/true), -1'500);
  for (const char* bad : {"", "-1", "1.", ".5", "1e3", "1.0001", "abc", "1,5", "+2"}) {
    EXPECT_FALSE(ParseMicros(bad).ok()) << bad;
  }
}

TEST(ParseSimulateFlagsTest, DefaultsAreTheDocumentedJob) {
  SimulateFlags flags;
  flags.output_dir = "unused";
  absl::StatusOr<SimulateSettings> settings = ParseSimulateFlags(flags);
  ASSERT_TRUE(settings.ok()) << settings.status();
  const sim::Config& config = settings->config;
  EXPECT_EQ(config.schedule, sim::Schedule::k1F1B);
  EXPECT_EQ(config.stages, 4);
  EXPECT_EQ(config.microbatches, 8);
  EXPECT_EQ(config.iterations, 3);
  ASSERT_EQ(config.costs.size(), 4u);
  EXPECT_EQ(config.costs[3].forward, 1'000'000);
  EXPECT_EQ(config.costs[3].backward, 2'000'000);
  EXPECT_EQ(config.costs[3].weight_grad, 0);
  EXPECT_EQ(config.activation_bytes, 16 * 1024 * 1024);
  EXPECT_EQ(config.link.gbps, 400.0);  // a 16 MiB transfer (0.34 ms) below a 1 ms forward
  EXPECT_EQ(config.weights_bytes, std::vector<int64_t>(4, int64_t{2048} << 20));
  EXPECT_EQ(config.activation_stash_bytes, int64_t{96} << 20);
  EXPECT_EQ(config.link.latency_ns, 5'000);
  EXPECT_EQ(config.launch_gap_ns, 5'000);
  EXPECT_TRUE(config.iteration_barrier);
  EXPECT_EQ(settings->write.kineto.layout, KinetoLayout::kRelativeWithBase);
  EXPECT_TRUE(settings->write.kineto.nccl_args);
  EXPECT_FALSE(settings->write.gzip);
}

TEST(ParseSimulateFlagsTest, ModelParallelFlags) {
  SimulateFlags flags;
  flags.output_dir = "unused";
  absl::StatusOr<SimulateSettings> defaults = ParseSimulateFlags(flags);
  ASSERT_TRUE(defaults.ok()) << defaults.status();
  EXPECT_EQ(defaults->config.parallel.replicas(), 1);  // a plain pipeline, as before
  flags.tensor_parallel = "4";
  flags.data_parallel = "2";
  flags.sequence_parallel = true;
  flags.tp_overlap = true;
  flags.tp_share = "0.25";
  flags.dp_sync_us = "400";
  flags.context_parallel = "4";
  flags.cp_exchange_us = "120.5";
  flags.expert_parallel = "8";
  flags.ep_share = "0.3";
  absl::StatusOr<SimulateSettings> settings = ParseSimulateFlags(flags);
  ASSERT_TRUE(settings.ok()) << settings.status();
  const sim::ModelParallel& parallel = settings->config.parallel;
  EXPECT_EQ(parallel.tensor, 4);
  EXPECT_EQ(parallel.data, 2);
  EXPECT_TRUE(parallel.sequence_parallel);
  EXPECT_TRUE(parallel.overlap);
  EXPECT_EQ(parallel.tensor_share, 0.25);
  EXPECT_EQ(parallel.dp_sync_ns, 400'000);
  EXPECT_EQ(parallel.context, 4);
  EXPECT_EQ(parallel.context_exchange_ns, 120'500);
  EXPECT_EQ(parallel.expert, 8);
  EXPECT_EQ(parallel.expert_share, 0.3);
  EXPECT_EQ(parallel.replicas(), 32);
  flags.ep_share = "1.5";
  absl::StatusOr<SimulateSettings> refused = ParseSimulateFlags(flags);
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.status().message(), HasSubstr("--ep-share: '1.5' must be < 1"));
  flags.ep_share = "0.3";
  flags.context_parallel = "1025";
  refused = ParseSimulateFlags(flags);
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.status().message(), HasSubstr("--context-parallel: '1025'"));
  flags.context_parallel = "4";
  flags.tp_share = "1";
  refused = ParseSimulateFlags(flags);
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.status().message(), HasSubstr("--tp-share: '1' must be < 1"));
  flags.tp_share = "0.25";
  flags.tensor_parallel = "0";
  refused = ParseSimulateFlags(flags);
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.status().message(), HasSubstr("--tensor-parallel: '0'"));
  flags.tensor_parallel = "4";
  flags.dp_sync_coalesced = true;
  settings = ParseSimulateFlags(flags);
  ASSERT_TRUE(settings.ok()) << settings.status();
  EXPECT_TRUE(settings->config.parallel.dp_sync_coalesced);
  // An Nsight export's NCCL ranges name every call's communicator: no coalesced set there.
  flags.format = "nsys";
  refused = ParseSimulateFlags(flags);
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.status().message(),
              HasSubstr("--dp-sync-coalesced: does not apply to --format nsys"));
}

TEST(ParseSimulateFlagsTest, ListsSlowLinksAndLayouts) {
  SimulateFlags flags;
  flags.schedule = "zb-h1";
  flags.stages = "3";
  flags.forward_us = "1000,1500.5,1000";
  flags.weight_grad_us = "700";
  flags.slow_links = {"1:2:25", "2:1:inf"};
  flags.clock_offsets_us = "0,-1.25,3";
  flags.stage_to_rank = "2,0,1";
  flags.weights_mb = "512";
  flags.link_gbps = "inf";
  flags.format = "array";
  flags.no_nccl_args = true;
  flags.no_iteration_barrier = true;
  absl::StatusOr<SimulateSettings> settings = ParseSimulateFlags(flags);
  ASSERT_TRUE(settings.ok()) << settings.status();
  const sim::Config& config = settings->config;
  EXPECT_EQ(config.costs[1].forward, 1'500'500);
  EXPECT_EQ(config.costs[2].weight_grad, 700'000);
  ASSERT_EQ(config.link_overrides.size(), 2u);
  EXPECT_EQ(config.link_overrides[0].src_rank, 1);
  EXPECT_EQ(config.link_overrides[0].dst_rank, 2);
  EXPECT_EQ(config.link_overrides[0].link.gbps, 25.0);
  EXPECT_EQ(config.link_overrides[0].link.latency_ns,
            5'000);  // the default latency
  EXPECT_EQ(config.link_overrides[1].link.gbps, std::numeric_limits<double>::infinity());
  EXPECT_EQ(config.clock_offsets_ns, (std::vector<int64_t>{0, -1'250, 3'000}));
  EXPECT_EQ(config.stage_to_rank, (std::vector<int32_t>{2, 0, 1}));
  EXPECT_EQ(config.weights_bytes, (std::vector<int64_t>(3, int64_t{512} << 20)));
  EXPECT_EQ(config.link.gbps, std::numeric_limits<double>::infinity());
  EXPECT_FALSE(config.iteration_barrier);
  EXPECT_EQ(settings->write.kineto.layout, KinetoLayout::kBareArray);
  EXPECT_FALSE(settings->write.kineto.nccl_args);
}

TEST(ParseSimulateFlagsTest, EveryAnnotationStyleBySpelling) {
  const std::pair<const char*, sim::AnnotationStyle> kStyles[] = {
      {"none", sim::AnnotationStyle::kNone},
      {"pp-gpu", sim::AnnotationStyle::kPpGpu},
      {"pp-cpu", sim::AnnotationStyle::kPpCpu},
      {"pp-short", sim::AnnotationStyle::kPpShortCpu},
      {"pp-mirrored", sim::AnnotationStyle::kPpMirrored}};
  for (const auto& [spelling, style] : kStyles) {
    SimulateFlags flags;
    flags.annotations = spelling;
    absl::StatusOr<SimulateSettings> settings = ParseSimulateFlags(flags);
    ASSERT_TRUE(settings.ok()) << spelling << ": " << settings.status();
    EXPECT_EQ(settings->config.annotations, style) << spelling;
  }
}

TEST(ParseSimulateFlagsTest, EveryP2pStyleBySpelling) {
  const std::pair<const char*, sim::P2pStyle> kStyles[] = {{"per-op", sim::P2pStyle::kPerOp},
                                                           {"batched", sim::P2pStyle::kBatched}};
  for (const auto& [spelling, style] : kStyles) {
    SimulateFlags flags;
    flags.p2p = spelling;
    absl::StatusOr<SimulateSettings> settings = ParseSimulateFlags(flags);
    ASSERT_TRUE(settings.ok()) << spelling << ": " << settings.status();
    EXPECT_EQ(settings->config.p2p, style) << spelling;
  }
}

TEST(SimulateCliTest, WritesASetThatLoadsBackIntoTheSimulatedTrace) {
  TempDir dir;
  const std::string out = dir.path() + "/set";
  const std::vector<std::string> args = {"-o",
                                         out,
                                         "-p",
                                         "3",
                                         "-m",
                                         "6",
                                         "--jitter",
                                         "0.05",
                                         "--seed",
                                         "11",
                                         "--annotations",
                                         "pp-gpu",
                                         "--gzip",
                                         "--clock-offset-us",
                                         "0,1.5,-2",
                                         "--slow-link",
                                         "1:2:25",
                                         "--optimizer-us",
                                         "300"};
  CommandResult run = Simulate(args);
  ASSERT_EQ(run.exit_status, 0) << run.err;
  EXPECT_EQ(run.err, "");
  EXPECT_THAT(run.out, HasSubstr("wrote 3 rank traces and truth.json"));

  // The same job in process.
  SimulateFlags flags;
  flags.stages = "3";
  flags.microbatches = "6";
  flags.jitter = "0.05";
  flags.seed = "11";
  flags.annotations = "pp-gpu";
  flags.clock_offsets_us = "0,1.5,-2";
  flags.slow_links = {"1:2:25"};
  flags.optimizer_us = "300";
  absl::StatusOr<SimulateSettings> settings = ParseSimulateFlags(flags);
  ASSERT_TRUE(settings.ok()) << settings.status();
  absl::StatusOr<sim::Simulation> simulation = sim::Simulate(settings->config);
  ASSERT_TRUE(simulation.ok()) << simulation.status();

  absl::StatusOr<Trace> loaded = LoadTrace({out}, LoadOptions{});
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  ASSERT_EQ(loaded->ranks.size(), 3u);
  for (size_t r = 0; r < 3; ++r) {
    const Rank& rank = loaded->ranks[r];
    const Rank& expected = simulation->trace.ranks[r];
    EXPECT_EQ(rank.source_path, out + "/rank" + std::to_string(r) + ".pt.trace.json.gz");
    ASSERT_EQ(rank.steps.size(), expected.steps.size());
    EXPECT_EQ(rank.steps.back().end, expected.steps.back().end);
    ASSERT_EQ(rank.timelines.size(), expected.timelines.size());
    size_t loaded_intervals = 0;
    size_t expected_intervals = 0;
    for (const Timeline& timeline : rank.timelines) loaded_intervals += timeline.intervals.size();
    for (const Timeline& timeline : expected.timelines) {
      expected_intervals += timeline.intervals.size();
    }
    EXPECT_EQ(loaded_intervals, expected_intervals);
  }

  simdjson::dom::parser parser;
  simdjson::dom::element truth;
  std::string text = ReadFile(out + "/truth.json");
  ASSERT_EQ(parser.parse(text).get(truth), simdjson::SUCCESS);
  EXPECT_EQ(std::string_view(truth["schema"]), "bubblescope.truth/1");
  EXPECT_EQ(int64_t(truth["config"]["stages"]), 3);
  EXPECT_EQ(double(truth["bubble_fraction"]), simulation->truth.bubble_fraction);
  EXPECT_EQ(double(truth["theoretical_bubble_fraction"]), 2.0 / 8.0);
  EXPECT_EQ(simdjson::dom::array(truth["iterations"]).size(), 3u);
}

TEST(SimulateCliTest, RefusesAnOccupiedDirectoryUnlessForced) {
  TempDir dir;
  const std::vector<std::string> args = {"-o", dir.path(), "-p", "2", "-m", "2", "-k", "1"};
  ASSERT_EQ(Simulate(args).exit_status, 0);
  std::string before = ReadFile(dir.path() + "/truth.json");
  std::vector<std::string> changed = args;
  changed.insert(changed.end(), {"--fwd-us", "10"});
  CommandResult refused = Simulate(changed);
  EXPECT_EQ(refused.exit_status, 2);
  EXPECT_EQ(refused.out, "");
  EXPECT_THAT(refused.err, StartsWith("bubblescope: simulate: "));
  EXPECT_THAT(refused.err, HasSubstr("--force"));
  EXPECT_EQ(LineCount(refused.err), 1u);
  EXPECT_EQ(ReadFile(dir.path() + "/truth.json"), before);

  changed.push_back("--force");
  CommandResult forced = Simulate(changed);
  EXPECT_EQ(forced.exit_status, 0) << forced.err;
  EXPECT_NE(ReadFile(dir.path() + "/truth.json"), before);
}

TEST(SimulateCliTest, BadValuesAreOneLineAndExitTwo) {
  TempDir dir;
  struct Case {
    std::vector<std::string> args;
    const char* message;
  };
  const std::vector<Case> cases = {
      {{"--stages", "0"}, "--stages: '0' is not a whole number from 1 to 4096"},
      {{"--microbatches", "many"}, "--microbatches: 'many'"},
      {{"--fwd-us", "1,2"}, "--fwd-us: has 2 values; give one, or one per stage (4)"},
      {{"--bwd-us", "1.0001"}, "--bwd-us: '1.0001' is finer than a nanosecond"},
      {{"--schedule", "pipedream"}, "--schedule: 'pipedream' is not one of"},
      {{"--jitter", "1"}, "--jitter: '1' must be < 1"},
      {{"--slow-link", "1:1:5"}, "--slow-link: '1:1:5' links a rank to itself"},
      {{"--slow-link", "0:9:5"}, "--slow-link: '0:9:5' names a rank outside 0..3"},
      {{"--slow-link", "0-1"}, "--slow-link: '0-1' is not SRC:DST:GBPS"},
      {{"--wgrad-us", "5"}, "--wgrad-us: applies only to the zb-h1 schedule"},
      {{"--schedule", "zb-h1"}, "--wgrad-us: is required by the zb-h1 schedule"},
      {{"--format", "xml"}, "--format: 'xml' is not one of new, old, array, nsys"},
      {{"--annotations", "nvtx"}, "--annotations: 'nvtx'"},
      {{"--p2p", "coalesced"}, "--p2p: 'coalesced' is not one of per-op, batched"},
      {{"--launches", "threads"}, "--launches: 'threads' is not one of one-thread, torch"},
      {{"--vendor", "metal"}, "--vendor: 'metal' is not one of cuda, rocm"},
      {{"--clock-offset-us", "1,2"}, "--clock-offset-us: has 2 values"},
      {{"--link-gbps", "0"}, "--link-gbps: '0' is not a number >= 0.01 (or inf)"},
      {{"--stage-to-rank", "0,0,1,2"}, "stage_to_rank must be a permutation"},
      {{"--schedule", "interleaved", "--virtual-stages", "2", "-m", "6"},
       "needs microbatches (6) to be a multiple of stages (4)"},
      {{"--schedule", "1f1b", "--virtual-stages", "2"},
       "virtual_stages = 2 needs the interleaved or gpipe schedule (1f1b has one chunk per rank)"},
      {{"--schedule", "gpipe", "--virtual-stages", "2", "--p2p", "batched"},
       "p2p = batched is not modelled for gpipe with virtual_stages = 2"},
  };
  for (const Case& test_case : cases) {
    std::vector<std::string> args = {"-o", dir.path() + "/never"};
    args.insert(args.end(), test_case.args.begin(), test_case.args.end());
    CommandResult run = Simulate(args);
    SCOPED_TRACE(test_case.message);
    EXPECT_EQ(run.exit_status, 2);
    EXPECT_EQ(run.out, "");
    EXPECT_THAT(run.err, StartsWith("bubblescope: simulate: "));
    EXPECT_THAT(run.err, HasSubstr(test_case.message));
    EXPECT_EQ(LineCount(run.err), 1u);
  }
  EXPECT_FALSE(fs::exists(dir.path() + "/never"));
}

TEST(SimulateCliTest, OutputDirectoryIsRequiredAndHelpHasAnExample) {
  CommandResult missing = Simulate({"-p", "2"});
  EXPECT_EQ(missing.exit_status, 2);
  EXPECT_THAT(missing.err, HasSubstr("--output"));
  CommandResult help = Simulate({"--help"});
  EXPECT_EQ(help.exit_status, 0);
  EXPECT_THAT(help.out, HasSubstr("bubblescope simulate -o sim/"));
  EXPECT_THAT(help.out, HasSubstr("--slow-link"));
}

}  // namespace
}  // namespace bubblescope
