#include "pipeline/program_fit.h"

#include <algorithm>
#include <cstddef>
#include <map>
#include <optional>
#include <set>
#include <string_view>
#include <utility>

#include "absl/strings/str_cat.h"
#include "pipeline/segment_ops.h"

namespace bubblescope::pipeline {
namespace {

constexpr int32_t kNone = -1;
// Kernel-name signatures kept per rank and op type, and over the pipeline: the most frequent.
constexpr size_t kMaxSignatures = 8;

OpType TypeOf(sim::OpType type) {
  switch (type) {
    case sim::OpType::kForward:
      return OpType::kForward;
    case sim::OpType::kBackward:
      return OpType::kBackward;
    case sim::OpType::kWeightGrad:
      return OpType::kWeightGrad;
  }
  return OpType::kForward;
}

// The op type a compute item's phase hint points to (no hint: forward).
OpType HintedType(const IssuedItem& item) {
  switch (item.hint) {
    case PhaseHint::kBackward:
      return OpType::kBackward;
    case PhaseHint::kWeightGrad:
      return OpType::kWeightGrad;
    case PhaseHint::kNone:
      break;
  }
  return OpType::kForward;
}

// The stage an op of the program receives its input from and sends its output to (kNone: none,
// or the same stage), with virtual stage c·p + s on stage s (round-robin, as inferred).
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

// Places the program's ops of one step: `items` are the step's item indices in issue order.
void PlaceStep(const IssuedTimeline& timeline, const std::vector<size_t>& items,
               const std::vector<sim::Op>& program, const std::vector<int32_t>& stage_order, int32_t stage, int32_t v,
               bool with_peers, StepFit* fit, std::string* problem) {
  const int32_t p = static_cast<int32_t>(stage_order.size());
  // Pipeline transfers cut the step's compute into blocks; others (a peer outside the pipeline)
  // are neither.
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
      const auto found = std::find(stage_order.begin(), stage_order.end(), item.peer);
      if (found == stage_order.end() || found - stage_order.begin() == stage) continue;
      peer_stage = static_cast<int32_t>(found - stage_order.begin());
    }
    const int32_t key = KeyOf(item.kind == ItemKind::kSend, peer_stage, with_peers, p);
    by_key[static_cast<size_t>(key)].push_back(fit->blocks.size() - 1);  // transfer t ends block t
    fit->blocks.emplace_back();
  }
  const int32_t last_block = static_cast<int32_t>(fit->blocks.size()) - 1;
  const size_t n = program.size();
  std::vector<int32_t> lo(n, 0);
  std::vector<int32_t> hi(n, last_block);
  std::vector<size_t> cursor(by_key.size(), 0);
  auto take = [&](int32_t key, int32_t* transfer) {
    std::vector<size_t>& list = by_key[static_cast<size_t>(key)];
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
        return;
      }
      lo[k] = transfer + 1;
    }
    if (neighbours.to != kNone) {
      if (!take(KeyOf(true, neighbours.to, with_peers, p), &transfer)) {
        *problem = absl::StrCat("fewer sends than the program's ", n, " ops need");
        return;
      }
      hi[k] = transfer;
    }
  }
  for (size_t key = 0; key < by_key.size(); ++key) {
    if (cursor[key] != by_key[key].size()) {
      *problem = "more transfers than the program's ops make";
      return;
    }
  }
  const auto filled = [&](int32_t b) { return !fit->blocks[static_cast<size_t>(b)].empty(); };
  std::vector<int32_t> earliest(n);
  std::vector<int32_t> latest(n);
  int32_t bound = 0;
  for (size_t k = 0; k < n; ++k) {
    int32_t b = std::max(lo[k], bound);
    while (b <= last_block && !filled(b)) ++b;
    earliest[k] = bound = b;
  }
  bound = last_block;
  for (size_t k = n; k-- > 0;) {
    int32_t b = std::min(hi[k], bound);
    while (b >= 0 && !filled(b)) --b;
    latest[k] = bound = b;
  }
  fit->op_block.assign(n, kNone);
  fit->op_pinned.assign(n, false);
  fit->op_hint_placed.assign(n, false);
  int32_t previous = 0;
  for (size_t k = 0; k < n; ++k) {
    const int32_t first = std::max(earliest[k], previous);
    if (first > latest[k]) {
      *problem = absl::StrCat("op ", k + 1, " of ", n, " has no compute between its transfers");
      return;
    }
    // An op's compute runs right before the send of its output, else right after the receive
    // of its input; an op with neither follows the op before it, in the first block open to it
    // whose phase hints show an item of its type.
    const Neighbours neighbours = NeighboursOf(program[k], stage, p, v);
    int32_t block = first;
    fit->op_pinned[k] = true;
    if (neighbours.to != kNone) {
      block = latest[k];
    } else if (neighbours.from == kNone && first < latest[k]) {
      fit->op_pinned[k] = false;
      const OpType type = TypeOf(program[k].type);
      for (int32_t b = first; b <= latest[k]; ++b) {
        const std::vector<size_t>& members = fit->blocks[static_cast<size_t>(b)];
        if (std::any_of(members.begin(), members.end(), [&](size_t i) {
              return HintedType(timeline.items[i]) == type;
            })) {
          block = b;
          fit->op_hint_placed[k] = true;
          break;
        }
      }
    }
    fit->op_block[k] = previous = block;
  }
  fit->fits = true;
}

