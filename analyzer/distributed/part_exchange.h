// How process 0 of `analyze --mpi` gets one part of the job (job_parts.h) from the processes
// that read it: it names the part's ranks by their file and place in it (a request, broadcast),
// every process answers with the digests it holds of them (gathered), and process 0 puts the
// answers in the request's order. Plain bytes, tested without MPI.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "loader/trace_loader.h"

namespace bubblescope::distributed {

// The digests a process keeps of its share: by file (its place in the list), one per rank of
// the file in its order.
using HeldDigests = std::map<size_t, std::vector<std::string>>;

std::string PackRequest(const std::vector<RankOrigin>& ranks);

// The requested ranks this process holds, with their digests. An InternalError when `request`
// is not one (process 0 sent it: a fault of this build, not of the input).
absl::StatusOr<std::string> AnswerRequest(const HeldDigests& held, std::string_view request);

// The digests of `ranks`, in their order, from every process's answer; each answer is freed once
// read. An InternalError naming a rank no process sent, or a damaged answer.
absl::StatusOr<std::vector<std::string>> CollectAnswers(std::vector<std::string> answers,
                                                        const std::vector<RankOrigin>& ranks);

}  // namespace bubblescope::distributed
