#include "cli/mpi_load.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cli/command.h"
#include "common/status_macros.h"
#include "distributed/distributed_analysis.h"
#include "distributed/distributed_load.h"

namespace bubblescope {

MpiProcessZero::~MpiProcessZero() { Release(); }

void MpiProcessZero::Release() {
  if (!others_waiting_) return;
  world_.BroadcastBytes(std::string());  // no request: done
  others_waiting_ = false;
}

TraceLoader MpiProcessZero::Loader() {
  return [this](const std::vector<std::string>& paths,
                const LoadOptions& options) -> absl::StatusOr<Trace> {
    const absl::StatusOr<TraceFileList> list = ListTraceFiles(paths, options);
    // Every process sends its bundle, whatever happened here, so none waits for ever.
    distributed::Share share = distributed::ReadShare(list, 0, world_.processes(), options, steps_);
    held_ = std::move(share.held);
    std::vector<std::string> bundles = world_.Gather(share.bundle);
    std::string().swap(share.bundle);
    absl::StatusOr<distributed::AssembledJob> job =
        list.ok() ? distributed::AssembleShares(*list, std::move(bundles), options)
                  : absl::StatusOr<distributed::AssembledJob>(list.status());
    world_.Broadcast(job.ok() ? kExitOk : kExitBadInput);
    BUBBLESCOPE_RETURN_IF_ERROR(job.status());
    others_waiting_ = true;
    origins_ = std::move(job->origins);
    facts_ = std::move(job->facts);
    return std::move(job->headers);
  };
}

absl::StatusOr<std::vector<std::string>> MpiProcessZero::Fetch(
    const std::vector<RankOrigin>& ranks) const {
  const std::string request = world_.BroadcastBytes(distributed::PackRequest(ranks));
  absl::StatusOr<std::string> mine = distributed::AnswerRequest(held_, request);
  // Gathered even when this process could not answer, so that no process waits for ever.
  std::vector<std::string> answers = world_.Gather(mine.ok() ? *mine : std::string());
  BUBBLESCOPE_RETURN_IF_ERROR(mine.status());
  return distributed::CollectAnswers(std::move(answers), ranks);
}

JobAnalyzer MpiProcessZero::Analyzer() {
  return [this](const Trace& headers, const job::Options& options) -> absl::StatusOr<job::Result> {
    absl::StatusOr<job::Result> result = distributed::AnalyzeInParts(
        headers, origins_, facts_,
        [this](const std::vector<RankOrigin>& ranks) { return Fetch(ranks); }, options);
    Release();
    return result;
  };
}

int RunMpiReader(const distributed::MpiWorld& world, const JobSource& source) {
  if (const int go = world.Broadcast(kExitOk); go != kExitOk) return go;
  const absl::StatusOr<TraceFileList> list = ListTraceFiles(source.paths, source.load);
  distributed::Share share =
      distributed::ReadShare(list, world.process(), world.processes(), source.load,
                             iterations::Options{.iteration_marker = source.iteration_marker,
                                                 .decided_source = std::nullopt});
  world.Gather(share.bundle);
  std::string().swap(share.bundle);
  if (const int loaded = world.Broadcast(kExitOk); loaded != kExitOk) return loaded;
  // Process 0's requests, one part of the job each, until an empty one says it is done.
  for (std::string request = world.BroadcastBytes(std::string()); !request.empty();
       request = world.BroadcastBytes(std::string())) {
    const absl::StatusOr<std::string> answer = distributed::AnswerRequest(share.held, request);
    world.Gather(answer.ok() ? *answer : std::string());
  }
  return kExitOk;
}

}  // namespace bubblescope