// Kernel-name sequences of ops alone in their block, by op type, most frequent first.
struct Signatures {
  std::vector<std::vector<NameId>> own[3];
  std::vector<int64_t> own_counts[3];  // how many lone ops ran each of `own`
  std::vector<std::vector<std::string_view>> named[3];  // empty without the rank's names
};

template <typename Name>
std::vector<std::vector<Name>> MostFrequent(const std::map<std::vector<Name>, int64_t>& counts,
                                            std::vector<int64_t>* frequencies = nullptr) {
  std::vector<std::pair<int64_t, std::vector<Name>>> sorted;
  for (const auto& [names, count] : counts) sorted.emplace_back(count, names);
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<std::vector<Name>> out;
  for (size_t i = 0; i < sorted.size() && i < kMaxSignatures; ++i) {
    out.push_back(std::move(sorted[i].second));
    if (frequencies != nullptr) frequencies->push_back(sorted[i].first);
  }
  return out;
}

// One op's items as the fit decided them, and how.
struct Cut {
  std::vector<size_t> items;
  FitEvidence evidence = FitEvidence::kTransfers;
};

// Phase-hint runs that follow the ops' types in order; nothing when they do not. With
// `bookkeeping`, unhinted runs the ops do not account for are left out (buffer allocation, the
// loss seed around a lone backward); without, every run must be one op's, so that a backward
// whose kernels only partly carry a hint is not cut short.
std::optional<std::vector<std::vector<size_t>>> CutByHints(const IssuedTimeline& timeline,
                                                           const std::vector<size_t>& block,
                                                           const std::vector<OpType>& types,
                                                           bool bookkeeping) {
  std::vector<std::pair<OpType, std::vector<size_t>>> runs;
  for (size_t index : block) {
    const OpType type = HintedType(timeline.items[index]);
    if (runs.empty() || runs.back().first != type) runs.push_back({type, {}});
    runs.back().second.push_back(index);
  }
  std::vector<std::vector<size_t>> out;
  for (auto& [type, members] : runs) {
    if (out.size() < types.size() && types[out.size()] == type) {
      out.push_back(std::move(members));
    } else if (type != OpType::kForward || !bookkeeping) {
      return std::nullopt;  // a run the ops do not account for
    }
  }
  if (out.size() != types.size()) return std::nullopt;
  return out;
}

// Length of the first listed signature that `block` holds from `pos` on, leaving at least
// `reserve` items; 0 when none does.
template <typename Name, typename NameAt>
size_t SignatureAt(const std::vector<std::vector<Name>>& signatures,
                   const std::vector<size_t>& block, size_t pos, size_t reserve,
                   NameAt name_at) {
  for (const std::vector<Name>& signature : signatures) {
    if (signature.empty() || pos + signature.size() + reserve > block.size()) continue;
    bool equal = true;
    for (size_t i = 0; i < signature.size() && equal; ++i) {
      equal = name_at(block[pos + i]) == signature[i];
    }
    if (equal) return signature.size();
  }
  return 0;
}

