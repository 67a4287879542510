// Process 0's analysis under `analyze --mpi` (docs/scale.md): the job cut into parts
// (job/job_parts.h), each part's ranks fetched from the processes that hold their digests,
// decoded, analysed and dropped, and the parts merged into the job's result, the one Analyze
// gives. With options.jobs above 1, that many parts are analysed side by side (one thread each):
// process 0 so holds the ranks of `jobs` parts at a time, never the job's. A job that
// cannot be cut (job_parts.h says when) is fetched and analysed whole, as one part.
#pragma once

#include <functional>
#include <vector>

#include "absl/status/statusor.h"
#include "distributed/distributed_load.h"
#include "job/job.h"

namespace bubblescope::distributed {

// The digests of the ranks at `ranks`, in that order, from whichever process holds them (under
// MPI: a broadcast request and a gather of the answers, part_exchange.h).
using FetchDigests =
    std::function<absl::StatusOr<std::vector<std::string>>(const std::vector<RankOrigin>& ranks)>;

// `headers`, `origins`, `facts`: AssembleShares' (AssembledJob).
absl::StatusOr<job::Result> AnalyzeInParts(const Trace& headers,
                                           const std::vector<RankOrigin>& origins,
                                           const std::vector<job::RankFacts>& facts,
                                           const FetchDigests& fetch, const job::Options& options);

}  // namespace bubblescope::distributed
