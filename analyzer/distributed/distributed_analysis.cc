#include "distributed/distributed_analysis.h"

#include <numeric>
#include <string>
#include <utility>

#include "absl/status/status.h"
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
    return job::Analyze(*whole, options);
  }
  std::vector<job::PartResult> parts;
  parts.reserve(plan.parts.size());
  // Progress is told per part, not per part's rank or pipeline.
  job::Options part_options = options;
  part_options.progress = nullptr;
  for (const std::vector<size_t>& positions : plan.parts) {
    absl::StatusOr<Trace> part = FetchPart(headers, origins, positions, fetch);
    if (!part.ok()) return part.status();
    absl::StatusOr<job::PartResult> analysed =
        job::AnalyzePart(*part, positions, plan.decisions, part_options);
    if (!analysed.ok()) return analysed.status();
    parts.push_back(*std::move(analysed));
    if (options.progress) {
      options.progress(job::Progress{.stage = "analysing the job a pipeline at a time",
                                     .done = parts.size(),
                                     .total = plan.parts.size()});
    }
  }
  return job::MergeParts(headers, std::move(parts), options);
}

}  // namespace bubblescope::distributed