// A lone op's block, less what surrounds the kernel names most of the rank's lone ops of its
// type run (an optimizer step after the last backward, data loading before the first forward):
// the first such sequence, seen at least twice, that starts or ends the block.
template <typename NameAt>
std::optional<Cut> TrimLone(const std::vector<size_t>& block, const Signatures& own, size_t type,
                            NameAt name_at) {
  const std::vector<std::vector<NameId>>& signatures = own.own[type];
  for (size_t s = 0; s < signatures.size(); ++s) {
    const std::vector<NameId>& signature = signatures[s];
    if (own.own_counts[type][s] < 2 || signature.size() > block.size()) continue;
    const size_t extra = block.size() - signature.size();
    bool prefix = true;
    bool suffix = true;
    for (size_t i = 0; i < signature.size(); ++i) {
      prefix = prefix && name_at(block[i]) == signature[i];
      suffix = suffix && name_at(block[extra + i]) == signature[i];
    }
    if (prefix || suffix) {
      const auto first = block.begin() + static_cast<std::ptrdiff_t>(prefix ? 0 : extra);
      return Cut{{first, first + static_cast<std::ptrdiff_t>(signature.size())},
                 extra == 0 ? FitEvidence::kTransfers : FitEvidence::kOwnNames};
    }
  }
  return std::nullopt;
}

// Cuts a block shared by several ops, one cut after another: after a kernel-name signature of
// the op's type (the rank's own, then, unless `own_only`, other stages'), else, unless
// `own_only`, where the hints change type (a bound, not a proof) or halfway, counted weak.
// Nothing when `own_only` and some cut has no own signature.
std::optional<std::vector<Cut>> CutInTurn(const IssuedTimeline& timeline,
                                          const std::vector<size_t>& block,
                                          const std::vector<OpType>& types, const Signatures& own,
                                          const Signatures& pipeline, bool own_only) {
  const auto own_name = [&](size_t i) { return timeline.items[i].name; };
  const auto string_name = [&](size_t i) { return timeline.names->Get(timeline.items[i].name); };
  std::vector<Cut> cuts;
  size_t pos = 0;
  for (size_t j = 0; j + 1 < types.size(); ++j) {
    const size_t reserve = types.size() - 1 - j;  // an item at least for each op after it
    const size_t t = static_cast<size_t>(types[j]);
    FitEvidence evidence = FitEvidence::kOwnNames;
    size_t length = SignatureAt(own.own[t], block, pos, reserve, own_name);
    if (length == 0 && own_only) return std::nullopt;
    if (length == 0 && timeline.names != nullptr) {
      evidence = FitEvidence::kOtherNames;
      length = SignatureAt(pipeline.named[t], block, pos, reserve, string_name);
    }
    if (length == 0) {
      evidence = FitEvidence::kWeak;
      const size_t end = block.size() - reserve;
      const bool next_hinted = types[j + 1] != OpType::kForward;
      size_t cut = pos + (end - pos) / (reserve + 1);
      for (size_t i = pos + 1; i < end; ++i) {
        const bool hinted = HintedType(timeline.items[block[i]]) != OpType::kForward;
        if (next_hinted && hinted) {
          cut = i;
          break;
        }
        if (!next_hinted && hinted) cut = i + 1;
      }
      length = std::max<size_t>(cut, pos + 1) - pos;
    }
    cuts.push_back({{block.begin() + static_cast<std::ptrdiff_t>(pos),
                     block.begin() + static_cast<std::ptrdiff_t>(pos + length)},
                    evidence});
    pos += length;
  }
  cuts.push_back({{block.begin() + static_cast<std::ptrdiff_t>(pos), block.end()},
                  cuts.back().evidence});
  return cuts;
}

