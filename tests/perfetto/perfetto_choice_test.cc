// The Perfetto overlay written as a stream and limited to chosen pipelines or ranks
// (perfetto/perfetto_overlay.h WriteOverlay, ChooseRanks): the sink never receives more than a
// buffer at once however large a rank's file is, the document it forms is the whole merged trace,
// a merged trace of one pipeline's ranks reads back as that pipeline with the same figures, and
// choices the job lacks are one-line errors.
#include <algorithm>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "job/job.h"
#include "loader/trace_loader.h"
#include "perfetto/perfetto_overlay.h"
#include "support/job_helpers.h"
#include "support/test_files.h"
#include "synth/simulated_set.h"
#include "synth/synthetic_job.h"

namespace bubblescope {
namespace {

using ::testing::ElementsAre;

struct Loaded {
  Trace trace;
  job::Result result;
};

Loaded Load(const std::string& path) {
  Loaded job;
  absl::StatusOr<Trace> trace = LoadTrace({path}, LoadOptions{});
  EXPECT_TRUE(trace.ok()) << trace.status();
  if (!trace.ok()) return job;
  job.trace = *std::move(trace);
  job.result = testing::AnalyzeJob(job.trace);
  return job;
}

// Two data-parallel copies of a 2-stage 1F1B pipeline on the CPU (torch), ranks laid out
// Megatron-style: pipeline 0 is ranks 0 and 2, pipeline 1 ranks 1 and 3.
const std::string kDpSet =
    std::string(BUBBLESCOPE_SOURCE_DIR) + "/sample_traces/torch_cpu/dp2_1f1b_p2_m4";

std::vector<int32_t> RankIds(const Trace& trace, const std::vector<size_t>& indices) {
  std::vector<int32_t> ids;
  for (size_t i : indices) ids.push_back(trace.ranks[i].rank);
  return ids;
}

std::vector<int32_t> Choose(const Loaded& job, const perfetto::OverlayChoice& choice) {
  absl::StatusOr<std::vector<size_t>> chosen = perfetto::ChooseRanks(job.trace, job.result, choice);
  EXPECT_TRUE(chosen.ok()) << chosen.status();
  return chosen.ok() ? RankIds(job.trace, *chosen) : std::vector<int32_t>{};
}

std::string ChoiceError(const Loaded& job, const perfetto::OverlayChoice& choice) {
  absl::StatusOr<std::vector<size_t>> chosen = perfetto::ChooseRanks(job.trace, job.result, choice);
  return chosen.ok() ? "no error" : std::string(chosen.status().message());
}

TEST(PerfettoChoiceTest, PipelinesAndRanksChooseTheirRanks) {
  const Loaded job = Load(kDpSet);
  ASSERT_EQ(job.result.pipelines.size(), 2u);
  using perfetto::IdRange;
  EXPECT_THAT(Choose(job, {}), ElementsAre(0, 1, 2, 3));
  EXPECT_THAT(Choose(job, {.pipelines = {IdRange{1, 1}}, .ranks = {}}), ElementsAre(1, 3));
  EXPECT_THAT(Choose(job, {.pipelines = {IdRange{0, 1}}, .ranks = {}}), ElementsAre(0, 1, 2, 3));
  EXPECT_THAT(Choose(job, {.pipelines = {}, .ranks = {IdRange{0, 1}, IdRange{3, 3}}}),
              ElementsAre(0, 1, 3));
  // Both: the ranks of pipeline 0 (0 and 2) among ranks 2-3.
  EXPECT_THAT(Choose(job, {.pipelines = {IdRange{0, 0}}, .ranks = {IdRange{2, 3}}}),
              ElementsAre(2));
}

TEST(PerfettoChoiceTest, ChoicesTheJobLacksAreOneLineErrors) {
  const Loaded job = Load(kDpSet);
  using perfetto::IdRange;
  EXPECT_EQ(ChoiceError(job, {.pipelines = {IdRange{0, 0}, IdRange{2, 5}}, .ranks = {}}),
            "no pipeline 2: the job has 2 (0-1)");
  EXPECT_EQ(ChoiceError(job, {.pipelines = {}, .ranks = {IdRange{2, 1000000000}}}),
            "no rank 4 in the job (its 4 ranks: 0-3)");
  EXPECT_EQ(ChoiceError(job, {.pipelines = {IdRange{1, 1}}, .ranks = {IdRange{0, 0}}}),
            "none of the chosen ranks is in a chosen pipeline: the merged trace would be empty");
}

TEST(PerfettoChoiceTest, OnePipelinesMergedTraceReadsBackAsThatPipeline) {
  const Loaded job = Load(kDpSet);
  ASSERT_EQ(job.result.pipelines.size(), 2u);
  absl::StatusOr<std::vector<size_t>> chosen = perfetto::ChooseRanks(
      job.trace, job.result, {.pipelines = {perfetto::IdRange{1, 1}}, .ranks = {}});
  ASSERT_TRUE(chosen.ok()) << chosen.status();
  std::string events;
  StringSink sink(&events);
  perfetto::OverlayCounts counts;
  absl::StatusOr<perfetto::MergedFrame> frame =
      perfetto::WriteOverlay(job.trace, job.result, *chosen, &sink, &counts);
  ASSERT_TRUE(frame.ok()) << frame.status();
  EXPECT_EQ(counts.ranks, 2);
  testing::TempDir dir;
  const Loaded back = Load(dir.Write("pipeline1.json", frame->head + events + frame->tail));
  ASSERT_EQ(back.trace.ranks.size(), 2u);
  EXPECT_EQ(back.trace.ranks[0].rank, 1);
  EXPECT_EQ(back.trace.ranks[1].rank, 3);
  ASSERT_EQ(back.result.pipelines.size(), 1u);
  const bubble::Result& alone = back.result.pipelines[0].bubble;
  const bubble::Result& in_job = job.result.pipelines[1].bubble;
  EXPECT_EQ(alone.bubble_fraction, in_job.bubble_fraction);
  EXPECT_EQ(alone.idle, in_job.idle);
  EXPECT_EQ(alone.capacity, in_job.capacity);
}

// Counts what reaches the sink: how often, and the most at once.
class ChunkSink : public ByteSink {
 public:
  absl::Status Append(std::string_view bytes) override {
    ++appends_;
    largest_ = std::max(largest_, bytes.size());
    text_.append(bytes.data(), bytes.size());
    return absl::OkStatus();
  }
  int appends_ = 0;
  size_t largest_ = 0;
  std::string text_;
};

TEST(PerfettoChoiceTest, EventsReachTheSinkABufferAtATime) {
  // Four ranks of several MiB of trace each.
  sim::Config config;
  config.schedule = sim::Schedule::k1F1B;
  config.stages = 4;
  config.microbatches = 48;
  config.iterations = 6;
  config.costs.assign(4, sim::StageCost{.forward = 1000, .backward = 2000, .weight_grad = 0});
  config.kernels_per_op = 4;
  absl::StatusOr<sim::Simulation> simulation = sim::Simulate(config);
  ASSERT_TRUE(simulation.ok()) << simulation.status();
  testing::TempDir dir;
  ASSERT_TRUE(sim::WriteSimulationSet(config, *simulation, dir.path() + "/set", {}).ok());
  const Loaded job = Load(dir.path() + "/set");
  ASSERT_EQ(job.trace.ranks.size(), 4u);

  ChunkSink sink;
  perfetto::OverlayCounts counts;
  absl::StatusOr<perfetto::MergedFrame> frame =
      perfetto::WriteOverlay(job.trace, job.result, {0, 1, 2, 3}, &sink, &counts);
  ASSERT_TRUE(frame.ok()) << frame.status();
  // More than 4 MiB of events, passed on in pieces of about 1 MiB (a buffer and the one event
  // that filled it), at least one per rank.
  EXPECT_GT(sink.text_.size(), size_t{4} << 20);
  EXPECT_LE(sink.largest_, (size_t{1} << 20) + 4096);
  EXPECT_GE(sink.appends_, static_cast<int>(sink.text_.size() >> 20));
  // Head, events and tail are the merged trace RenderOverlay gives whole.
  perfetto::OverlayCounts whole_counts;
  absl::StatusOr<std::string> whole = perfetto::RenderOverlay(job.trace, job.result, &whole_counts);
  ASSERT_TRUE(whole.ok()) << whole.status();
  EXPECT_TRUE(frame->head + sink.text_ + frame->tail == *whole);
  EXPECT_EQ(whole_counts.events, counts.events);
}

// A sink that fails stops the overlay at the end of the rank being written, with its error.
TEST(PerfettoChoiceTest, ASinkErrorStopsTheOverlay) {
  class FullDisk : public ByteSink {
   public:
    absl::Status Append(std::string_view) override {
      ++appends;
      return absl::UnavailableError("cannot write x: No space left on device");
    }
    int appends = 0;
  } sink;
  const Loaded job = Load(kDpSet);
  perfetto::OverlayCounts counts;
  absl::StatusOr<perfetto::MergedFrame> frame =
      perfetto::WriteOverlay(job.trace, job.result, {0, 1, 2, 3}, &sink, &counts);
  ASSERT_FALSE(frame.ok());
  EXPECT_EQ(frame.status().message(), "cannot write x: No space left on device");
  EXPECT_EQ(sink.appends, 1);
  EXPECT_EQ(counts.ranks, 1);
}

}  // namespace
}  // namespace bubblescope
