#include "pipeline/program_fit.h"

#include <algorithm>
#include <cstddef>
#include <map>
#include <optional>
#include <set>
#include <string_view>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "pipeline/block_cuts.h"
#include "pipeline/segment_ops.h"
#include "pipeline/sim_schedule.h"

namespace bubblescope::pipeline {
namespace {

constexpr int32_t kNone = -1;
// Blocks an op placed by neither of its transfers is looked for in, after the op before it.
constexpr int32_t kMaxLookAhead = 64;

// The stage an op of the program receives its input from and sends its output to (kNone: none, or
// the same stage), with virtual stage c·p + s on stage s (round-robin, as inferred).
struct Neighbours {
  int32_t from = kNone;
  int32_t to = kNone;
};

Neighbours NeighboursOf(const sim::Op& op, int32_t stage, int32_t p, int32_t v) {
  const int32_t virtual_stage = op.chunk * p + stage;
  const int32_t last = p * v - 1;
  Neighbours n;
  if (op.type == sim::OpType::kForward) {
    if (virtual_stage > 0) n.from = (virtual_stage - 1) % p;
    if (virtual_stage < last) n.to = (virtual_stage + 1) % p;
  } else if (op.type == sim::OpType::kBackward) {
    if (virtual_stage < last) n.from = (virtual_stage + 1) % p;
    if (virtual_stage > 0) n.to = (virtual_stage - 1) % p;
  }
  if (n.from == stage) n.from = kNone;
  if (n.to == stage) n.to = kNone;
  return n;
}

// A transfer's matching key: with peers, its direction and peer stage; without, its direction.
int32_t KeyOf(bool send, int32_t peer_stage, bool with_peers, int32_t p) {
  return (send ? 1 : 0) * (with_peers ? p : 1) + (with_peers ? peer_stage : 0);
}

// One rank's step, with each program op placed in a block.
struct StepFit {
  int32_t step = 0;
  bool fits = false;
  std::vector<std::vector<size_t>> blocks;  // compute item indices between transfers
  std::vector<int32_t> op_block;            // per program op
  std::vector<bool> op_pinned;              // its own transfers place it
  std::vector<bool> op_hint_placed;         // not pinned, but placed where hints point
};

struct RankFit {
  int32_t stage = 0;
  const IssuedTimeline* timeline = nullptr;
  std::vector<StepFit> steps;
  std::string problem;  // of its first step that did not fit
};

// A step's compute cut into blocks by its pipeline transfers (transfer t ends block t; transfers
// to a peer outside the pipeline cut nothing), and the transfers by matching key, in order.
std::vector<std::vector<size_t>> CutIntoBlocks(
    const IssuedTimeline& timeline, const std::vector<size_t>& items,
    const absl::flat_hash_map<int32_t, int32_t>& stage_of_rank, int32_t stage, bool with_peers,
    StepFit* fit) {
  const int32_t p = static_cast<int32_t>(stage_of_rank.size());
  std::vector<std::vector<size_t>> by_key(static_cast<size_t>(2 * p));
  fit->blocks.assign(1, {});
  for (size_t index : items) {
    const IssuedItem& item = timeline.items[index];
    if (item.kind == ItemKind::kCompute) {
      fit->blocks.back().push_back(index);
      continue;
    }
    int32_t peer_stage = kNone;
    if (item.peer >= 0) {
      const auto found = stage_of_rank.find(item.peer);
      if (found == stage_of_rank.end() || found->second == stage) continue;
      peer_stage = found->second;
    }
    const int32_t key = KeyOf(item.kind == ItemKind::kSend, peer_stage, with_peers, p);
    by_key[static_cast<size_t>(key)].push_back(fit->blocks.size() - 1);  // transfer t ends block t
    fit->blocks.emplace_back();
  }
  return by_key;
}

// The blocks each op may run in as its own transfers bound them: after the receive of its input
// (`lo`) and up to the send of its output (`hi`), the program's transfers taken in order per key.
// Empty with `*problem` set when the step's transfers and the program's disagree.
struct OpBounds {
  std::vector<int32_t> lo;
  std::vector<int32_t> hi;
};
std::optional<OpBounds> BoundOpsByTransfers(const std::vector<sim::Op>& program,
                                            const std::vector<std::vector<size_t>>& by_key,
                                            int32_t stage, int32_t p, int32_t v, bool with_peers,
                                            int32_t last_block, std::string* problem) {
  const size_t n = program.size();
  OpBounds bounds{std::vector<int32_t>(n, 0), std::vector<int32_t>(n, last_block)};
  std::vector<size_t> cursor(by_key.size(), 0);
  auto take = [&](int32_t key, int32_t* transfer) {
    const std::vector<size_t>& list = by_key[static_cast<size_t>(key)];
    size_t& next = cursor[static_cast<size_t>(key)];
    if (next >= list.size()) return false;
    *transfer = static_cast<int32_t>(list[next++]);
    return true;
  };
  for (size_t k = 0; k < n; ++k) {
    const Neighbours neighbours = NeighboursOf(program[k], stage, p, v);
    int32_t transfer = 0;
    if (neighbours.from != kNone) {
      if (!take(KeyOf(false, neighbours.from, with_peers, p), &transfer)) {
        *problem = absl::StrCat("fewer receives than the program's ", n, " ops need");
        return std::nullopt;
      }
      bounds.lo[k] = transfer + 1;
    }
    if (neighbours.to != kNone) {
      if (!take(KeyOf(true, neighbours.to, with_peers, p), &transfer)) {
        *problem = absl::StrCat("fewer sends than the program's ", n, " ops need");
        return std::nullopt;
      }
      bounds.hi[k] = transfer;
    }
  }
  for (size_t key = 0; key < by_key.size(); ++key) {
    if (cursor[key] != by_key[key].size()) {
      *problem = "more transfers than the program's ops make";
      return std::nullopt;
    }
  }
  return bounds;
}

// Per op, the earliest and the latest block with compute it can run in, in program order: each
// op no earlier than the one before it and no later than the one after it.
OpBounds ReachableBlocks(const StepFit& fit, const OpBounds& bounds) {
  const int32_t last_block = static_cast<int32_t>(fit.blocks.size()) - 1;
  // The first block with compute at or after each block, and the last at or before it.
  const size_t blocks = fit.blocks.size();
  std::vector<int32_t> next_filled(blocks + 1, last_block + 1);
  std::vector<int32_t> previous_filled(blocks, -1);
  for (size_t b = blocks; b-- > 0;) {
    next_filled[b] = fit.blocks[b].empty() ? next_filled[b + 1] : static_cast<int32_t>(b);
  }
  for (size_t b = 0; b < blocks; ++b) {
    const int32_t before = b == 0 ? -1 : previous_filled[b - 1];
    previous_filled[b] = fit.blocks[b].empty() ? before : static_cast<int32_t>(b);
  }
  const size_t n = bounds.lo.size();
  OpBounds reachable{std::vector<int32_t>(n), std::vector<int32_t>(n)};
  int32_t bound = 0;
  for (size_t k = 0; k < n; ++k) {
    reachable.lo[k] = bound = next_filled[static_cast<size_t>(std::max(bounds.lo[k], bound))];
  }
  bound = last_block;
  for (size_t k = n; k-- > 0;) {
    const int32_t b = std::min(bounds.hi[k], bound);
    reachable.hi[k] = bound = b < 0 ? -1 : previous_filled[static_cast<size_t>(b)];
  }
  return reachable;
}

// Each op into one block of its reachable ones (fit->op_block, op_pinned, op_hint_placed); false
// with `*problem` set when an op has none.
bool PlaceOpsInBlocks(const IssuedTimeline& timeline, const std::vector<sim::Op>& program,
                      int32_t stage, int32_t p, int32_t v, const OpBounds& reachable, StepFit* fit,
                      std::string* problem) {
  const size_t n = program.size();
  const std::vector<int32_t>& earliest = reachable.lo;
  const std::vector<int32_t>& latest = reachable.hi;
  fit->op_block.assign(n, kNone);
  fit->op_pinned.assign(n, false);
  fit->op_hint_placed.assign(n, false);
  int32_t previous = 0;
  for (size_t k = 0; k < n; ++k) {
    const int32_t first = std::max(earliest[k], previous);
    if (first > latest[k]) {
      *problem = absl::StrCat("op ", k + 1, " of ", n, " has no compute between its transfers");
      return false;
    }
    // An op's compute runs right before the send of its output, else right after the receive of its
    // input; an op with neither follows the op before it, in the first block open to it whose phase
    // hints show an item of its type.
    const Neighbours neighbours = NeighboursOf(program[k], stage, p, v);
    int32_t block = first;
    fit->op_pinned[k] = true;
    if (neighbours.to != kNone) {
      block = latest[k];
    } else if (neighbours.from == kNone && first < latest[k]) {
      fit->op_pinned[k] = false;
      const OpType type = OpTypeOf(program[k].type);
      // A bounded look: the op follows the one before it closely.
      for (int32_t b = first; b <= std::min(latest[k], first + kMaxLookAhead); ++b) {
        const std::vector<size_t>& members = fit->blocks[static_cast<size_t>(b)];
        if (std::any_of(members.begin(), members.end(),
                        [&](size_t i) { return HintedType(timeline.items[i]) == type; })) {
          block = b;
          fit->op_hint_placed[k] = true;
          break;
        }
      }
    }
    fit->op_block[k] = previous = block;
  }
  return true;
}

// Places the program's ops of one step: `items` are the step's item indices in issue order.
void PlaceStep(const IssuedTimeline& timeline, const std::vector<size_t>& items,
               const std::vector<sim::Op>& program,
               const absl::flat_hash_map<int32_t, int32_t>& stage_of_rank, int32_t stage, int32_t v,
               bool with_peers, size_t program_transfers, StepFit* fit, std::string* problem) {
  const int32_t p = static_cast<int32_t>(stage_of_rank.size());
  const std::vector<std::vector<size_t>> by_key =
      CutIntoBlocks(timeline, items, stage_of_rank, stage, with_peers, fit);
  if (fit->blocks.size() - 1 != program_transfers) {
    // Checked before any work per program op, so a damaged trace's many short steps cost no more
    // than their items.
    *problem = absl::StrCat(fit->blocks.size() - 1, " transfers where the program's ",
                            program.size(), " ops make ", program_transfers);
    return;
  }
  const int32_t last_block = static_cast<int32_t>(fit->blocks.size()) - 1;
  const std::optional<OpBounds> bounds =
      BoundOpsByTransfers(program, by_key, stage, p, v, with_peers, last_block, problem);
  if (!bounds.has_value()) return;
  const OpBounds reachable = ReachableBlocks(*fit, *bounds);
  fit->fits = PlaceOpsInBlocks(timeline, program, stage, p, v, reachable, fit, problem);
}

// The ops of each block of a fitted step, as indices into the program.
std::vector<std::vector<size_t>> OpsByBlock(const StepFit& fit) {
  std::vector<std::vector<size_t>> by_block(fit.blocks.size());
  for (size_t k = 0; k < fit.op_block.size(); ++k) {
    by_block[static_cast<size_t>(fit.op_block[k])].push_back(k);
  }
  return by_block;
}

// One rank's steps, each op of its program placed in a block (step 1 of FitProgram); counts
// the program's ops tried into `out`.
RankFit FitRank(const IssuedTimeline& timeline, int32_t stage, const std::vector<sim::Op>& program,
                const absl::flat_hash_map<int32_t, int32_t>& stage_of_rank, int32_t v,
                ProgramFit* out) {
  const int32_t p = static_cast<int32_t>(stage_of_rank.size());
  RankFit rank;
  rank.stage = stage;
  rank.timeline = &timeline;
  // Peers are used when every pipeline transfer of the rank records one.
  bool with_peers = true;
  std::map<int32_t, std::vector<size_t>> step_items;
  for (size_t i = 0; i < timeline.items.size(); ++i) {
    const IssuedItem& item = timeline.items[i];
    step_items[item.step].push_back(i);
    if (item.kind != ItemKind::kCompute && item.peer < 0) with_peers = false;
  }
  size_t program_transfers = 0;
  for (const sim::Op& op : program) {
    const Neighbours neighbours = NeighboursOf(op, stage, p, v);
    program_transfers += (neighbours.from != kNone ? 1 : 0) + (neighbours.to != kNone ? 1 : 0);
  }
  for (const auto& [step, items] : step_items) {
    StepFit fit;
    fit.step = step;
    std::string problem;
    PlaceStep(timeline, items, program, stage_of_rank, stage, v, with_peers, program_transfers,
              &fit, &problem);
    out->summary.program_ops += static_cast<int64_t>(program.size());
    if (!fit.fits && rank.problem.empty()) {
      rank.problem = absl::StrCat("rank ", timeline.rank, " step ", step, ": ", problem);
    }
    rank.steps.push_back(std::move(fit));
  }
  return rank;
}

// The steps every rank of the pipeline fits, with each rank's first misfit noted and the step
// counts summed into `out`.
std::set<int32_t> StepsEveryRankFits(const std::vector<RankFit>& ranks, int32_t p,
                                     ProgramFit* out) {
  std::set<int32_t> all_steps;
  for (const RankFit& rank : ranks) {
    for (const StepFit& fit : rank.steps) all_steps.insert(fit.step);
  }
  std::set<int32_t> fitted = all_steps;
  for (const RankFit& rank : ranks) {
    std::set<int32_t> own;
    for (const StepFit& fit : rank.steps) {
      if (fit.fits) own.insert(fit.step);
    }
    for (auto it = fitted.begin(); it != fitted.end();) {
      it = own.count(*it) ? std::next(it) : fitted.erase(it);
    }
    if (!rank.problem.empty()) out->notes.push_back(rank.problem);
  }
  out->summary.steps = static_cast<int64_t>(all_steps.size());
  out->summary.steps_fitted = static_cast<int64_t>(fitted.size());
  out->summary.reference_fitted = ranks.size() == static_cast<size_t>(p) && fitted.count(0) > 0;
  return fitted;
}

// The kernel names of ops alone in their block (step 2 of FitProgram): per rank, and over the
// pipeline (the last entry).
std::vector<SignatureTally> TallySignatures(const std::vector<RankFit>& ranks,
                                            const std::vector<std::vector<sim::Op>>& programs) {
  std::vector<SignatureTally> tallies(ranks.size() + 1);
  SignatureTally& everywhere = tallies.back();
  for (size_t r = 0; r < ranks.size(); ++r) {
    const RankFit& rank = ranks[r];
    const std::vector<sim::Op>& program = programs[static_cast<size_t>(rank.stage)];
    for (const StepFit& fit : rank.steps) {
      if (!fit.fits) continue;
      for (const std::vector<size_t>& ops : OpsByBlock(fit)) {
        if (ops.size() != 1 || !fit.op_pinned[ops.front()]) continue;
        const OpType type = OpTypeOf(program[ops.front()].type);
        const std::vector<size_t>& items =
            fit.blocks[static_cast<size_t>(fit.op_block[ops.front()])];
        tallies[r].Add(*rank.timeline, type, items);
        everywhere.Add(*rank.timeline, type, items);
      }
    }
  }
  return tallies;
}

// Every block of one fitted step cut among its ops (step 3 of FitProgram), the ops kept in `out`.
void CutStep(const RankFit& rank, const StepFit& fit, const std::vector<sim::Op>& program,
             const Signatures& signatures, ProgramFit* out) {
  // Backward-hinted kernels of the step that no op takes: work the program has no op for
  // (the W ops of a zero-bubble schedule read as 1f1b), counted, never dropped silently.
  const auto hinted = [&](size_t i) {
    return HintedType(rank.timeline->items[i]) != OpType::kForward;
  };
  for (const std::vector<size_t>& block : fit.blocks) {
    out->summary.hinted_left_out += std::count_if(block.begin(), block.end(), hinted);
  }
  for (const std::vector<size_t>& ops : OpsByBlock(fit)) {
    if (ops.empty()) continue;
    std::vector<OpType> types;
    for (size_t k : ops) types.push_back(OpTypeOf(program[k].type));
    const std::vector<Cut> cuts =
        CutBlock(*rank.timeline, fit.blocks[static_cast<size_t>(fit.op_block[ops.front()])], types,
                 signatures);
    for (size_t j = 0; j < ops.size(); ++j) {
      FitEvidence evidence = cuts[j].evidence;
      const size_t k = ops[j];
      if (!fit.op_pinned[k] && !fit.op_hint_placed[k]) evidence = FitEvidence::kWeak;
      std::vector<const IssuedItem*> items;
      for (size_t i : cuts[j].items) items.push_back(&rank.timeline->items[i]);
      out->summary.hinted_left_out -=
          std::count_if(cuts[j].items.begin(), cuts[j].items.end(), hinted);
      if (items.empty()) {
        evidence = FitEvidence::kWeak;  // an op cut to nothing: counted, covers no compute
        PipelineOp op;
        op.rank = rank.timeline->rank;
        op.step = fit.step;
        op.type = types[j];
        out->ops.push_back(op);
      } else {
        out->ops.push_back(OpOfItems(rank.timeline->rank, types[j], items));
      }
      ++out->summary.placed;
      ++out->summary.by_evidence[static_cast<size_t>(evidence)];
      if (evidence == FitEvidence::kWeak) ++out->summary.weak;
    }
  }
}

}  // namespace

ProgramFit FitProgram(const FitInput& input) {
  ProgramFit out;
  const std::vector<IssuedTimeline>& timelines = *input.timelines;
  const std::vector<std::vector<sim::Op>>& programs = *input.programs;
  const int32_t p = static_cast<int32_t>(input.stage_order.size());
  if (p == 0 || programs.size() != static_cast<size_t>(p)) return out;

  absl::flat_hash_map<int32_t, int32_t> stage_of_rank;
  for (int32_t stage = 0; stage < p; ++stage) {
    stage_of_rank.emplace(input.stage_order[static_cast<size_t>(stage)], stage);
  }
  if (stage_of_rank.size() != static_cast<size_t>(p)) return out;  // a rank twice

  // 1. Each rank's steps, each op placed in a block.
  std::vector<RankFit> ranks;
  for (const IssuedTimeline& timeline : timelines) {
    const auto found = std::find(input.stage_order.begin(), input.stage_order.end(), timeline.rank);
    if (found == input.stage_order.end()) continue;
    const auto stage = static_cast<int32_t>(found - input.stage_order.begin());
    ranks.push_back(FitRank(timeline, stage, programs[static_cast<size_t>(stage)], stage_of_rank,
                            input.v, &out));
  }
  const std::set<int32_t> fitted = StepsEveryRankFits(ranks, p, &out);

  // 2. Signatures: the kernel names of ops alone in their block, per rank and over the pipeline.
  const std::vector<SignatureTally> tallies = TallySignatures(ranks, programs);

  // 3. Every block cut among its ops; the ops of steps every rank fits are kept.
  for (size_t r = 0; r < ranks.size(); ++r) {
    const RankFit& rank = ranks[r];
    const Signatures signatures = SignatureTally::Combine(tallies[r], tallies.back());
    for (const StepFit& fit : rank.steps) {
      if (!fit.fits || fitted.count(fit.step) == 0) continue;
      CutStep(rank, fit, programs[static_cast<size_t>(rank.stage)], signatures, &out);
    }
  }
  return out;
}

}  // namespace bubblescope::pipeline