// The items of each op of a block, in order. A lone op takes its block, less what surrounds the
// names most of the rank's lone ops of its type run, else less unhinted bookkeeping around the
// hint run of its type. Several ops: the rank's own repeated names cut them when they can cut
// every op, then phase-hint runs that are exactly the ops' types, then CutInTurn.
std::vector<Cut> CutBlock(const IssuedTimeline& timeline, const std::vector<size_t>& block,
                          const std::vector<OpType>& types, const Signatures& own,
                          const Signatures& pipeline) {
  const auto own_name = [&](size_t i) { return timeline.items[i].name; };
  const bool lone = types.size() == 1;
  if (lone) {
    if (auto trimmed = TrimLone(block, own, static_cast<size_t>(types.front()), own_name)) {
      return {*std::move(trimmed)};
    }
  } else if (auto by_names = CutInTurn(timeline, block, types, own, pipeline, true)) {
    return *by_names;
  }
  if (auto by_hints = CutByHints(timeline, block, types, lone)) {
    std::vector<Cut> cuts;
    for (std::vector<size_t>& items : *by_hints) {
      cuts.push_back({std::move(items), lone ? FitEvidence::kTransfers : FitEvidence::kPhaseHints});
    }
    return cuts;
  }
  if (lone) return {Cut{block, FitEvidence::kTransfers}};
  return *CutInTurn(timeline, block, types, own, pipeline, false);
}

// The ops of each block of a fitted step, as indices into the program.
std::vector<std::vector<size_t>> OpsByBlock(const StepFit& fit) {
  std::vector<std::vector<size_t>> by_block(fit.blocks.size());
  for (size_t k = 0; k < fit.op_block.size(); ++k) {
    by_block[static_cast<size_t>(fit.op_block[k])].push_back(k);
  }
  return by_block;
}

}  // namespace

std::string_view FitEvidenceName(FitEvidence evidence) {
  switch (evidence) {
    case FitEvidence::kTransfers:
      return "transfers";
    case FitEvidence::kPhaseHints:
      return "phase hints";
    case FitEvidence::kOwnNames:
      return "kernel names";
    case FitEvidence::kOtherNames:
      return "other stages' kernel names";
    case FitEvidence::kWeak:
      return "weak";
  }
  return "unknown";
}

