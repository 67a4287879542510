// Peers and stage order for traffic that records no peer: hand-built timelines whose answers
// are read off the schedule, and the real gloo 1F1B run, whose links must all pair up.
#include "pipeline/peer_inference.h"

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "loader/trace_loader.h"
#include "pipeline/p2p_structure.h"
#include "support/job_helpers.h"

namespace bubblescope {
namespace {

using pipeline::IssuedItem;
using pipeline::IssuedTimeline;
using pipeline::ItemKind;
using pipeline::PhaseHint;
using ::testing::ElementsAre;

// Builds a timeline from letters: 'f' forward compute, 'b' backward compute, 'w' weight-grad
// compute, 'x' unhinted bookkeeping (same as 'f' to the reader), 's' send, 'r' recv. Each item
// takes 10 ns; a transfer ends `transfer_ns` after it starts.
IssuedTimeline Timeline(int32_t rank, const std::string& letters, TimeNs offset = 0,
                        TimeNs transfer_ns = 10) {
  IssuedTimeline timeline;
  timeline.rank = rank;
  TimeNs t = offset;
  for (char letter : letters) {
    IssuedItem item;
    item.kind = letter == 's'   ? ItemKind::kSend
                : letter == 'r' ? ItemKind::kRecv
                                : ItemKind::kCompute;
    item.hint = letter == 'b'   ? PhaseHint::kBackward
                : letter == 'w' ? PhaseHint::kWeightGrad
                                : PhaseHint::kNone;
    item.issue = item.start = t;
    item.end = t + (item.kind == ItemKind::kCompute ? 10 : transfer_ns);
    t += 10;
    timeline.items.push_back(item);
  }
  return timeline;
}

// Stage 1 of 4 (ranks 7, 5, 9, 2) as torch's 1F1B issues it on gloo: the gradient send follows
// a backward and some bookkeeping, which is no forward op.
TEST(PeerInferenceTest, MiddleStagePairsByWhatEachTransferCarries) {
  const std::vector<int32_t> order = {7, 5, 9, 2};
  const IssuedTimeline timeline = Timeline(5, "xrfsrfsrbxsrfsrbsrbs");
  std::optional<std::vector<int32_t>> peers = peer_inference::InferPeers(timeline, 1, order, true);
  ASSERT_TRUE(peers.has_value());
  // r f s: activation in from 7, out to 9. r b x s: gradient in from 9, out to 7.
  EXPECT_THAT(*peers, ElementsAre(7, 9, 7, 9, 9, 7, 7, 9, 9, 7, 9, 7));
}

TEST(PeerInferenceTest, WeightGradsAndInterleavingWrapAround) {
  const std::vector<int32_t> order = {0, 1, 2};
  // Last stage of an interleaved job: its chunk-0 forward sends on to the first rank (wrap), its
  // backward of chunk 1 gets its gradient from there; W ops carry nothing.
  const IssuedTimeline last = Timeline(2, "rfsrbws");
  std::optional<std::vector<int32_t>> peers = peer_inference::InferPeers(last, 2, order, true);
  ASSERT_TRUE(peers.has_value());
  EXPECT_THAT(*peers, ElementsAre(1, 0, 0, 1));
}

TEST(PeerInferenceTest, ForwardOnlyTwoRanksAndMissingHints) {
  const std::vector<int32_t> order = {4, 3, 8};
  // No backward in the pipeline: receives come from the previous stage, sends go to the next.
  EXPECT_THAT(*peer_inference::InferPeers(Timeline(3, "rfsrfs"), 1, order, false),
              ElementsAre(4, 8, 4, 8));
  // Backward traffic but no phase hints on this rank: nothing can be said.
  EXPECT_FALSE(peer_inference::InferPeers(Timeline(3, "rfsrfs"), 1, order, true).has_value());
  // Two stages: the other rank, whatever the hints.
  EXPECT_THAT(*peer_inference::InferPeers(Timeline(3, "rfsrfs"), 1, {4, 3}, true),
              ElementsAre(4, 4, 4, 4));
  // A send with no op before it carries nothing known.
  EXPECT_THAT(*peer_inference::InferPeers(Timeline(3, "srbs"), 1, order, true),
              ElementsAre(-1, 8, 4));
}

// GPU ranks without peers on clocks up to 3 ms apart, far more than the traffic spans, so the
// first-receive order would follow the clocks. NCCL completes a send and its receive together, so
// each link's rhythm of completions shows on both ends whatever the offsets. Stage order
// 3 -> 1 -> 0 -> 2, forward only; each link has its own gaps between completions.
TEST(PeerInferenceTest, StageOrderFromCompletionGapsIgnoresClockOffsets) {
  const std::vector<int32_t> order = {3, 1, 0, 2};
  const std::vector<std::vector<TimeNs>> link_gaps = {{0, 30, 100}, {0, 55, 90}, {0, 20, 130}};
  const std::vector<TimeNs> link_base = {1000, 1500, 2100};                        // common clock
  const std::vector<TimeNs> clock_offset = {-1'000'000, 0, 2'000'000, 1'000'000};  // by stage
  auto item = [](ItemKind kind, TimeNs end) {
    IssuedItem out;
    out.kind = kind;
    out.issue = out.start = end - 5;
    out.end = end;
    return out;
  };
  std::vector<IssuedTimeline> by_stage(4);
  for (size_t stage = 0; stage < 4; ++stage) {
    by_stage[stage].rank = order[stage];
    for (size_t i = 0; i < 3; ++i) {
      if (stage > 0) {  // receive, then the forward that consumes it
        const TimeNs end = link_base[stage - 1] + link_gaps[stage - 1][i] + clock_offset[stage];
        by_stage[stage].items.push_back(item(ItemKind::kRecv, end));
        by_stage[stage].items.push_back(item(ItemKind::kCompute, end + 6));
      }
      if (stage < 3) {
        const TimeNs end = link_base[stage] + link_gaps[stage][i] + clock_offset[stage];
        by_stage[stage].items.push_back(item(ItemKind::kSend, end));
      }
    }
  }
  absl::StatusOr<std::vector<int32_t>> inferred =
      pipeline::InferStageOrder({by_stage[2], by_stage[0], by_stage[3], by_stage[1]});
  ASSERT_TRUE(inferred.ok()) << inferred.status();
  EXPECT_EQ(*inferred, order);
}

TEST(PeerInferenceTest, RealGloo1F1BRunPairsEveryTransfer) {
  LoadOptions options;
  options.jobs = 2;
  absl::StatusOr<Trace> trace = LoadTrace(
      {std::string(BUBBLESCOPE_SOURCE_DIR) + "/sample_traces/torch_cpu/1f1b_p4_m8"}, options);
  ASSERT_TRUE(trace.ok()) << trace.status();
  const job::Result job = testing::AnalyzeJob(*trace);
  ASSERT_EQ(job.pipelines.size(), 1u);
  const job::Pipeline& pipeline = job.pipelines[0];
  // Two profiled steps of 8 microbatches: 16 activations down and 16 gradients up each link.
  ASSERT_EQ(pipeline.crossrank.links.size(), 6u);
  for (const auto& link : pipeline.crossrank.links) {
    EXPECT_EQ(link.transfers, 16) << link.src << "->" << link.dst;
    EXPECT_EQ(std::abs(link.src - link.dst), 1);  // ranks 0..3 run stages 0..3
  }
  EXPECT_TRUE(pipeline.crossrank.unmatched.empty());
  for (const findings::Finding& finding : pipeline.findings.findings) {
    EXPECT_NE(finding.kind, findings::Kind::kUnmatchedP2p) << finding.message;
  }
}

}  // namespace
}  // namespace bubblescope
