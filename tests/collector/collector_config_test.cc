// Settings and file names from environment variables.
#include "collector_config.h"

#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "gtest/gtest.h"

namespace bubblescope::collector {
namespace {

// An environment made of a map, as the parser sees it.
EnvLookup Env(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](const char* name) -> const char* {
    const auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  };
}

TEST(CollectorConfigTest, DefaultsWhenNothingIsSet) {
  CollectorConfig config;
  std::string error;
  ASSERT_TRUE(ParseCollectorConfig(Env({}), &config, &error)) << error;
  EXPECT_EQ(config.output_dir, "bubblescope_traces");
  EXPECT_EQ(config.kinds, 0xFFu);  // all eight kinds
  EXPECT_EQ(config.flush_ms, 1000);
  EXPECT_EQ(config.start, StartMode::kImmediate);
  EXPECT_EQ(config.buffer_cap_bytes, 64 * 1024 * 1024);
}

TEST(CollectorConfigTest, EveryVariable) {
  CollectorConfig config;
  std::string error;
  ASSERT_TRUE(ParseCollectorConfig(Env({{"BUBBLESCOPE_OUTPUT_DIR", "/tmp/out"},
                                        {"BUBBLESCOPE_KINDS", "kernel, nccl,memory"},
                                        {"BUBBLESCOPE_FLUSH_MS", "250"},
                                        {"BUBBLESCOPE_START", "after:30"},
                                        {"BUBBLESCOPE_BUFFER_MB", "8"},
                                        {"BUBBLESCOPE_RUN_ID", "20261125-132801-a1b2"}}),
                                   &config, &error))
      << error;
  EXPECT_EQ(config.output_dir, "/tmp/out");
  EXPECT_EQ(config.kinds, kKindKernel | kKindNccl | kKindMemory);
  EXPECT_EQ(config.flush_ms, 250);
  EXPECT_EQ(config.start, StartMode::kAfterDelay);
  EXPECT_EQ(config.start_delay_ms, 30000);
  EXPECT_EQ(config.buffer_cap_bytes, 8 * 1024 * 1024);
  EXPECT_EQ(config.run_id, "20261125-132801-a1b2");
  ASSERT_TRUE(ParseCollectorConfig(Env({{"BUBBLESCOPE_START", "profiler-api"}}), &config, &error));
  EXPECT_EQ(config.start, StartMode::kProfilerApi);
  ASSERT_TRUE(ParseCollectorConfig(Env({{"BUBBLESCOPE_START", "steps:3:5"}}), &config, &error));
  EXPECT_EQ(config.start, StartMode::kSteps);
  EXPECT_EQ(config.first_step, 3);
  EXPECT_EQ(config.last_step, 5);
}

// steps:1:2 records ProfilerStep#1 and #2: on at #1 (or at #2 if #1 never comes), off at #3.
TEST(CollectorConfigTest, StepWindowChanges) {
  CollectorConfig config;
  config.start = StartMode::kSteps;
  config.first_step = 1;
  config.last_step = 2;
  std::optional<int64_t> first;
  auto change = [&](std::string_view name) { return StepWindowChange(config, name, &first); };
  EXPECT_EQ(change("ProfilerStep#0"), std::nullopt);
  EXPECT_EQ(first, 0);
  EXPECT_EQ(change("ProfilerStep#1"), true);
  EXPECT_EQ(change("ProfilerStep#2"), true);
  EXPECT_EQ(change("ProfilerStep#3"), false);
  EXPECT_EQ(change("ProfilerStep#12"), false);
  EXPECT_EQ(change("forward"), std::nullopt);
  EXPECT_EQ(change("ProfilerStep#"), std::nullopt);
  EXPECT_EQ(change("ProfilerStep#1x"), std::nullopt);
  EXPECT_EQ(change("ProfilerStep#-1"), std::nullopt);
  EXPECT_EQ(first, 0);
  EXPECT_FALSE(RecordsFromStart(config));  // absolute windows wait for their first step
  config.start = StartMode::kImmediate;
  EXPECT_TRUE(RecordsFromStart(config));
  EXPECT_EQ(change("ProfilerStep#1"), std::nullopt);
}

// steps:+1:+2 in a job resumed at step 500: recording runs from the start, stops at #500 (the
// first step seen, +0), runs again for #501 and #502, and stops at #503 for good.
TEST(CollectorConfigTest, RelativeStepWindowCountsFromTheFirstStepSeen) {
  CollectorConfig config;
  std::string error;
  ASSERT_TRUE(ParseCollectorConfig(Env({{"BUBBLESCOPE_START", "steps:+1:+2"}}), &config, &error))
      << error;
  EXPECT_TRUE(config.steps_relative);
  EXPECT_TRUE(RecordsFromStart(config));
  std::optional<int64_t> first;
  auto change = [&](std::string_view name) { return StepWindowChange(config, name, &first); };
  EXPECT_EQ(change("forward"), std::nullopt);
  EXPECT_EQ(first, std::nullopt);
  EXPECT_EQ(change("ProfilerStep#500"), false);
  EXPECT_EQ(first, 500);
  EXPECT_EQ(change("ProfilerStep#501"), true);
  EXPECT_EQ(change("ProfilerStep#502"), true);
  EXPECT_EQ(change("ProfilerStep#503"), false);
  EXPECT_EQ(change("ProfilerStep#9000"), false);
}

TEST(CollectorConfigTest, LimitInMebibytesAndSeconds) {
  CollectorConfig config;
  std::string error;
  ASSERT_TRUE(ParseCollectorConfig(Env({}), &config, &error)) << error;
  EXPECT_EQ(config.limit.max_bytes, 0);  // no cap unless asked
  EXPECT_EQ(config.limit.max_recording_ms, 0);
  ASSERT_TRUE(ParseCollectorConfig(Env({{"BUBBLESCOPE_LIMIT", "256:600"}}), &config, &error))
      << error;
  EXPECT_EQ(config.limit.max_bytes, 256 * 1024 * 1024);
  EXPECT_EQ(config.limit.max_recording_ms, 600'000);
  ASSERT_TRUE(ParseCollectorConfig(Env({{"BUBBLESCOPE_LIMIT", "0:30"}}), &config, &error));
  EXPECT_EQ(config.limit.max_bytes, 0);
  EXPECT_EQ(config.limit.max_recording_ms, 30'000);
}

TEST(CollectorConfigTest, BadValuesNameTheVariable) {
  const std::map<std::string, std::string> cases[] = {
      {{"BUBBLESCOPE_KINDS", "kernel,gpu"}},  {{"BUBBLESCOPE_KINDS", "kernel,"}},
      {{"BUBBLESCOPE_FLUSH_MS", "0"}},        {{"BUBBLESCOPE_FLUSH_MS", "10ms"}},
      {{"BUBBLESCOPE_START", "later"}},       {{"BUBBLESCOPE_START", "after:-1"}},
      {{"BUBBLESCOPE_START", "steps:4:2"}},   {{"BUBBLESCOPE_START", "steps:3"}},
      {{"BUBBLESCOPE_START", "steps::2"}},    {{"BUBBLESCOPE_START", "steps:1:2:3"}},
      {{"BUBBLESCOPE_START", "steps:+2:6"}},  {{"BUBBLESCOPE_START", "steps:2:+6"}},
      {{"BUBBLESCOPE_START", "steps:+6:+2"}}, {{"BUBBLESCOPE_LIMIT", "256"}},
      {{"BUBBLESCOPE_LIMIT", "a:1"}},         {{"BUBBLESCOPE_LIMIT", "-1:0"}},
      {{"BUBBLESCOPE_LIMIT", "1:"}},          {{"BUBBLESCOPE_LIMIT", "1099511627776:0"}},
      {{"BUBBLESCOPE_BUFFER_MB", "-4"}},      {{"BUBBLESCOPE_RUN_ID", "my-rank-run"}},
      {{"BUBBLESCOPE_RUN_ID", "a/b"}},        {{"BUBBLESCOPE_RUN_ID", "\x1b[2J"}},
      {{"BUBBLESCOPE_FLUSH_ON_STEP", "on"}},
  };
  for (const auto& vars : cases) {
    CollectorConfig config;
    std::string error;
    EXPECT_FALSE(ParseCollectorConfig(Env(vars), &config, &error)) << vars.begin()->second;
    EXPECT_EQ(error.rfind(vars.begin()->first + ": ", 0), 0u) << error;
  }
}

// BUBBLESCOPE_FLUSH_ON_STEP (`record --live`): off unless 1; 0 and empty leave it off.
TEST(CollectorConfigTest, FlushOnStepIsZeroOrOne) {
  CollectorConfig config;
  std::string error;
  ASSERT_TRUE(ParseCollectorConfig(Env({}), &config, &error)) << error;
  EXPECT_FALSE(config.flush_on_step);
  ASSERT_TRUE(ParseCollectorConfig(Env({{"BUBBLESCOPE_FLUSH_ON_STEP", "1"}}), &config, &error))
      << error;
  EXPECT_TRUE(config.flush_on_step);
  EXPECT_TRUE(FollowsStepRanges(config));  // the NVTX callbacks are needed without a step window
  CollectorConfig off;
  ASSERT_TRUE(ParseCollectorConfig(Env({{"BUBBLESCOPE_FLUSH_ON_STEP", "0"}}), &off, &error));
  EXPECT_FALSE(off.flush_on_step);
  EXPECT_FALSE(FollowsStepRanges(off));
  ASSERT_TRUE(ParseCollectorConfig(Env({{"BUBBLESCOPE_FLUSH_ON_STEP", ""}}), &off, &error));
  EXPECT_FALSE(off.flush_on_step);
  for (const char* bad : {"yes", "true", "2", " 1", "01"}) {
    CollectorConfig config_bad;
    EXPECT_FALSE(
        ParseCollectorConfig(Env({{"BUBBLESCOPE_FLUSH_ON_STEP", bad}}), &config_bad, &error));
    EXPECT_EQ(error, "BUBBLESCOPE_FLUSH_ON_STEP: '" + std::string(bad) + "' is not 0 or 1");
  }
  ASSERT_FALSE(
      ParseCollectorConfig(Env({{"BUBBLESCOPE_FLUSH_ON_STEP", "1\n\x1b[2J"}}), &config, &error));
  EXPECT_EQ(error, "BUBBLESCOPE_FLUSH_ON_STEP: '1 \\x1b[2J' is not 0 or 1");  // one line
}

TEST(CollectorConfigTest, ProfilerStepNumbers) {
  EXPECT_EQ(ProfilerStepNumber("ProfilerStep#0"), 0);
  EXPECT_EQ(ProfilerStepNumber("ProfilerStep#1234"), 1234);
  for (const char* other : {"ProfilerStep#", "ProfilerStep#x", "ProfilerStep#-1", "ProfilerStep",
                            "forward", "ProfilerStep#3 ", "profilerstep#3"}) {
    EXPECT_EQ(ProfilerStepNumber(other), std::nullopt) << other;
  }
}

TEST(CollectorConfigTest, IdentityFromTheFirstLauncherVariableSet) {
  const ProcessIdentity torchrun = ReadProcessIdentity(
      Env({{"RANK", "5"}, {"WORLD_SIZE", "8"}, {"LOCAL_RANK", "1"}, {"SLURM_PROCID", "9"}}),
      "node-a", 77);
  EXPECT_EQ(torchrun.rank, 5);
  EXPECT_EQ(torchrun.world_size, 8);
  EXPECT_EQ(torchrun.local_rank, 1);
  EXPECT_EQ(TraceFileName(torchrun, ""), "bubblescope-rank5-world8-node-a-77.json");

  const ProcessIdentity slurm =
      ReadProcessIdentity(Env({{"SLURM_PROCID", "3"}, {"SLURM_NTASKS", "4"}}), "n1", 9);
  EXPECT_EQ(TraceFileName(slurm, ""), "bubblescope-rank3-world4-n1-9.json");
  const ProcessIdentity mpi = ReadProcessIdentity(
      Env({{"OMPI_COMM_WORLD_RANK", "2"}, {"OMPI_COMM_WORLD_SIZE", "16"}}), "h", 1);
  EXPECT_EQ(TraceFileName(mpi, ""), "bubblescope-rank2-world16-h-1.json");
  const ProcessIdentity pmi = ReadProcessIdentity(Env({{"PMI_RANK", "0"}}), "h", 2);
  EXPECT_EQ(TraceFileName(pmi, ""), "bubblescope-rank0-h-2.json");  // no world size known
}

TEST(CollectorConfigTest, UnknownRankAndUnsafeHostCharacters) {
  const ProcessIdentity none = ReadProcessIdentity(Env({{"RANK", "x"}}), "my host/1", 42);
  EXPECT_EQ(none.rank, -1);
  EXPECT_EQ(TraceFileName(none, ""), "bubblescope-norank-my_host_1-42.json");
}

TEST(CollectorConfigTest, RunIdLeadsTheFileName) {
  const ProcessIdentity rank3 =
      ReadProcessIdentity(Env({{"RANK", "3"}, {"WORLD_SIZE", "4"}}), "node-a", 7);
  EXPECT_EQ(TraceFileName(rank3, "20261125-132801-a1b2"),
            "bubblescope-20261125-132801-a1b2-rank3-world4-node-a-7.json");
  const ProcessIdentity none = ReadProcessIdentity(Env({}), "h", 8);
  EXPECT_EQ(TraceFileName(none, "baseline"), "bubblescope-baseline-norank-h-8.json");
}

TEST(CollectorConfigTest, ABadRunIdIsSpelledOutOnOneLine) {
  CollectorConfig config;
  std::string error;
  ASSERT_FALSE(ParseCollectorConfig(Env({{"BUBBLESCOPE_RUN_ID", "a\x1b[2Jb"}}), &config, &error));
  EXPECT_EQ(error,
            "BUBBLESCOPE_RUN_ID: 'a\\x1b[2Jb' is not 1 to 64 letters, digits, '.', '_' or "
            "'-' (without \"rank\")");
}

}  // namespace
}  // namespace bubblescope::collector
