#include "trace_generator.h"

#include <memory>

#include "absl/strings/str_cat.h"
#include "rank_simulator.h"

namespace bubblescope::bench {

absl::StatusOr<GeneratedJob> GenerateJob(const GeneratorOptions& options) {
  if (options.ranks < 1 || options.steps < 1 || options.microbatches < 1 ||
      options.layers_per_stage < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "generator: ranks, steps, microbatches and layers_per_stage must be >= 1 (got ",
        options.ranks, ", ", options.steps, ", ", options.microbatches, ", ",
        options.layers_per_stage, ")"));
  }
  std::vector<std::unique_ptr<RankSimulator>> stages;
  for (int stage = 0; stage < options.ranks; ++stage) {
    stages.push_back(std::make_unique<RankSimulator>(stage, options));
  }
  SendCompletions sends(options.steps, options.microbatches, options.ranks);
  // Each stage runs until it waits on a neighbour's send; 1F1B never deadlocks, so every sweep
  // makes progress until all stages are done.
  bool all_done = false;
  while (!all_done) {
    bool progressed = false;
    all_done = true;
    for (auto& stage : stages) {
      while (stage->RunNext(&sends)) progressed = true;
      all_done = all_done && stage->done();
    }
    if (!all_done && !progressed) {
      return absl::InternalError("generator: pipeline schedule deadlocked");
    }
  }
  GeneratedJob job;
  for (auto& stage : stages) {
    job.truth.push_back(stage->Truth());
    job.trace.ranks.push_back(stage->TakeRank());
  }
  return job;
}

}  // namespace bubblescope::bench
