// The program fit (pipeline/program_fit.h): ops placed between a rank's transfers by the
// schedule's program, on hand-built timelines written out op by op, and on simulated jobs whose
// kernel names do not tell forward from backward (one generic name; backward launched from
// another thread; only one kernel of each backward named so), against the simulator's truth.
#include "pipeline/program_fit.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "pipeline/schedule_inference.h"
#include "pipeline/sim_schedule.h"
#include "support/job_helpers.h"
#include "synth/synthetic_job.h"

namespace bubblescope {
namespace {

using pipeline::FitEvidence;
using pipeline::IssuedItem;
using pipeline::IssuedTimeline;
using pipeline::ItemKind;
using pipeline::OpType;
using pipeline::PhaseHint;
using ::testing::Contains;
using ::testing::HasSubstr;

// What one compute op of a hand-built rank launches: kernel names (one item each), each lasting
// `item_ns`, with `hint` on every item.
struct OpKernels {
  std::vector<std::string> names;
  TimeNs item_ns = 0;
  PhaseHint hint = PhaseHint::kNone;
};

// The space-separated words of `text`.
std::vector<std::string> Words(std::string_view text) {
  std::vector<std::string> words;
  size_t begin = 0;
  while (begin < text.size()) {
    size_t end = text.find(' ', begin);
    if (end == std::string_view::npos) end = text.size();
    if (end > begin) words.emplace_back(text.substr(begin, end - begin));
    begin = end + 1;
  }
  return words;
}

// A rank written as tokens in issue order: "F" / "B" (one op's kernels), "s<rank>" / "r<rank>"
// (a send to / receive from that rank; "s" / "r" alone: no peer recorded).
IssuedTimeline HandRank(int32_t rank, std::string_view tokens, const OpKernels& forward,
                        const OpKernels& backward, NamePool* names) {
  IssuedTimeline timeline;
  timeline.rank = rank;
  timeline.names = names;
  TimeNs now = 1000;
  for (const std::string& token : Words(tokens)) {
    if (token == "F" || token == "B") {
      const OpKernels& op = token == "F" ? forward : backward;
      for (const std::string& name : op.names) {
        IssuedItem item;
        item.kind = ItemKind::kCompute;
        item.hint = op.hint;
        item.name = names->Intern(name);
        item.issue = item.start = now;
        item.end = now + op.item_ns;
        now = item.end + 1;
        timeline.items.push_back(item);
      }
      continue;
    }
    IssuedItem item;
    item.kind = token[0] == 's' ? ItemKind::kSend : ItemKind::kRecv;
    item.peer = token.size() > 1 ? std::stoi(token.substr(1)) : -1;
    item.issue = item.start = now;
    item.end = now + 5;
    now = item.end + 1;
    timeline.items.push_back(item);
  }
  return timeline;
}

// 1F1B, p = 3 on ranks 10, 11, 12, m = 4, written out from the schedule as Megatron-LM issues it:
// stage 0 runs F0 F1 F2 B0 F3 B1 B2 B3 (its backward B0 and forward F3 share a block: no
// transfer between them), stage 1 F0 F1 B0 F2 B1 F3 B2 B3 (every op alone), stage 2 F0 B0 F1 B1
// F2 B2 F3 B3 (each forward shares its block with its backward).
constexpr std::string_view kStage0 = "F s11 F s11 F s11 r11 B F s11 r11 B r11 B r11 B";
constexpr std::string_view kStage1 =
    "r10 F s12 r10 F s12 r12 B s10 r10 F s12 r12 B s10 r10 F s12 r12 B s10 r12 B s10";
constexpr std::string_view kStage2 = "r11 F B s11 r11 F B s11 r11 F B s11 r11 F B s11";

// The same tokens with every peer left out.
std::string WithoutPeers(std::string_view tokens) {
  std::string out;
  for (const std::string& token : Words(tokens)) {
    absl::StrAppend(&out, out.empty() ? "" : " ", token.substr(0, 1));
  }
  return out;
}

schedule_inference::Result Shape1F1B(int32_t p, int32_t m) {
  schedule_inference::Result shape;
  shape.p = p;
  shape.m = m;
  shape.v = 1;
  shape.family = schedule_inference::ScheduleFamily::k1F1B;
  return shape;
}

pipeline::ProgramFit Fit(const std::vector<IssuedTimeline>& timelines) {
  const std::optional<std::vector<std::vector<sim::Op>>> programs =
      pipeline::StagePrograms(Shape1F1B(3, 4), 1 << 20);
  EXPECT_TRUE(programs.has_value());
  return pipeline::FitProgram(
      {.timelines = &timelines, .stage_order = {10, 11, 12}, .v = 1, .programs = &*programs});
}

// Per rank: (forward count, backward count, forward compute, backward compute), every op of a
// type with the same compute or -1.
struct RankOps {
  int64_t forwards = 0;
  int64_t backwards = 0;
  TimeNs forward_ns = 0;
  TimeNs backward_ns = 0;
};

RankOps OpsOf(const pipeline::ProgramFit& fit, int32_t rank) {
  RankOps out;
  for (const pipeline::PipelineOp& op : fit.ops) {
    if (op.rank != rank) continue;
    const bool forward = op.type == OpType::kForward;
    (forward ? out.forwards : out.backwards) += 1;
    TimeNs& seen = forward ? out.forward_ns : out.backward_ns;
    seen = (seen == 0 || seen == op.compute_ns) ? op.compute_ns : -1;
  }
  return out;
}

// The rank's fitted ops: 4 forwards and 4 backwards (m = 4) of the given compute.
void ExpectRankOps(const pipeline::ProgramFit& fit, int32_t rank, TimeNs forward_ns,
                   TimeNs backward_ns) {
  SCOPED_TRACE(absl::StrCat("rank ", rank));
  const RankOps got = OpsOf(fit, rank);
  EXPECT_EQ(got.forwards, 4);
  EXPECT_EQ(got.backwards, 4);
  EXPECT_EQ(got.forward_ns, forward_ns);
  EXPECT_EQ(got.backward_ns, backward_ns);
}

// A forward is 2 kernels of 10 ns, a backward 3 of 20 ns, all named alike and without hints;
// stage 1's are 15 and 30 ns. Compute of one op: the items' union, gaps left out.
struct HandJob {
  NamePool names;
  std::vector<IssuedTimeline> timelines;
  // Stage 2 launches `last_forward` and `last_backward`.
  HandJob(bool peers, const OpKernels& last_forward, const OpKernels& last_backward) {
    const OpKernels forward{{"gemm", "gemm"}, 10};
    const OpKernels backward{{"gemm", "gemm", "gemm"}, 20};
    const OpKernels slow_forward{{"gemm", "gemm"}, 15};
    const OpKernels slow_backward{{"gemm", "gemm", "gemm"}, 30};
    auto tokens = [&](std::string_view t) { return peers ? std::string(t) : WithoutPeers(t); };
    timelines.push_back(HandRank(10, tokens(kStage0), forward, backward, &names));
    timelines.push_back(HandRank(11, tokens(kStage1), slow_forward, slow_backward, &names));
    timelines.push_back(HandRank(12, tokens(kStage2), last_forward, last_backward, &names));
  }
  // Stage 2's kernels all named `last_name`, as many and as long as stage 0's.
  explicit HandJob(bool peers, const std::string& last_name = "gemm")
      : HandJob(peers, OpKernels{{last_name, last_name}, 10},
                OpKernels{{last_name, last_name, last_name}, 20}) {}
};

TEST(ProgramFitTest, TransfersPlaceEveryOpAndRepeatedKernelsCutSharedBlocks) {
  for (bool peers : {true, false}) {
    SCOPED_TRACE(peers ? "with peers" : "without peers");
    HandJob job(peers);
    const pipeline::ProgramFit fit = Fit(job.timelines);
    EXPECT_TRUE(fit.summary.reference_fitted);
    EXPECT_EQ(fit.summary.steps, 1);
    EXPECT_EQ(fit.summary.steps_fitted, 1);
    EXPECT_EQ(fit.summary.program_ops, 24);
    EXPECT_EQ(fit.summary.placed, 24);
    EXPECT_EQ(fit.summary.weak, 0);
    // Alone in a block: stage 0's F0-F2 and B1-B3, all 8 of stage 1's. Stage 0's B0 / F3 block
    // is cut after its own lone backwards' 3 kernels; stage 2 has no lone op, and each of its
    // blocks is cut after the 2 kernels stage 0's and 1's lone forwards run.
    EXPECT_EQ(fit.summary.by_evidence[static_cast<size_t>(FitEvidence::kTransfers)], 14);
    EXPECT_EQ(fit.summary.by_evidence[static_cast<size_t>(FitEvidence::kOwnNames)], 2);
    EXPECT_EQ(fit.summary.by_evidence[static_cast<size_t>(FitEvidence::kOtherNames)], 8);
    // 2 kernels of 10 ns with a 1 ns gap: 20 ns of compute; 3 of 20 ns: 60.
    ExpectRankOps(fit, 10, 20, 60);
    ExpectRankOps(fit, 11, 30, 90);
    ExpectRankOps(fit, 12, 20, 60);
  }
}

TEST(ProgramFitTest, ACutNothingConfirmsIsWeak) {
  // Stage 2's kernels are its own (no other stage runs them) and carry no hint: its shared
  // blocks are cut halfway (2 of 5 items to the forward), a guess for all 8 of its ops.
  HandJob job(true, "last_stage_gemm");
  const pipeline::ProgramFit fit = Fit(job.timelines);
  EXPECT_EQ(fit.summary.placed, 24);
  EXPECT_EQ(fit.summary.weak, 8);
  EXPECT_EQ(fit.summary.by_evidence[static_cast<size_t>(FitEvidence::kWeak)], 8);
}

TEST(ProgramFitTest, PhaseHintsCutWhereNamesCannot) {
  // As above, but stage 2's backward kernels are launched from the autograd engine: the hint
  // runs follow F then B exactly.
  HandJob job(true, OpKernels{{"own", "own"}, 10},
              OpKernels{{"own", "own", "own"}, 20, PhaseHint::kBackward});
  const pipeline::ProgramFit fit = Fit(job.timelines);
  EXPECT_EQ(fit.summary.weak, 0);
  EXPECT_EQ(fit.summary.by_evidence[static_cast<size_t>(FitEvidence::kPhaseHints)], 8);
  ExpectRankOps(fit, 12, 20, 60);
}

TEST(ProgramFitTest, ABlockWithFewerKernelsThanOpsGivesOpsWithoutCompute) {
  // Stage 2's backwards launch nothing: each of its blocks holds one forward kernel for two
  // ops. Every op is still counted (the program says it ran), the backwards with no compute, and
  // the cuts are weak.
  HandJob job(true, OpKernels{{"own"}, 10}, OpKernels{{}, 20});
  const pipeline::ProgramFit fit = Fit(job.timelines);
  EXPECT_EQ(fit.summary.placed, 24);
  EXPECT_EQ(fit.summary.weak, 8);
  ExpectRankOps(fit, 12, 10, 0);
}

TEST(ProgramFitTest, TransfersThatDoNotMatchTheProgramFitNothing) {
  // Stage 1 lost its last send: its step no longer fits, and with it the only step.
  HandJob job(true);
  IssuedTimeline& middle = job.timelines[1];
  middle.items.pop_back();
  const pipeline::ProgramFit fit = Fit(job.timelines);
  EXPECT_FALSE(fit.summary.reference_fitted);
  EXPECT_EQ(fit.summary.steps_fitted, 0);
  EXPECT_EQ(fit.summary.program_ops, 24);
  EXPECT_EQ(fit.summary.placed, 0);
  EXPECT_TRUE(fit.ops.empty());
  EXPECT_THAT(
      fit.notes,
      Contains(HasSubstr("rank 11 step 0: 15 transfers where the program's 8 ops make 16")));
  // As many transfers, but the last a receive where the program sends.
  HandJob turned(true);
  turned.timelines[1].items.back().kind = ItemKind::kRecv;
  const pipeline::ProgramFit turned_fit = Fit(turned.timelines);
  EXPECT_FALSE(turned_fit.summary.reference_fitted);
  EXPECT_THAT(turned_fit.notes, Contains(HasSubstr("rank 11 step 0: fewer sends")));
  // A transfer to a rank the program does not expect there: a send to the last stage from the
  // first (p = 3 has none).
  HandJob extra(true);
  extra.timelines[0].items.insert(extra.timelines[0].items.begin(),
                                  IssuedItem{.kind = ItemKind::kSend, .peer = 12});
  EXPECT_FALSE(Fit(extra.timelines).summary.reference_fitted);
}

// --- Simulated jobs whose names do not help -------------------------------------------------

enum class Names : uint8_t {
  kGeneric,          // one thread, every compute kernel the same name: no hint at all
  kTorchGeneric,     // backward from the autograd thread, every compute kernel the same name
  kOneBackwardName,  // one thread; forward "gemm_tn", backward "gemm_nn", "flash_bwd", "gemm_nt"
};

std::string_view NamesText(Names names) {
  switch (names) {
    case Names::kGeneric:
      return "generic";
    case Names::kTorchGeneric:
      return "torch generic";
    case Names::kOneBackwardName:
      return "one backward name";
  }
  return "";
}

// Renames the compute kernels of a one-thread simulated trace (names say stage and phase) as
// `names` says; kernels_per_op must be 3.
void Rename(Names names, Trace* trace) {
  for (Rank& rank : trace->ranks) {
    const NameId generic = rank.names.Intern("sm90_xmma_gemm_bf16bf16_bf16f32");
    const NameId forward = rank.names.Intern("ampere_bf16_s16816gemm_bf16_128x128_tn");
    const NameId backward[3] = {rank.names.Intern("ampere_bf16_s16816gemm_bf16_128x256_nn"),
                                rank.names.Intern("void flash_bwd_dq_dk_dv_loop_kernel<128>"),
                                rank.names.Intern("ampere_bf16_s16816gemm_bf16_256x128_nt")};
    for (Timeline& timeline : rank.timelines) {
      int64_t run = 0;
      NameId previous = kNoName;
      for (Interval& interval : timeline.intervals) {
        if (interval.kind != IntervalKind::kComputeKernel) continue;
        const std::string_view name = rank.name(interval.name);
        if (name.find("multi_tensor_apply") != std::string_view::npos) continue;  // optimizer
        run = interval.name == previous ? run + 1 : 0;
        previous = interval.name;
        if (names != Names::kOneBackwardName) {
          interval.name = generic;
        } else if (name.find("backward") != std::string_view::npos) {
          interval.name = backward[run % 3];
        } else {
          interval.name = forward;
        }
      }
    }
  }
}

struct SimCase {
  sim::Schedule schedule;
  int32_t p = 4;
  Names names = Names::kGeneric;
  sim::P2pStyle p2p = sim::P2pStyle::kPerOp;
  int32_t v = 0;  // chunks per rank; 0: 2 for interleaved, else 1
};

sim::Config SimConfig(const SimCase& c, int32_t heavy) {
  sim::Config config;
  config.schedule = c.schedule;
  config.stages = c.p;
  config.microbatches = 2 * c.p;
  config.virtual_stages = c.v > 0 ? c.v : c.schedule == sim::Schedule::kInterleaved1F1B ? 2 : 1;
  config.iterations = 2;
  config.costs.assign(static_cast<size_t>(c.p), sim::StageCost{4000, 8000, 0});
  config.costs[static_cast<size_t>(heavy)] = sim::StageCost{4800, 9600, 0};
  config.kernels_per_op = 3;
  config.activation_bytes = 1 << 16;
  config.link = sim::Link{100.0, 1500};
  config.launch_gap_ns = 30;
  config.optimizer_ns = 2500;
  config.jitter = 0.05;
  config.seed = static_cast<uint64_t>(c.p * 100 + heavy);
  config.p2p = c.p2p;
  config.launches =
      c.names == Names::kTorchGeneric ? sim::LaunchStyle::kTorch : sim::LaunchStyle::kOneThread;
  // Stage s on rank p-1-s: rank numbers say nothing of stages.
  for (int32_t stage = 0; stage < c.p; ++stage) config.stage_to_rank.push_back(c.p - 1 - stage);
  return config;
}

void CheckSimCase(const SimCase& c) {
  const int32_t heavy = (c.p / 2 + 1) % c.p;  // a middle stage: never the first or last
  SCOPED_TRACE(absl::StrCat(std::string(sim::ScheduleName(c.schedule)), " p=", c.p, " v=", c.v,
                            " names ", std::string(NamesText(c.names)), " p2p ",
                            std::string(sim::P2pStyleName(c.p2p)), " heavy ", heavy));
  const sim::Config config = SimConfig(c, heavy);
  absl::StatusOr<sim::Simulation> simulation = sim::Simulate(config);
  ASSERT_TRUE(simulation.ok()) << simulation.status();
  Rename(c.names, &simulation->trace);
  absl::StatusOr<schedule_inference::Result> result = testing::ShapeOf(simulation->trace);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->p, c.p);
  EXPECT_EQ(result->m, config.microbatches);
  EXPECT_EQ(result->v, config.virtual_stages);
  EXPECT_EQ(schedule_inference::ScheduleFamilyName(result->family), sim::ScheduleName(c.schedule));
  ASSERT_TRUE(result->op_fit.has_value());
  EXPECT_EQ(result->op_fit->placed, result->op_fit->program_ops);
  EXPECT_EQ(result->op_fit->weak, 0);
  EXPECT_TRUE(result->stage_counts_fit);
  const sim::Truth& truth = simulation->truth;
  ASSERT_EQ(result->stages.size(), truth.per_stage.size());
  for (size_t stage = 0; stage < truth.per_stage.size(); ++stage) {
    SCOPED_TRACE(absl::StrCat("stage ", stage));
    const sim::StageTruth& want = truth.per_stage[stage];
    const schedule_inference::StageFigures& got = result->stages[stage];
    // m per chunk per iteration.
    EXPECT_EQ(got.forward.count, int64_t{config.microbatches} * config.virtual_stages * 2);
    EXPECT_EQ(got.forward.count, want.forward.count);
    EXPECT_EQ(got.backward.count, want.backward.count);
    EXPECT_DOUBLE_EQ(got.forward.mean_ns, want.forward.mean_ns);
    EXPECT_DOUBLE_EQ(got.backward.mean_ns, want.backward.mean_ns);
  }
  EXPECT_EQ(truth.slowest_stage, heavy);
  EXPECT_EQ(result->slowest_stage, heavy);
}

TEST(ProgramFitSimTest, GpipeWithoutHelpfulNames) {
  for (int32_t p : {4, 6, 8}) {
    for (Names names : {Names::kGeneric, Names::kTorchGeneric, Names::kOneBackwardName}) {
      CheckSimCase({sim::Schedule::kGpipe, p, names});
    }
  }
}

TEST(ProgramFitSimTest, OneFOneBWithoutHelpfulNames) {
  for (int32_t p : {4, 6, 8}) {
    for (Names names : {Names::kGeneric, Names::kTorchGeneric, Names::kOneBackwardName}) {
      CheckSimCase({sim::Schedule::k1F1B, p, names});
    }
  }
}

TEST(ProgramFitSimTest, InterleavedWithoutHelpfulNames) {
  for (int32_t p : {4, 6, 8}) {
    for (Names names : {Names::kGeneric, Names::kTorchGeneric, Names::kOneBackwardName}) {
      CheckSimCase({sim::Schedule::kInterleaved1F1B, p, names});
    }
  }
}

// GPipe over v chunks per rank (torch's ScheduleLoopedBFS): the looped program fits the ranks'
// transfers and compute as the one-chunk programs do, wrap-around traffic giving v.
TEST(ProgramFitSimTest, LoopedGpipeWithoutHelpfulNames) {
  for (int32_t v : {2, 3}) {
    for (int32_t p : {4, 6}) {
      for (Names names : {Names::kGeneric, Names::kTorchGeneric, Names::kOneBackwardName}) {
        CheckSimCase({sim::Schedule::kGpipe, p, names, sim::P2pStyle::kPerOp, v});
      }
    }
  }
}

// Megatron-LM's batched p2p: one SendRecv kernel per batch_isend_irecv, its transfers known
// only from the c10d calls that queued them.
TEST(ProgramFitSimTest, BatchedP2pWithoutHelpfulNames) {
  for (sim::Schedule schedule : {sim::Schedule::k1F1B, sim::Schedule::kInterleaved1F1B}) {
    for (Names names : {Names::kGeneric, Names::kOneBackwardName}) {
      CheckSimCase({schedule, 6, names, sim::P2pStyle::kBatched});
    }
  }
}

// Zero-bubble without annotations reads as 1f1b (torch's W kernels look like any backward's,
// docs/trace-sources.md): the 1f1b program has no op for the W kernels, which the fit must not
// drop silently. They are counted, the times are a guess, and no stage is called slowest.
TEST(ProgramFitSimTest, WeightGradientKernelsNoOpTakesMakeTheFitAGuess) {
  SimCase c{sim::Schedule::kZeroBubbleH1, 4, Names::kTorchGeneric};
  sim::Config config = SimConfig(c, 2);
  config.costs.assign(4, sim::StageCost{4000, 4000, 3000});
  absl::StatusOr<sim::Simulation> simulation = sim::Simulate(config);
  ASSERT_TRUE(simulation.ok()) << simulation.status();
  Rename(c.names, &simulation->trace);
  absl::StatusOr<schedule_inference::Result> result = testing::ShapeOf(simulation->trace);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(schedule_inference::ScheduleFamilyName(result->family), "1f1b");
  ASSERT_TRUE(result->op_fit.has_value());
  EXPECT_TRUE(result->op_fit->used);
  EXPECT_GT(result->op_fit->hinted_left_out, 0);
  EXPECT_FALSE(result->stage_counts_fit);
  EXPECT_EQ(result->slowest_stage, -1);
  EXPECT_THAT(result->notes, Contains(HasSubstr("backward kernels fit no op of the 1f1b program")));
}

// The job on top: with the ops fitted, the slowest stage's effect and the what-if model are built
// (before, both were refused on per-stage counts that did not fit the schedule).
TEST(ProgramFitSimTest, TheJobBuildsTheImbalanceAndTheModelOnFittedOps) {
  const SimCase c{sim::Schedule::k1F1B, 6, Names::kOneBackwardName, sim::P2pStyle::kBatched};
  absl::StatusOr<sim::Simulation> simulation = sim::Simulate(SimConfig(c, 4));
  ASSERT_TRUE(simulation.ok()) << simulation.status();
  Rename(c.names, &simulation->trace);
  const job::Result job = testing::AnalyzeJob(simulation->trace);
  ASSERT_EQ(job.pipelines.size(), 1u);
  const job::Pipeline& pipeline = job.pipelines[0];
  ASSERT_TRUE(pipeline.shape.has_value());
  EXPECT_EQ(pipeline.shape->slowest_stage, 4);
  EXPECT_TRUE(pipeline.slowest_stage_effect.has_value());
  EXPECT_TRUE(pipeline.model.has_value());
  // Each rank's fitted ops of a step run in the program's order, so the schedule labels every
  // one with its microbatch: 6 stages, 12 microbatches, F and B, 2 iterations.
  EXPECT_EQ(pipeline.op_timeline.ops.size(), 6u * 12 * 2 * 2);
  EXPECT_EQ(pipeline.op_timeline.unlabelled, 0);
}

}  // namespace
}  // namespace bubblescope
