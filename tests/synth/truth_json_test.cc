// truth.json ("bubblescope.truth/1") parses and says exactly what the Truth and
// the Config say: every time is read back from its raw token to the nanosecond.
#include "synth/truth_json.h"

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "gtest/gtest.h"
#include "readers/json_number.h"
#include "schedule_engine/sim_test_util.h"
#include "simdjson.h"
#include "synth/synthetic_job.h"

namespace bubblescope::sim {
namespace {

namespace od = simdjson::ondemand;

TimeNs Ns(od::value value) {
  std::string_view raw = value.raw_json_token();
  int64_t ns = 0;
  EXPECT_EQ(kineto::MicrosToNanos(raw, &ns), kineto::NumberStatus::kOk) << raw;
  return ns;
}

int64_t Int(od::value value) { return int64_t(value); }
double Double(od::value value) { return double(value); }
std::string String(od::value value) { return std::string(std::string_view(value)); }

Config TruthConfig() {
  Config config = testing::IdealConfig(Schedule::kZeroBubbleH1, 3, 5, 1000'001, 2000'002);
  for (StageCost& cost : config.costs) cost.weight_grad = 700'003;
  config.costs[2].forward = 1500'000;
  config.iterations = 3;
  config.launch_gap_ns = 5'000;
  config.optimizer_ns = 300'001;
  config.activation_bytes = int64_t{16} << 20;
  config.link = Link{100.0, 5'000};
  config.link_overrides.push_back({1, 2, Link{std::numeric_limits<double>::infinity(), 1}});
  config.jitter = 0.05;
  config.seed = 18446744073709551615u;
  config.clock_offsets_ns = {0, 1'234'567, -7'654'321};
  config.stage_to_rank = {2, 0, 1};
  config.weights_bytes = {int64_t{512} << 20, int64_t{256} << 20, int64_t{384} << 20};
  config.activation_stash_bytes = int64_t{24} << 20;
  config.annotations = AnnotationStyle::kPpCpu;
  config.p2p = P2pStyle::kBatched;
  config.launches = LaunchStyle::kTorch;
  config.vendor = Vendor::kRocm;
  config.start_time_ns = 1'700'000'000'123'456'789;
  return config;
}

void ExpectOpStats(od::value value, const OpTimeStats& stats) {
  od::object object = value.get_object();
  EXPECT_EQ(Int(object["count"]), stats.count);
  EXPECT_EQ(Ns(object["total_us"]), stats.total_ns);
  EXPECT_DOUBLE_EQ(Double(object["mean_us"]) * 1000.0, stats.mean_ns);
  EXPECT_EQ(Ns(object["p90_us"]), stats.p90_ns);
}

TEST(TruthJsonTest, EveryFieldMatchesTheTruthAndTheConfig) {
  const Config config = TruthConfig();
  absl::StatusOr<Simulation> simulation = Simulate(config);
  ASSERT_TRUE(simulation.ok()) << simulation.status();
  const Truth& truth = simulation->truth;
  absl::StatusOr<std::string> text = TruthJson(config, truth);
  ASSERT_TRUE(text.ok()) << text.status();

  od::parser parser;
  simdjson::padded_string json(*text);
  od::document doc = parser.iterate(json);
  od::object root = doc.get_object();
  EXPECT_EQ(String(root["schema"]), "bubblescope.truth/1");

  od::object echo = root["config"].get_object();
  EXPECT_EQ(String(echo["schedule"]), "zb-h1");
  EXPECT_EQ(Int(echo["stages"]), 3);
  EXPECT_EQ(Int(echo["microbatches"]), 5);
  EXPECT_EQ(Int(echo["virtual_stages"]), 1);
  EXPECT_EQ(Int(echo["iterations"]), 3);
  size_t s = 0;
  for (od::value cost : echo["costs"].get_array()) {
    od::object object = cost.get_object();
    EXPECT_EQ(Int(object["stage"]), static_cast<int64_t>(s));
    EXPECT_EQ(Ns(object["forward_us"]), config.costs[s].forward);
    EXPECT_EQ(Ns(object["backward_us"]), config.costs[s].backward);
    EXPECT_EQ(Ns(object["weight_grad_us"]), config.costs[s].weight_grad);
    ++s;
  }
  EXPECT_EQ(s, 3u);
  EXPECT_EQ(Int(echo["kernels_per_op"]), 2);
  EXPECT_EQ(Int(echo["activation_bytes"]), int64_t{16} << 20);
  od::object link = echo["link"].get_object();
  EXPECT_EQ(Double(link["gbps"]), 100.0);
  EXPECT_EQ(Ns(link["latency_us"]), 5'000);
  size_t overrides = 0;
  for (od::value entry : echo["link_overrides"].get_array()) {
    od::object object = entry.get_object();
    EXPECT_EQ(Int(object["src_rank"]), 1);
    EXPECT_EQ(Int(object["dst_rank"]), 2);
    EXPECT_TRUE(bool(object["gbps"].is_null()));  // infinitely fast
    EXPECT_EQ(Ns(object["latency_us"]), 1);
    ++overrides;
  }
  EXPECT_EQ(overrides, 1u);
  EXPECT_EQ(Ns(echo["launch_gap_us"]), 5'000);
  EXPECT_EQ(Ns(echo["optimizer_us"]), 300'001);
  EXPECT_EQ(Double(echo["jitter"]), 0.05);
  EXPECT_EQ(uint64_t(echo["seed"]), 18446744073709551615u);
  std::vector<TimeNs> offsets;
  for (od::value offset : echo["clock_offsets_us"].get_array()) offsets.push_back(Ns(offset));
  EXPECT_EQ(offsets, config.clock_offsets_ns);
  std::vector<int64_t> weights;
  for (od::value bytes : echo["weights_bytes"].get_array()) weights.push_back(Int(bytes));
  EXPECT_EQ(weights, config.weights_bytes);
  EXPECT_EQ(Int(echo["activation_stash_bytes"]), int64_t{24} << 20);
  EXPECT_EQ(bool(echo["iteration_barrier"]), true);
  EXPECT_EQ(String(echo["annotations"]), "pp-cpu");
  EXPECT_EQ(String(echo["p2p"]), "batched");
  EXPECT_EQ(String(echo["launches"]), "torch");
  EXPECT_EQ(String(echo["vendor"]), "rocm");
  EXPECT_EQ(Ns(echo["start_time_us"]), 1'700'000'000'123'456'789);

  std::vector<int32_t> stage_to_rank;
  for (od::value rank : root["stage_to_rank"].get_array()) {
    stage_to_rank.push_back(static_cast<int32_t>(Int(rank)));
  }
  EXPECT_EQ(stage_to_rank, (std::vector<int32_t>{2, 0, 1}));
  // zb-h1's own bubble is simulated (closed_form_test checks its value).
  EXPECT_EQ(Double(root["theoretical_bubble_fraction"]), truth.theoretical_bubble_fraction);
  EXPECT_EQ(Double(root["bubble_fraction"]), truth.bubble_fraction);
  EXPECT_EQ(Ns(root["idle_us"]), truth.idle_ns);
  EXPECT_EQ(Ns(root["capacity_us"]), truth.capacity_ns);
  od::object latency = root["latency_us"].get_object();
  EXPECT_EQ(Ns(latency["p50"]), truth.latency_p50_ns);
  EXPECT_EQ(Ns(latency["p90"]), truth.latency_p90_ns);
  EXPECT_EQ(Ns(latency["max"]), truth.latency_max_ns);

  // Per-rank sums over the iterations, for rank_stats.
  std::vector<TimeNs> idle_by_rank(3, 0);
  std::vector<TimeNs> drain_by_rank(3, 0);
  size_t i = 0;
  for (od::value value : root["iterations"].get_array()) {
    const IterationTruth& expected = truth.iterations[i];
    od::object iteration = value.get_object();
    EXPECT_EQ(Int(iteration["step"]), static_cast<int64_t>(i));
    EXPECT_EQ(Ns(iteration["window_start_us"]), expected.window_start);
    EXPECT_EQ(Ns(iteration["window_end_us"]), expected.window_end);
    EXPECT_EQ(Ns(iteration["window_us"]), expected.window_end - expected.window_start);
    EXPECT_EQ(Ns(iteration["idle_us"]), expected.idle);
    EXPECT_EQ(Double(iteration["bubble_fraction"]), expected.bubble_fraction);
    size_t r = 0;
    for (od::value rank_value : iteration["ranks"].get_array()) {
      const RankIterationTruth& rank = expected.ranks[r];
      od::object object = rank_value.get_object();
      EXPECT_EQ(Int(object["rank"]), static_cast<int64_t>(r));
      EXPECT_EQ(Int(object["stage"]), rank.stage);
      EXPECT_EQ(Ns(object["first_compute_start_us"]), rank.first_compute_start);
      EXPECT_EQ(Ns(object["last_compute_end_us"]), rank.last_compute_end);
      EXPECT_EQ(Ns(object["compute_us"]), rank.split.compute);
      EXPECT_EQ(Ns(object["idle_us"]), rank.split.idle);
      EXPECT_EQ(Ns(object["fill_us"]), rank.split.fill);
      EXPECT_EQ(Ns(object["drain_us"]), rank.split.drain);
      EXPECT_EQ(Ns(object["stall_us"]), rank.split.stall);
      EXPECT_EQ(Ns(object["comm_wait_us"]), rank.split.comm_wait);
      EXPECT_EQ(Ns(object["empty_us"]), rank.split.empty);
      idle_by_rank[r] += rank.split.idle;
      drain_by_rank[r] += rank.split.drain;
      ++r;
    }
    EXPECT_EQ(r, 3u);
    ++i;
  }
  EXPECT_EQ(i, 3u);

  size_t r = 0;
  for (od::value value : root["rank_stats"].get_array()) {
    od::object object = value.get_object();
    EXPECT_EQ(Int(object["rank"]), static_cast<int64_t>(r));
    EXPECT_EQ(Int(object["stage"]), r == 2 ? 0 : static_cast<int64_t>(r) + 1);
    EXPECT_EQ(Int(object["peak_allocated_bytes"]), truth.memory[r].peak_allocated_bytes);
    EXPECT_EQ(Int(object["peak_reserved_bytes"]), truth.memory[r].peak_reserved_bytes);
    EXPECT_EQ(Ns(object["idle_us"]), idle_by_rank[r]);
    EXPECT_EQ(Ns(object["drain_us"]), drain_by_rank[r]);
    ++r;
  }
  EXPECT_EQ(r, 3u);

  s = 0;
  for (od::value value : root["stages"].get_array()) {
    const StageTruth& stage = truth.per_stage[s];
    od::object object = value.get_object();
    EXPECT_EQ(Int(object["stage"]), static_cast<int64_t>(s));
    EXPECT_EQ(Int(object["rank"]), config.stage_to_rank[s]);
    ExpectOpStats(object["forward"], stage.forward);
    ExpectOpStats(object["backward"], stage.backward);
    ExpectOpStats(object["weight_grad"], stage.weight_grad);
    EXPECT_DOUBLE_EQ(Double(object["mean_total_us"]) * 1000.0, stage.mean_total_ns);
    ++s;
  }
  EXPECT_EQ(s, 3u);
  // Stage 2's forward is 0.5 ms longer than the others' at the same backward
  // and W.
  EXPECT_EQ(Int(root["slowest_stage"]), 2);
}

TEST(TruthJsonTest, EmptyOptionalListsAreWrittenInFull) {
  Config config = testing::IdealConfig(Schedule::k1F1B, 2, 2, 100, 200);
  absl::StatusOr<Simulation> simulation = Simulate(config);
  ASSERT_TRUE(simulation.ok()) << simulation.status();
  absl::StatusOr<std::string> text = TruthJson(config, simulation->truth);
  ASSERT_TRUE(text.ok()) << text.status();
  od::parser parser;
  simdjson::padded_string json(*text);
  od::document doc = parser.iterate(json);
  od::object echo = doc["config"].get_object();
  EXPECT_TRUE(bool(echo["link"]["gbps"].is_null()));  // IdealConfig: infinitely fast
  std::vector<TimeNs> offsets;
  for (od::value offset : echo["clock_offsets_us"].get_array()) offsets.push_back(Ns(offset));
  EXPECT_EQ(offsets, (std::vector<TimeNs>{0, 0}));
  EXPECT_EQ(String(echo["annotations"]), "none");
}

}  // namespace
}  // namespace bubblescope::sim