ProgramFit FitProgram(const FitInput& input) {
  ProgramFit out;
  const std::vector<IssuedTimeline>& timelines = *input.timelines;
  const std::vector<std::vector<sim::Op>>& programs = *input.programs;
  const int32_t p = static_cast<int32_t>(input.stage_order.size());
  if (p == 0 || programs.size() != static_cast<size_t>(p)) return out;

  // 1. Each rank's steps, each op placed in a block.
  std::vector<RankFit> ranks;
  std::set<int32_t> all_steps;
  for (const IssuedTimeline& timeline : timelines) {
    const auto found = std::find(input.stage_order.begin(), input.stage_order.end(), timeline.rank);
    if (found == input.stage_order.end()) continue;
    RankFit rank;
    rank.stage = static_cast<int32_t>(found - input.stage_order.begin());
    rank.timeline = &timeline;
    // Peers are used when every pipeline transfer of the rank records one.
    bool with_peers = true;
    std::map<int32_t, std::vector<size_t>> step_items;
    for (size_t i = 0; i < timeline.items.size(); ++i) {
      const IssuedItem& item = timeline.items[i];
      step_items[item.step].push_back(i);
      if (item.kind != ItemKind::kCompute && item.peer < 0) with_peers = false;
    }
    const std::vector<sim::Op>& program = programs[static_cast<size_t>(rank.stage)];
    for (const auto& [step, items] : step_items) {
      all_steps.insert(step);
      StepFit fit;
      fit.step = step;
      std::string problem;
      PlaceStep(timeline, items, program, input.stage_order, rank.stage, input.v, with_peers,
                &fit, &problem);
      out.summary.program_ops += static_cast<int64_t>(program.size());
      if (!fit.fits && rank.problem.empty()) {
        rank.problem = absl::StrCat("rank ", timeline.rank, " step ", step, ": ", problem);
      }
      rank.steps.push_back(std::move(fit));
    }
    ranks.push_back(std::move(rank));
  }
  // Steps every rank of the pipeline fits.
  std::set<int32_t> fitted = all_steps;
  for (const RankFit& rank : ranks) {
    std::set<int32_t> own;
    for (const StepFit& fit : rank.steps) {
      if (fit.fits) own.insert(fit.step);
    }
    for (auto it = fitted.begin(); it != fitted.end();) {
      it = own.count(*it) ? std::next(it) : fitted.erase(it);
    }
    if (!rank.problem.empty()) out.notes.push_back(rank.problem);
  }
  out.summary.steps = static_cast<int64_t>(all_steps.size());
  out.summary.steps_fitted = static_cast<int64_t>(fitted.size());
  out.summary.reference_fitted = ranks.size() == static_cast<size_t>(p) && fitted.count(0) > 0;

  // 2. Signatures: the kernel names of ops alone in their block, per rank and over the pipeline.
  std::vector<Signatures> own(ranks.size());
  Signatures pipeline;
  {
    std::map<std::vector<std::string_view>, int64_t> named[3];
    for (size_t r = 0; r < ranks.size(); ++r) {
      const RankFit& rank = ranks[r];
      const std::vector<sim::Op>& program = programs[static_cast<size_t>(rank.stage)];
      std::map<std::vector<NameId>, int64_t> counts[3];
      for (const StepFit& fit : rank.steps) {
        if (!fit.fits) continue;
        for (const std::vector<size_t>& ops : OpsByBlock(fit)) {
          if (ops.size() != 1 || !fit.op_pinned[ops.front()]) continue;
          const size_t t = static_cast<size_t>(TypeOf(program[ops.front()].type));
          std::vector<NameId> names;
          std::vector<std::string_view> strings;
          for (size_t i : fit.blocks[static_cast<size_t>(fit.op_block[ops.front()])]) {
            names.push_back(rank.timeline->items[i].name);
            if (rank.timeline->names != nullptr) {
              strings.push_back(rank.timeline->names->Get(rank.timeline->items[i].name));
            }
          }
          ++counts[t][names];
          if (rank.timeline->names != nullptr) ++named[t][strings];
        }
      }
      for (size_t t = 0; t < 3; ++t) {
        own[r].own[t] = MostFrequent(counts[t], &own[r].own_counts[t]);
      }
    }
    for (size_t t = 0; t < 3; ++t) pipeline.named[t] = MostFrequent(named[t]);
  }

  // 3. Every block cut among its ops; the ops of steps every rank fits are kept.
  for (size_t r = 0; r < ranks.size(); ++r) {
    const RankFit& rank = ranks[r];
    const std::vector<sim::Op>& program = programs[static_cast<size_t>(rank.stage)];
    for (const StepFit& fit : rank.steps) {
      if (!fit.fits || fitted.count(fit.step) == 0) continue;
      for (const std::vector<size_t>& ops : OpsByBlock(fit)) {
        if (ops.empty()) continue;
        std::vector<OpType> types;
        for (size_t k : ops) types.push_back(TypeOf(program[k].type));
        const std::vector<Cut> cuts =
            CutBlock(*rank.timeline, fit.blocks[static_cast<size_t>(fit.op_block[ops.front()])],
                     types, own[r], pipeline);
        for (size_t j = 0; j < ops.size(); ++j) {
          FitEvidence evidence = cuts[j].evidence;
          const size_t k = ops[j];
          if (!fit.op_pinned[k] && !fit.op_hint_placed[k]) evidence = FitEvidence::kWeak;
          std::vector<const IssuedItem*> items;
          for (size_t i : cuts[j].items) items.push_back(&rank.timeline->items[i]);
          if (items.empty()) {
            evidence = FitEvidence::kWeak;  // an op cut to nothing: counted, covers no compute
            PipelineOp op;
            op.rank = rank.timeline->rank;
            op.step = fit.step;
            op.type = types[j];
            out.ops.push_back(op);
          } else {
            out.ops.push_back(OpOfItems(rank.timeline->rank, types[j], items));
          }
          ++out.summary.placed;
          ++out.summary.by_evidence[static_cast<size_t>(evidence)];
          if (evidence == FitEvidence::kWeak) ++out.summary.weak;
        }
      }
    }
  }
  return out;
}

}  // namespace bubblescope::pipeline
