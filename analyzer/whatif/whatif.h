// What-if: the iteration time, bubble and peak memory per stage a measured pipeline would have
// under another number of microbatches, schedule or virtual stages, predicted with the schedule
// simulator fed from the measurement, without writing a trace (docs/whatif.md).
//
// The measured job, as the simulator sees it:
// - each stage's mean forward, backward and weight-gradient time per microbatch over all of its
//   rank's chunks (schedule_inference::StageFigures; a stage's chunks share a rank's time);
// - each measured link's median transfer time (link_stats::Link), as a fixed cost per message
//   (a neighbour link no transfer measured, such as an interleaved job's wrap-around from a 1F1B
//   measurement, costs the median of the measured ones);
// - batched transfers as Megatron-LM batches them in 1F1B and interleaved schedules when the
//   measured job's were batched (Model::batched_p2p);
// - an iteration-end all-reduce over the pipeline (the gradient-norm reduction, taken as free),
//   no launch gaps and no optimizer step (host time the trace shows is not modelled: the baseline
//   prediction of the measured configuration against the measured iteration shows how much that
//   leaves).
// Candidates change the shape: m, the schedule, v. With `same_global_batch` a candidate's m
// splits the same samples into more (or fewer) microbatches: per-microbatch compute,
// activation memory and transfer times (taken as bandwidth-bound) scale by m / m'. A zero-bubble
// candidate from a job with a whole backward assumes its weight-gradient half: B and W each half of
// the measured backward (said in a note).
//
// Memory per stage: the floor each rank never goes below (weights, gradients, optimizer state:
// its lowest allocated sample) plus activations per in-flight microbatch chunk, which the
// measured peak over the floor divided by the measured schedule's in-flight count gives (the
// simulator's count for that stage). A candidate's peak is the floor plus that activation times
// its own in-flight count (per chunk, an activation scales with 1/v and, with the same global
// batch, with m / m'). A candidate fits when its rise over the measured peak stays within the
// device memory the measured peak left free (reserved peak to device capacity). Without memory
// samples the memory figures are unknown, not zero.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "analysis/bubble.h"
#include "bubblescope/trace.h"
#include "crossrank/link_stats.h"
#include "pipeline/schedule_inference.h"
#include "schedule_engine/config.h"

namespace bubblescope::whatif {

// One stage of the measured job as the model sees it.
struct StageModel {
  int32_t rank = -1;
  // Mean time per microbatch over all of the rank's chunks, ns.
  double forward_ns = 0.0;
  double backward_ns = 0.0;
  double weight_grad_ns = 0.0;
  // Of backward_ns, the forward recomputed by activation checkpointing (0 without it).
  double recompute_ns = 0.0;
  // Memory, -1 when unknown: the lowest allocated sample (weights, gradients, optimizer state),
  // the highest, and the device memory the reserved peak left free.
  int64_t memory_floor_bytes = -1;
  int64_t memory_peak_bytes = -1;
  int64_t memory_headroom_bytes = -1;
  int32_t layers = 0;  // model layers on the stage; 0 when unknown
};

// A measured directed link between two stages: its median transfer time.
struct LinkCost {
  int32_t src_stage = 0;
  int32_t dst_stage = 0;
  TimeNs transfer_ns = 0;
};

// The measured job, everything a prediction reads: built from a trace's analysis (ModelOf) or
// read back from analyze's JSON report (report/whatif_model_json.h), so predictions need no trace.
struct Model {
  sim::Schedule schedule = sim::Schedule::k1F1B;
  int32_t p = 0;
  int32_t m = 0;
  int32_t v = 1;
  bool separate_weight_grad = false;  // the measured schedule runs W apart from B
  // A zero-bubble schedule with several chunks per rank, modelled as ZB-H1 (said in a note).
  bool multi_chunk_zero_bubble = false;
  // The measured job's transfers ran batched (torch.distributed.batch_isend_irecv, Megatron-LM's
  // default): the transfers a rank posts between two ops share one kernel, which ends when the
  // last of them completes, so they cost one transfer time together, not one each in turn.
  // Every candidate is simulated with the same batching.
  bool batched_p2p = false;
  std::vector<StageModel> stages;    // by stage
  std::vector<LinkCost> links;       // the measured ones
  TimeNs measured_iteration_ns = 0;  // median iteration window
  double measured_bubble_fraction = 0.0;
};

struct Candidate {
  sim::Schedule schedule = sim::Schedule::k1F1B;
  int32_t microbatches = 0;
  int32_t virtual_stages = 1;
  bool same_global_batch = false;
  // Layers per stage after a move (pipeline/layer_split.h); empty: as measured. Needs the
  // measured layers per stage (StageModel::layers).
  std::vector<int32_t> layers_per_stage;

