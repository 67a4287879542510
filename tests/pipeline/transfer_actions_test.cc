// Transfers named by the pipeline runtime: the names torch's _Action.__repr__ and
// dist.record_comm write, the ops each name covers on a real gloo run, and the peers they give a
// p = 3 job with two stages per rank, which records none (counts worked out from the schedules).
#include "pipeline/transfer_actions.h"

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <utility>

#include "gtest/gtest.h"
#include "index/rank_index.h"
#include "loader/trace_loader.h"
#include "support/job_helpers.h"

namespace bubblescope {
namespace {

using pipeline::NamedTransfer;
using pipeline::ParseTransferName;
using pipeline::TransferAction;

std::tuple<TransferAction, int32_t, int32_t> Fields(const NamedTransfer& named) {
  return {named.action, named.stage, named.microbatch};
}

TEST(TransferActionsTest, ParsesTheRuntimesActionsAndRecordedCommNames) {
  EXPECT_EQ(Fields(*ParseTransferName("PP:3SEND_F1")),
            std::make_tuple(TransferAction::kSendForward, 3, 1));
  EXPECT_EQ(Fields(*ParseTransferName("PP:2RECV_F0")),
            std::make_tuple(TransferAction::kRecvForward, 2, 0));
  EXPECT_EQ(Fields(*ParseTransferName("PP:0SEND_B3")),
            std::make_tuple(TransferAction::kSendBackward, 0, 3));
  EXPECT_EQ(Fields(*ParseTransferName("PP:11RECV_B12")),
            std::make_tuple(TransferAction::kRecvBackward, 11, 12));
  EXPECT_EQ(Fields(*ParseTransferName("PP::fwd_send (stage 0)")),
            std::make_tuple(TransferAction::kSendForward, 0, -1));
  EXPECT_EQ(Fields(*ParseTransferName("PP::bwd_recv (stage 4)")),
            std::make_tuple(TransferAction::kRecvBackward, 4, -1));
  // Compute, waits, sharding, overlapped pairs and the transfers' plain ranges name no transfer.
  for (const char* name : {"PP:0F0", "PP:2B1", "PP:1WAIT_SEND_F0", "PP:0UNSHARD", "PP:0REDUCE_GRAD",
                           "PP:(0F3;3B1)OVERLAP_F_B", "PP:SEND_F0", "PP:1SEND_F", "PP:1SEND_F0x",
                           "PP:1SEND_X0", "PP:99999999999SEND_F0", "PP::fwd_send (stage x)",
                           "PP::fwd_send (stage 1", "PP::fwd_ack", "gloo:send", "nccl:recv", ""}) {
    EXPECT_FALSE(ParseTransferName(name).has_value()) << name;
  }
}

TEST(TransferActionsTest, PeerStageIsTheNeighbourEachDirectionReaches) {
  EXPECT_EQ(pipeline::PeerStage({TransferAction::kSendForward, 2, 0}), 3);
  EXPECT_EQ(pipeline::PeerStage({TransferAction::kRecvBackward, 2, 0}), 3);
  EXPECT_EQ(pipeline::PeerStage({TransferAction::kRecvForward, 2, 0}), 1);
  EXPECT_EQ(pipeline::PeerStage({TransferAction::kSendBackward, 2, 0}), 1);
  EXPECT_EQ(pipeline::PeerStage({TransferAction::kRecvForward, 0, 0}), -1);
  EXPECT_EQ(pipeline::PeerStage({TransferAction::kSendForward, 2147483647, 0}), -1);
  EXPECT_EQ(Fields(*ParseTransferName("PP:2147483647SEND_F0")),
            std::make_tuple(TransferAction::kSendForward, 2147483647, 0));
}

absl::StatusOr<Trace> LoadRun(const std::string& run) {
  LoadOptions options;
  options.jobs = 2;
  return LoadTrace({std::string(BUBBLESCOPE_SOURCE_DIR) + "/sample_traces/torch_cpu/" + run},
                   options);
}

// ZBV with p = 3, m = 3 places stages 0..5 on ranks 0,1,2,2,1,0. Rank 1 runs stages 1 and 4; in
// each of the 2 profiled steps each of them receives and sends 3 activations and 3 gradients.
TEST(TransferActionsTest, EveryGlooTransferOfARealRunHasItsAction) {
  absl::StatusOr<Trace> trace = LoadRun("zbv_p3_v2_m3");
  ASSERT_TRUE(trace.ok()) << trace.status();
  ASSERT_EQ(trace->ranks.size(), 3u);
  const Rank& rank = trace->ranks[1];
  ASSERT_EQ(rank.rank, 1);
  const index::RankIndex rank_index = index::BuildRank(rank);
  int64_t p2p_ops = 0;
  for (const index::DeviceOp& op : rank_index.ops) p2p_ops += op.is_p2p() && !op.in_optimizer;
  const std::vector<pipeline::LabelledTransfer> labelled =
      pipeline::LabelTransfers(rank, rank_index);
  EXPECT_EQ(p2p_ops, 48);
  ASSERT_EQ(labelled.size(), 48u);
  std::map<std::pair<int32_t, TransferAction>, std::map<int32_t, int32_t>> microbatches;
  for (const pipeline::LabelledTransfer& transfer : labelled) {
    const index::DeviceOp& op = rank_index.ops[transfer.op];
    const bool send = transfer.transfer.action == TransferAction::kSendForward ||
                      transfer.transfer.action == TransferAction::kSendBackward;
    EXPECT_EQ(op.is_send(), send);
    const NamedTransfer& named = transfer.transfer;
    ++microbatches[{named.stage, named.action}][named.microbatch];
  }
  ASSERT_EQ(microbatches.size(), 8u);  // 2 stages x 4 actions
  for (const auto& [key, by_microbatch] : microbatches) {
    EXPECT_TRUE(key.first == 1 || key.first == 4) << key.first;
    ASSERT_EQ(by_microbatch.size(), 3u);
    for (const auto& [microbatch, count] : by_microbatch) EXPECT_EQ(count, 2) << microbatch;
  }
}

struct ExpectedLink {
  int32_t src;
  int32_t dst;
  int64_t transfers;
};

void ExpectLinks(const job::Pipeline& pipeline, const std::vector<ExpectedLink>& expected) {
  std::map<std::pair<int32_t, int32_t>, int64_t> measured;
  for (const auto& link : pipeline.crossrank.links) measured[{link.src, link.dst}] = link.transfers;
  std::map<std::pair<int32_t, int32_t>, int64_t> wanted;
  for (const ExpectedLink& link : expected) wanted[{link.src, link.dst}] = link.transfers;
  EXPECT_EQ(measured, wanted);
}

void ExpectEveryPeerFromActions(const job::Pipeline& pipeline, int64_t p2p_ops) {
  const auto& by_source = pipeline.crossrank.pipeline.peers_by_source;
  EXPECT_EQ(by_source[static_cast<size_t>(p2p_graph::PeerSource::kPpAction)], p2p_ops);
  EXPECT_EQ(by_source[static_cast<size_t>(p2p_graph::PeerSource::kInferred)], 0);
  EXPECT_EQ(by_source[static_cast<size_t>(p2p_graph::PeerSource::kUnknown)], 0);
  EXPECT_TRUE(pipeline.crossrank.unmatched.empty());
  for (const findings::Finding& finding : pipeline.findings.findings) {
    EXPECT_NE(finding.kind, findings::Kind::kUnmatchedP2p) << finding.message;
  }
}

// Each boundary between stages s and s+1 on different ranks carries 3 activations forward and 3
// gradients back per step, 6 each over the 2 steps. In the V placement stage 4 (rank 1) feeds
// stage 5 (rank 0) and rank 2 only ever talks to rank 1: guessing neighbours by rank order gave
// links 2->0 and 0->2, a wrap-around and unmatched transfers on every edge.
TEST(TransferActionsTest, VPlacementPeersComeFromTheActions) {
  absl::StatusOr<Trace> trace = LoadRun("zbv_p3_v2_m3");
  ASSERT_TRUE(trace.ok()) << trace.status();
  const job::Result job = testing::AnalyzeJob(*trace);
  ASSERT_EQ(job.pipelines.size(), 1u);
  const job::Pipeline& pipeline = job.pipelines[0];
  EXPECT_EQ(pipeline.crossrank.pipeline.order.virtual_stage_ranks,
            (std::vector<int32_t>{0, 1, 2, 2, 1, 0}));
  // 0->1: stage 0's activations and stage 5's gradients; 1->0 the reverse; likewise 1<->2.
  ExpectLinks(pipeline, {{0, 1, 12}, {1, 0, 12}, {1, 2, 12}, {2, 1, 12}});
  EXPECT_FALSE(pipeline.crossrank.pipeline.interleaved);
  ExpectEveryPeerFromActions(pipeline, 24 + 48 + 24);
  // Stage order and family are read from the stage numbers; peers from the names, a step away.
  using inference_evidence::Strength;
  EXPECT_EQ(pipeline.evidence.stage_order.source, "annotations");
  EXPECT_EQ(pipeline.evidence.stage_order.strength, Strength::kRead);
  EXPECT_EQ(pipeline.evidence.peers.source, "pp_action");
  EXPECT_EQ(pipeline.evidence.peers.strength, Strength::kStrong);
  EXPECT_EQ(pipeline.evidence.schedule_family.strength, Strength::kRead);
}

// torch's Schedule1F1B writes no action ranges: its gloo transfers keep the guessed peers, and
// its stage order the transfers' timing, both reported as weak.
TEST(TransferActionsTest, WithoutActionsPeersStayAGuess) {
  absl::StatusOr<Trace> trace = LoadRun("1f1b_p4_m8");
  ASSERT_TRUE(trace.ok()) << trace.status();
  const job::Result job = testing::AnalyzeJob(*trace);
  ASSERT_EQ(job.pipelines.size(), 1u);
  const job::Pipeline& pipeline = job.pipelines[0];
  // 2 steps x 8 microbatches: 32 transfers on each end stage, 64 on each middle one.
  const auto& by_source = pipeline.crossrank.pipeline.peers_by_source;
  EXPECT_EQ(by_source[static_cast<size_t>(p2p_graph::PeerSource::kInferred)], 32 + 64 + 64 + 32);
  EXPECT_EQ(by_source[static_cast<size_t>(p2p_graph::PeerSource::kPpAction)], 0);
  using inference_evidence::Strength;
  EXPECT_EQ(pipeline.evidence.peers.source, "inferred");
  EXPECT_EQ(pipeline.evidence.peers.strength, Strength::kWeak);
  EXPECT_EQ(pipeline.evidence.stage_order.source, "transfer_timing");
  EXPECT_EQ(pipeline.evidence.stage_order.strength, Strength::kWeak);
}

// With two ranks each transfer's peer is the other rank: no guess, though none is recorded.
TEST(TransferActionsTest, TwoRanksNeedNoGuessForPeers) {
  absl::StatusOr<Trace> trace = LoadRun("gpipe_p2_m4");
  ASSERT_TRUE(trace.ok()) << trace.status();
  const job::Result job = testing::AnalyzeJob(*trace);
  ASSERT_EQ(job.pipelines.size(), 1u);
  EXPECT_EQ(job.pipelines[0].evidence.peers.source, "only_neighbour");
  EXPECT_EQ(job.pipelines[0].evidence.peers.strength, inference_evidence::Strength::kStrong);
}

// Round-robin placement 0,1,2,0,1,2: the boundary 2->3 wraps from rank 2 to rank 0.
TEST(TransferActionsTest, InterleavedPeersIncludeTheWrapAround) {
  absl::StatusOr<Trace> trace = LoadRun("interleaved_p3_v2_m3_memory");
  ASSERT_TRUE(trace.ok()) << trace.status();
  const job::Result job = testing::AnalyzeJob(*trace);
  ASSERT_EQ(job.pipelines.size(), 1u);
  const job::Pipeline& pipeline = job.pipelines[0];
  // 0->1 and 1->2 carry two boundaries each (stages 0->1 and 3->4, 1->2 and 4->5), 2->0 one.
  ExpectLinks(pipeline, {{0, 1, 12}, {1, 2, 12}, {2, 0, 6}, {1, 0, 12}, {2, 1, 12}, {0, 2, 6}});
  EXPECT_TRUE(pipeline.crossrank.pipeline.interleaved);
  ExpectEveryPeerFromActions(pipeline, 36 + 48 + 36);
}

}  // namespace
}  // namespace bubblescope
