#include "distributed/distributed_analysis.h"

#include <algorithm>
#include <numeric>
#include <string>
#include <string_view>
#include <utility>

#include "absl/status/status.h"
#include "common/parallel_for.h"
#include "common/status_macros.h"
#include "job/job_parts.h"
#include "readers/digest_reader.h"

namespace bubblescope::distributed {
namespace {

// The ranks at `positions` of the job, with their events, numbered as the job numbers them.
absl::StatusOr<Trace> FetchPart(const Trace& headers, const std::vector<RankOrigin>& job_origins,
                                const std::vector<size_t>& positions, const FetchDigests& fetch) {
  std::vector<RankOrigin> origins;
  origins.reserve(positions.size());
  for (size_t position : positions) origins.push_back(job_origins[position]);
  BUBBLESCOPE_ASSIGN_OR_RETURN(std::vector<std::string> digests, fetch(origins));
  Trace part;
  part.ranks.reserve(positions.size());
  for (size_t k = 0; k < positions.size(); ++k) {
    const Rank& header = headers.ranks[positions[k]];
    absl::StatusOr<Rank> rank = digest::Decode(digests[k], header.source_path);
    std::string().swap(digests[k]);
    if (!rank.ok()) return absl::InternalError(rank.status().message());
    rank->rank = header.rank;
    part.ranks.push_back(*std::move(rank));
  }
  return part;
}

}  // namespace

absl::StatusOr<job::Result> AnalyzeInParts(const Trace& headers,
                                           const std::vector<RankOrigin>& origins,
                                           const std::vector<job::RankFacts>& facts,
                                           const FetchDigests& fetch, const job::Options& options) {
  if (origins.size() != headers.ranks.size()) {
    return absl::InternalError("the ranks' origins do not match their headers");
  }
  const job::PartPlan plan = job::PlanParts(headers, facts, options);
  if (plan.parts.empty()) {
    std::vector<size_t> every_rank(headers.ranks.size());
    std::iota(every_rank.begin(), every_rank.end(), size_t{0});
    BUBBLESCOPE_ASSIGN_OR_RETURN(Trace whole, FetchPart(headers, origins, every_rank, fetch));
    whole.profiler_cycles = headers.profiler_cycles;  // the loader's choice, which Analyze reports
    return job::Analyze(whole, options);
  }
  // The parts are read `workers` at a time, each on one thread: the fetches (collective MPI
  // calls) stay on this thread, one after the other, and only the reading runs side by side, so
  // process 0 holds at most `workers` parts' ranks at once. Twice: first for the clock evidence
  // of every part, from which the job's one clock model is fitted, then for the analysis on it.
  const size_t workers = WorkerCount(options.jobs, plan.parts.size());
  job::Options part_options = options;
  part_options.progress = nullptr;  // told per part, not per part's rank or pipeline
  part_options.jobs = 1;
  // Runs `read` on every part, `workers` parts at a time; `take` receives each one's outcome in
  // the plan's order. The first error is returned.
  const auto each_part = [&](const auto& read, const auto& take) -> absl::Status {
    for (size_t first = 0; first < plan.parts.size(); first += workers) {
      const size_t count = std::min(workers, plan.parts.size() - first);
      std::vector<Trace> fetched;
      fetched.reserve(count);
      for (size_t k = 0; k < count; ++k) {
        BUBBLESCOPE_ASSIGN_OR_RETURN(Trace part,
                                     FetchPart(headers, origins, plan.parts[first + k], fetch));
        fetched.push_back(std::move(part));
      }
      using Outcome = decltype(read(fetched[0], size_t{0}));
      std::vector<Outcome> outcomes(count, absl::UnknownError("part not read"));
      ParallelFor(count, workers, [&](size_t /*worker*/, size_t k) {
        outcomes[k] = read(fetched[k], first + k);
        std::vector<Rank>().swap(fetched[k].ranks);  // drop the part's ranks as soon as it is done
      });
      for (Outcome& outcome : outcomes) {
        BUBBLESCOPE_RETURN_IF_ERROR(outcome.status());
        take(*std::move(outcome));
      }
    }
    return absl::OkStatus();
  };
  const auto tell = [&](std::string_view stage, size_t done) {
    if (options.progress) {
      options.progress(job::Progress{.stage = stage, .done = done, .total = plan.parts.size()});
    }
  };

  std::vector<job::ClockEvidence> evidence;
  evidence.reserve(plan.parts.size());
  absl::Status read =
      each_part([&](const Trace& part,
                    size_t) { return job::PartClockEvidence(part, plan.decisions, part_options); },
                [&](job::ClockEvidence part) {
                  evidence.push_back(std::move(part));
                  tell("reading the job's clocks a pipeline at a time", evidence.size());
                });
  BUBBLESCOPE_RETURN_IF_ERROR(read);
  // What the job decides from every part's pipelines: the data-parallel groups its structure gives.
  const job::JobDecisions decisions = job::WithDataGroups(plan.decisions, headers, evidence);
  const clock_alignment::JobClocks clocks = job::FitJobClocks(std::move(evidence));

  std::vector<job::PartResult> parts;
  parts.reserve(plan.parts.size());
  read = each_part(
      [&](const Trace& part, size_t index) {
        return job::AnalyzePart(part, plan.parts[index], decisions, clocks, part_options);
      },
      [&](job::PartResult part) {
        parts.push_back(std::move(part));
        tell("analysing the job a pipeline at a time", parts.size());
      });
  BUBBLESCOPE_RETURN_IF_ERROR(read);
  return job::MergeParts(headers, std::move(parts), options);
}

}  // namespace bubblescope::distributed
