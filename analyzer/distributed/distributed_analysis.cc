#include "distributed/distributed_analysis.h"

#include <algorithm>
#include <numeric>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "common/parallel_for.h"
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
  absl::StatusOr<std::vector<std::string>> digests = fetch(origins);
  if (!digests.ok()) return digests.status();
  Trace part;
  part.ranks.reserve(positions.size());
  for (size_t k = 0; k < positions.size(); ++k) {
    const Rank& header = headers.ranks[positions[k]];
    absl::StatusOr<Rank> rank = digest::Decode((*digests)[k], header.source_path);
    std::string().swap((*digests)[k]);
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
    absl::StatusOr<Trace> whole = FetchPart(headers, origins, every_rank, fetch);
    if (!whole.ok()) return whole.status();
    whole->profiler_cycles = headers.profiler_cycles;  // the loader's choice, which Analyze reports
    return job::Analyze(*whole, options);
  }
  // The parts are analysed `workers` at a time, each on one thread: the fetches (collective MPI
  // calls) stay on this thread, one after the other, and only the analyses run side by side, so
  // process 0 holds at most `workers` parts' ranks at once.
  const size_t workers = WorkerCount(options.jobs, plan.parts.size());
  job::Options part_options = options;
  part_options.progress = nullptr;  // told per part, not per part's rank or pipeline
  part_options.jobs = 1;
  std::vector<job::PartResult> parts;
  parts.reserve(plan.parts.size());
  for (size_t first = 0; first < plan.parts.size(); first += workers) {
    const size_t count = std::min(workers, plan.parts.size() - first);
    std::vector<Trace> fetched;
    fetched.reserve(count);
    for (size_t k = 0; k < count; ++k) {
      absl::StatusOr<Trace> part = FetchPart(headers, origins, plan.parts[first + k], fetch);
      if (!part.ok()) return part.status();
      fetched.push_back(*std::move(part));
    }
    std::vector<absl::StatusOr<job::PartResult>> analysed(
        count, absl::UnknownError("part not analysed"));
    ParallelFor(count, workers, [&](size_t /*worker*/, size_t k) {
      analysed[k] = job::AnalyzePart(fetched[k], plan.parts[first + k], plan.decisions,
                                     part_options);
      std::vector<Rank>().swap(fetched[k].ranks);  // drop the part's ranks as soon as it is done
    });
    for (absl::StatusOr<job::PartResult>& part : analysed) {
      if (!part.ok()) return part.status();
      parts.push_back(*std::move(part));
      if (options.progress) {
        options.progress(job::Progress{.stage = "analysing the job a pipeline at a time",
                                       .done = parts.size(),
                                       .total = plan.parts.size()});
      }
    }
  }
  return job::MergeParts(headers, std::move(parts), options);
}

}  // namespace bubblescope::distributed
