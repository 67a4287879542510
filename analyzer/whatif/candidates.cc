#include "whatif/candidates.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "schedule_engine/config.h"

namespace bubblescope::whatif {

bool CandidateChoice::Any() const {
  return !schedule.empty() || microbatches > 0 || virtual_stages > 0 || same_global_batch ||
         !layers_per_stage.empty();
}

absl::StatusOr<Candidate> ChosenCandidate(const Model& model, const CandidateChoice& choice) {
  Candidate candidate = AsMeasured(model);
  candidate.same_global_batch = choice.same_global_batch;
  candidate.layers_per_stage = choice.layers_per_stage;
  if (!choice.schedule.empty()) {
    bool known = false;
    for (sim::Schedule schedule : sim::kSchedules) {
      if (sim::ScheduleName(schedule) == choice.schedule) {
        candidate.schedule = schedule;
        known = true;
      }
    }
    if (!known) {
      return absl::InvalidArgumentError(
          absl::StrCat("--schedule: '", choice.schedule,
                       "' is not one of gpipe, 1f1b, interleaved, zb-h1, fwd-only"));
    }
    const bool interleaved = candidate.schedule == sim::Schedule::kInterleaved1F1B;
    candidate.virtual_stages = interleaved ? (model.v > 1 ? model.v : 2) : 1;
  }
  if (choice.microbatches > 0) candidate.microbatches = choice.microbatches;
  if (choice.virtual_stages > 0) candidate.virtual_stages = choice.virtual_stages;
  return candidate;
}

absl::StatusOr<std::vector<Candidate>> CandidatesToPredict(
    const Model& model, const CandidateChoice& choice,
    const std::vector<int32_t>& rebalance_layers_after) {
  if (!choice.Any()) return DefaultCandidates(model, rebalance_layers_after);
  BUBBLESCOPE_ASSIGN_OR_RETURN(Candidate candidate, ChosenCandidate(model, choice));
  return std::vector<Candidate>{candidate};
}

}  // namespace bubblescope::whatif
