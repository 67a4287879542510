// Cutting one block of a rank's compute (the items between two transfers) among the ops the program
// fit placed in it (program_fit.h), and the kernel-name evidence the cuts read.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string_view>
#include <vector>

#include "pipeline/issued_items.h"
#include "pipeline/pipeline_op.h"

namespace bubblescope::pipeline {

// How the op's place in its rank's compute was settled.
enum class FitEvidence : uint8_t {
  kTransfers,   // alone in its block: the transfers around it bound it
  kPhaseHints,  // its block cut where phase hints change
  kOwnNames,    // its block cut after the rank's own repeated kernel names
  kOtherNames,  // its block cut after other stages' repeated kernel names
  kWeak,        // its block cut where nothing confirms: a guess
};

// "transfers", "phase hints", "kernel names", "other stages' kernel names", "weak".
std::string_view FitEvidenceName(FitEvidence evidence);

// Kernel-name sequences of ops alone in their block, by op type, most frequent first (at most a few
// of each).
struct Signatures {
  std::vector<std::vector<NameId>> own[3];              // the rank's own, in its name pool
  std::vector<int64_t> own_counts[3];                   // how many lone ops ran each of `own`
  std::vector<std::vector<std::string_view>> named[3];  // every rank's, by name
};

// Counts the name sequences of lone ops.
class SignatureTally {
 public:
  // One lone op of `type` made of `items` (indices into timeline.items).
  void Add(const IssuedTimeline& timeline, OpType type, const std::vector<size_t>& items);
  // The most frequent sequences: `own`'s by name id (one rank's), `everywhere`'s by name.
  static Signatures Combine(const SignatureTally& own, const SignatureTally& everywhere);

 private:
  std::map<std::vector<NameId>, int64_t> ids_[3];
  std::map<std::vector<std::string_view>, int64_t> names_[3];  // where the rank's names are known
};

// One op's items as the fit decided them, and how.
struct Cut {
  std::vector<size_t> items;
  FitEvidence evidence = FitEvidence::kTransfers;
};

// The items of each op of a block, in order (`types`: the ops' types, in program order). A lone op
// takes its block, less what surrounds the names most of the rank's lone ops of its type run, else
// less unhinted bookkeeping around the hint run of its type. Several ops: the rank's own repeated
// names cut them when they can cut every op; then phase-hint runs that are exactly the ops' types;
// then one cut after another by own, then other stages' names, else at the first hinted item (or
// halfway), weak.
std::vector<Cut> CutBlock(const IssuedTimeline& timeline, const std::vector<size_t>& block,
                          const std::vector<OpType>& types, const Signatures& signatures);

}  // namespace bubblescope::pipeline
