// Which configurations `bubblescope whatif` predicts for a measured pipeline (docs/whatif.md):
// the one the user describes (schedule, microbatches, virtual stages, same global batch, a layer
// split), each part left as measured where not given, or, when the user describes none, the
// defaults (DefaultCandidates). Pure functions of the model; the CLI only turns flags into a
// CandidateChoice.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "whatif/whatif.h"

namespace bubblescope::whatif {

// What the user asked for; empty, zero or false: as measured.
struct CandidateChoice {
  std::string schedule;  // a sim::ScheduleName: gpipe, 1f1b, interleaved, zb-h1, fwd-only
  int32_t microbatches = 0;
  int32_t virtual_stages = 0;
  bool same_global_batch = false;
  std::vector<int32_t> layers_per_stage;

  // True when any part is given: then that one candidate is predicted, not the defaults.
  bool Any() const;
};

// The one candidate `choice` describes for `model`: a schedule changed to interleaved keeps the
// measured v when it has chunks, else takes 2; to any other schedule, 1. InvalidArgumentError
// for a schedule name that is not one of the simulator's.
absl::StatusOr<Candidate> ChosenCandidate(const Model& model, const CandidateChoice& choice);

// What `whatif` predicts: the chosen candidate when `choice` names any part, else the defaults
// (with `rebalance_layers_after`, the best single layer move, when known).
absl::StatusOr<std::vector<Candidate>> CandidatesToPredict(
    const Model& model, const CandidateChoice& choice,
    const std::vector<int32_t>& rebalance_layers_after);

}  // namespace bubblescope::whatif
