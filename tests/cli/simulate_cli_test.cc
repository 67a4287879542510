// `bubblescope simulate`, the real binary end to end: the written set loads back into the
// simulator's own trace, truth.json matches the simulation, and bad values, an occupied
// directory and a missing -o are one-line errors with exit status 2. The options' parsing is
// tested where it lives (tests/synth/simulate_options_test.cc).
#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "loader/trace_loader.h"
#include "simdjson.h"
#include "support/subprocess.h"
#include "support/test_files.h"
#include "synth/simulate_options.h"
#include "synth/synthetic_job.h"

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
  sim::SimulateOptions options;
  options.stages = "3";
  options.microbatches = "6";
  options.jitter = "0.05";
  options.seed = "11";
  options.annotations = "pp-gpu";
  options.clock_offsets_us = "0,1.5,-2";
  options.slow_links = {"1:2:25"};
  options.optimizer_us = "300";
  absl::StatusOr<sim::SimulateSettings> settings = sim::ParseSimulateOptions(options);
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
      {{"--live", "0.5", "--format", "nsys"},
       "--live: does not apply to --format nsys: an Nsight Systems export is made after its run "
       "ends"},
      {{"--live", "0", "--format", "array", "--gzip"},
       "--gzip: does not apply to --live with --format array"},
      {{"--live", "-0.5"}, "--live: '-0.5' is not a number >= 0"},
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

// An iteration of analyze's JSON report: its step, window and bubble.
using IterationFigures = std::tuple<int64_t, double, double>;

// pipelines[0]'s iterations and bubble_fraction of the JSON report at `path`, or of the truth.json
// at `path` (its iterations, bubble_fraction).
std::pair<std::vector<IterationFigures>, double> BubbleFigures(const std::string& path,
                                                               bool truth = false) {
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  const std::string text = ReadFile(path);
  EXPECT_EQ(parser.parse(text).get(root), simdjson::SUCCESS) << path;
  simdjson::dom::element figures = truth ? root : root["pipelines"].at(0);
  std::vector<IterationFigures> iterations;
  for (simdjson::dom::element iteration : simdjson::dom::array(figures["iterations"])) {
    iterations.emplace_back(int64_t(iteration["step"]), double(iteration["window_us"]),
                            double(iteration["bubble_fraction"]));
  }
  return {iterations, double(figures["bubble_fraction"])};
}

CommandResult AnalyzeToJson(const std::vector<std::string>& args, const std::string& report) {
  std::vector<std::string> argv = {BUBBLESCOPE_BINARY, "analyze", "--format", "json", "-o", report};
  argv.insert(argv.end(), args.begin(), args.end());
  return RunCommand(argv);
}

TEST(SimulateCliTest, LiveArraySetAnalysesAsTheJobWrittenAtOnce) {
  TempDir dir;
  const std::vector<std::string> job = {"-p", "3",        "-m",   "4",        "-k",
                                        "3",  "--jitter", "0.03", "--format", "array"};
  std::vector<std::string> live = {"-o", dir.path() + "/live", "--live", "0"};
  live.insert(live.end(), job.begin(), job.end());
  CommandResult wrote = Simulate(live);
  ASSERT_EQ(wrote.exit_status, 0) << wrote.err;
  EXPECT_THAT(wrote.out, StartsWith("simulate: wrote 3 iterations live, 0 s apart: 3 trace files\n"
                                    "simulate: wrote 3 rank traces and truth.json to "));
  std::vector<std::string> at_once = {"-o", dir.path() + "/at_once"};
  at_once.insert(at_once.end(), job.begin(), job.end());
  ASSERT_EQ(Simulate(at_once).exit_status, 0);

  const std::string live_report = dir.path() + "/live.json";
  const std::string at_once_report = dir.path() + "/at_once.json";
  ASSERT_EQ(AnalyzeToJson({dir.path() + "/live"}, live_report).exit_status, 0);
  ASSERT_EQ(AnalyzeToJson({dir.path() + "/at_once"}, at_once_report).exit_status, 0);
  const auto live_figures = BubbleFigures(live_report);
  EXPECT_EQ(live_figures.first.size(), 3u);
  EXPECT_EQ(live_figures, BubbleFigures(at_once_report));
  EXPECT_EQ(live_figures, BubbleFigures(dir.path() + "/live/truth.json", /*truth=*/true));
}

TEST(SimulateCliTest, LiveCycleFilesAnalyseCycleByCycle) {
  TempDir dir;
  const std::string set = dir.path() + "/cycles";
  CommandResult wrote =
      Simulate({"-o", set, "-p", "3", "-m", "4", "-k", "3", "--jitter", "0.03", "--live", "0.01"});
  ASSERT_EQ(wrote.exit_status, 0) << wrote.err;
  EXPECT_THAT(wrote.out, StartsWith("simulate: wrote 3 iterations live, 0.01 s apart: 9 trace "
                                    "files\n"));
  size_t cycle_files = 0;
  for (const auto& entry : fs::directory_iterator(set)) {
    const std::string name = entry.path().filename().string();
    if (name == "truth.json") continue;
    EXPECT_THAT(name, StartsWith("sim-host_1000"));
    EXPECT_TRUE(name.ends_with(".pt.trace.json")) << name;
    ++cycle_files;
  }
  EXPECT_EQ(cycle_files, 9u);
  // Each cycle is one iteration, analysed to the simulated truth of that iteration: the newest
  // by default, any by --cycle.
  const auto truth = BubbleFigures(set + "/truth.json", /*truth=*/true);
  ASSERT_EQ(truth.first.size(), 3u);
  const std::string report = dir.path() + "/report.json";
  for (int cycle = 0; cycle <= 3; ++cycle) {
    std::vector<std::string> args = {set};
    if (cycle > 0) args.insert(args.end(), {"--cycle", std::to_string(cycle)});
    CommandResult analyzed = AnalyzeToJson(args, report);
    ASSERT_EQ(analyzed.exit_status, 0) << analyzed.err;
    const IterationFigures expected = truth.first[static_cast<size_t>(cycle == 0 ? 2 : cycle - 1)];
    const auto figures = BubbleFigures(report);
    SCOPED_TRACE(cycle);
    EXPECT_EQ(figures.first, std::vector<IterationFigures>{expected});
    EXPECT_EQ(figures.second, std::get<2>(expected));
  }
}

TEST(SimulateCliTest, OutputDirectoryIsRequiredAndHelpHasAnExample) {
  CommandResult missing = Simulate({"-p", "2"});
  EXPECT_EQ(missing.exit_status, 2);
  EXPECT_THAT(missing.err, HasSubstr("--output"));
  CommandResult help = Simulate({"--help"});
  EXPECT_EQ(help.exit_status, 0);
  EXPECT_THAT(help.out, HasSubstr("bubblescope simulate -o sim/"));
  EXPECT_THAT(help.out, HasSubstr("--slow-link"));
  EXPECT_THAT(help.out, HasSubstr("--live SECONDS"));
}

}  // namespace
}  // namespace bubblescope
