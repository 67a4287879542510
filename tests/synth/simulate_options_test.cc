// simulate's options parsed and checked (synth/simulate_options.h): exact nanoseconds from
// microsecond text, the documented defaults, and each bad value refused with one line naming
// the option.
#include "synth/simulate_options.h"

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace bubblescope::sim {
namespace {

using ::testing::HasSubstr;

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

TEST(ParseSimulateOptionsTest, DefaultsAreTheDocumentedJob) {
  SimulateOptions options;
  options.output_dir = "unused";
  absl::StatusOr<SimulateSettings> settings = ParseSimulateOptions(options);
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

TEST(ParseSimulateOptionsTest, ModelParallelFlags) {
  SimulateOptions options;
  options.output_dir = "unused";
  absl::StatusOr<SimulateSettings> defaults = ParseSimulateOptions(options);
  ASSERT_TRUE(defaults.ok()) << defaults.status();
  EXPECT_EQ(defaults->config.parallel.replicas(), 1);  // a plain pipeline, as before
  options.tensor_parallel = "4";
  options.data_parallel = "2";
  options.sequence_parallel = true;
  options.tp_overlap = true;
  options.tp_share = "0.25";
  options.dp_sync_us = "400";
  options.context_parallel = "4";
  options.cp_exchange_us = "120.5";
  options.expert_parallel = "8";
  options.ep_share = "0.3";
  absl::StatusOr<SimulateSettings> settings = ParseSimulateOptions(options);
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
  options.ep_share = "1.5";
  absl::StatusOr<SimulateSettings> refused = ParseSimulateOptions(options);
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.status().message(), HasSubstr("--ep-share: '1.5' must be < 1"));
  options.ep_share = "0.3";
  options.context_parallel = "1025";
  refused = ParseSimulateOptions(options);
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.status().message(), HasSubstr("--context-parallel: '1025'"));
  options.context_parallel = "4";
  options.tp_share = "1";
  refused = ParseSimulateOptions(options);
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.status().message(), HasSubstr("--tp-share: '1' must be < 1"));
  options.tp_share = "0.25";
  options.tensor_parallel = "0";
  refused = ParseSimulateOptions(options);
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.status().message(), HasSubstr("--tensor-parallel: '0'"));
  options.tensor_parallel = "4";
  options.dp_sync_coalesced = true;
  settings = ParseSimulateOptions(options);
  ASSERT_TRUE(settings.ok()) << settings.status();
  EXPECT_TRUE(settings->config.parallel.dp_sync_coalesced);
  // An Nsight export's NCCL ranges name every call's communicator: no coalesced set there.
  options.format = "nsys";
  refused = ParseSimulateOptions(options);
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.status().message(),
              HasSubstr("--dp-sync-coalesced: does not apply to --format nsys"));
}

TEST(ParseSimulateOptionsTest, ListsSlowLinksAndLayouts) {
  SimulateOptions options;
  options.schedule = "zb-h1";
  options.stages = "3";
  options.forward_us = "1000,1500.5,1000";
  options.weight_grad_us = "700";
  options.slow_links = {"1:2:25", "2:1:inf"};
  options.clock_offsets_us = "0,-1.25,3";
  options.stage_to_rank = "2,0,1";
  options.weights_mb = "512";
  options.link_gbps = "inf";
  options.format = "array";
  options.no_nccl_args = true;
  options.no_iteration_barrier = true;
  absl::StatusOr<SimulateSettings> settings = ParseSimulateOptions(options);
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

TEST(ParseSimulateOptionsTest, EveryAnnotationStyleBySpelling) {
  const std::pair<const char*, sim::AnnotationStyle> kStyles[] = {
      {"none", sim::AnnotationStyle::kNone},
      {"pp-gpu", sim::AnnotationStyle::kPpGpu},
      {"pp-cpu", sim::AnnotationStyle::kPpCpu},
      {"pp-short", sim::AnnotationStyle::kPpShortCpu},
      {"pp-mirrored", sim::AnnotationStyle::kPpMirrored}};
  for (const auto& [spelling, style] : kStyles) {
    SimulateOptions options;
    options.annotations = spelling;
    absl::StatusOr<SimulateSettings> settings = ParseSimulateOptions(options);
    ASSERT_TRUE(settings.ok()) << spelling << ": " << settings.status();
    EXPECT_EQ(settings->config.annotations, style) << spelling;
  }
}

TEST(ParseSimulateOptionsTest, EveryP2pStyleBySpelling) {
  const std::pair<const char*, sim::P2pStyle> kStyles[] = {{"per-op", sim::P2pStyle::kPerOp},
                                                           {"batched", sim::P2pStyle::kBatched}};
  for (const auto& [spelling, style] : kStyles) {
    SimulateOptions options;
    options.p2p = spelling;
    absl::StatusOr<SimulateSettings> settings = ParseSimulateOptions(options);
    ASSERT_TRUE(settings.ok()) << spelling << ": " << settings.status();
    EXPECT_EQ(settings->config.p2p, style) << spelling;
  }
}

TEST(ParseSimulateOptionsTest, LiveSecondsBetweenIterations) {
  SimulateOptions options;
  absl::StatusOr<SimulateSettings> settings = ParseSimulateOptions(options);
  ASSERT_TRUE(settings.ok()) << settings.status();
  EXPECT_FALSE(settings->live_interval_ns.has_value());  // without --live: the whole set at once
  for (const auto& [text, ns] : {std::pair{"0.05", int64_t{50'000'000}}, std::pair{"0", int64_t{0}},
                                 std::pair{"2", int64_t{2'000'000'000}}}) {
    options.live = text;
    settings = ParseSimulateOptions(options);
    ASSERT_TRUE(settings.ok()) << text << ": " << settings.status();
    EXPECT_EQ(settings->live_interval_ns, ns) << text;
  }
  // Cycle files are whole when written, so they may be compressed.
  options.gzip = true;
  EXPECT_TRUE(ParseSimulateOptions(options).ok());
}

TEST(ParseSimulateOptionsTest, LiveRefusals) {
  const struct {
    const char* live;
    const char* format;
    bool gzip;
    const char* error;
  } kCases[] = {
      {"-1", "new", false, "--live: '-1' is not a number >= 0"},
      {"soon", "new", false, "--live: 'soon' is not a number >= 0"},
      {"90000", "new", false, "--live: '90000' seconds is more than a day"},
      {"1", "nsys", false,
       "--live: does not apply to --format nsys: an Nsight Systems export is made after its run "
       "ends"},
      {"1", "array", true,
       "--gzip: does not apply to --live with --format array: a growing gzip file cannot be read "
       "before it ends"},
  };
  for (const auto& c : kCases) {
    SimulateOptions options;
    options.live = c.live;
    options.format = c.format;
    options.gzip = c.gzip && std::string_view(c.format) != "nsys";
    absl::StatusOr<SimulateSettings> settings = ParseSimulateOptions(options);
    EXPECT_EQ(settings.status().code(), absl::StatusCode::kInvalidArgument) << c.live;
    EXPECT_EQ(settings.status().message(), c.error);
  }
}

}  // namespace
}  // namespace bubblescope::sim