  friend bool operator==(const Candidate&, const Candidate&) = default;
};

// "1f1b m=16 v=1", with " (same global batch)" and " layers 7,9,8,8" when they apply.
std::string CandidateLabel(const Candidate& candidate);

// The measured configuration as a candidate.
Candidate AsMeasured(const Model& model);

struct StageMemory {
  int32_t stage = 0;
  int32_t rank = -1;
  int64_t peak_allocated_bytes = -1;  // -1 when unknown
};

struct Prediction {
  Candidate candidate;
  TimeNs iteration_ns = 0;  // the iteration window, first to last device activity
  double bubble_fraction = 0.0;
  std::vector<StageMemory> memory;  // by stage; empty when the memory is unknown
  // The candidate's largest rise over a stage's measured peak is within that stage's headroom;
  // nullopt when memory or device capacity is unknown.
  std::optional<bool> fits_memory;
  // A stage's predicted peak passed kMaxMemoryBytes: memory is left empty and fits_memory false.
  bool memory_past_bound = false;
  std::string problem;  // why the candidate could not be predicted; empty when it was
};

struct Input {
  const Trace* trace = nullptr;
  const schedule_inference::Result* shape = nullptr;
  const bubble::Result* bubble = nullptr;
  const std::vector<link_stats::Link>* links = nullptr;
  std::vector<int32_t> layers_per_stage;  // by stage; empty when unknown
  // By stage: device time recomputing checkpointed forwards over the whole trace
  // (index::RankIndex::recompute_ns); empty when none.
  std::vector<TimeNs> recompute_ns;
  // Any of the pipeline's transfers shared a batch kernel with others (p2p_graph::P2pOp::batch).
  bool batched_p2p = false;
};

struct Result {
  // The measured configuration through the same model, against the measured figures.
  Prediction baseline;
  TimeNs measured_iteration_ns = 0;  // median iteration window
  double measured_bubble_fraction = 0.0;
  std::vector<Prediction> candidates;
  std::vector<std::string> notes;
};

// FailedPreconditionError when the measured job cannot be modelled (no shape, per-stage times
// unknown or unreliable).
absl::StatusOr<Model> ModelOf(const Input& input);

// InvalidArgumentError naming the field when a model (one read from a file) is not one a
// prediction can run on: p, m, v, stage and link counts, negative times.
absl::Status ValidateModel(const Model& model);

// The candidates worth trying when the user names none: m x2 and x4 (more samples per step);
// 1F1B <-> interleaved v=2
// (where m is a multiple of p); ZB-H1 for a one-chunk training schedule; and `rebalance`, a
// layer split (the best single move), when given. The measured configuration itself is never
// one.
std::vector<Candidate> DefaultCandidates(const Model& model,
                                         const std::vector<int32_t>& rebalance = {});

// The trade-off the pictures draw (docs/html-report.md, "What if"): m/2 (m even), m, 2m and 4m
// microbatches of the same samples under the measured schedule and, for a training job, 1f1b,
// interleaved v=2 and zb-h1; never the measured configuration itself (a result's baseline).
std::vector<Candidate> TradeoffCandidates(const Model& model);

// A candidate the simulator refuses carries its problem instead. Empty `candidates`: the
// defaults. FailedPreconditionError when the measured configuration itself cannot be simulated.
absl::StatusOr<Result> Analyze(const Model& model, const std::vector<Candidate>& candidates);

// The same job with one cause of delay removed, for predicting what fixing it saves:
// `stage` computing at the mean F, B and W over stages;
Model WithStageAtMean(Model model, int32_t stage);
// the link from `src_stage` to `dst_stage` taking `transfer_ns` per message;
Model WithLinkTransfer(Model model, int32_t src_stage, int32_t dst_stage, TimeNs transfer_ns);
// every transfer free (overlapped with compute, or on infinitely fast links);
Model WithFreeLinks(Model model);
// no activation recomputation: each backward without its recomputed forward.
Model WithoutRecompute(Model model);
// The same job with time the model leaves out put back: each stage's `gap_per_iteration_ns`
// (by stage; missing entries 0) spread over its ops in proportion to their length, as launch or
// Python gaps before each op stretch it. A stage's ops grow by its gap in total, so no path
// through the schedule grows by more than the gaps summed over stages.
Model WithHostGaps(Model model, const std::vector<TimeNs>& gap_per_iteration_ns);

// The iteration window and bubble of the model's measured configuration; FailedPrecondition
// when it cannot be simulated.
absl::StatusOr<Prediction> PredictAsMeasured(const Model& model);

}  // namespace bubblescope::whatif
