// The bytes one process of `analyze --mpi` sends to process 0 once it has read its share: the
// outcome of every file it read, each rank as its header (RankHeader, encoded as a digest)
// and its facts (job::RankFacts), and which file list it read them from. The ranks' full digests
// stay with the process until process 0 asks for them, a part of the job at a time
// (part_exchange.h).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "job/job_parts.h"

namespace bubblescope::distributed {

struct EncodedRank {
  std::string header;  // digest::Encode of the rank's header
  job::RankFacts facts;
};

// One file's outcome (loader's FileRead) with its ranks encoded.
struct EncodedRead {
  uint64_t index = 0;  // the file's place in the list
  bool read = false;
  absl::Status status;
  bool merged = false;
  bool bubblescope_merged = false;  // FileRead::bubblescope_merged
  std::vector<EncodedRank> ranks;   // one per rank of the file
};

struct ReadBundle {
  absl::Status list_status;       // why this process has no file list (ListTraceFiles' error)
  uint64_t list_fingerprint = 0;  // ListFingerprint of the list it read from
  uint64_t list_size = 0;         // files in that list
  std::vector<EncodedRead> reads;
};

// bundle_bytes.h's numbers and strings.
std::string PackBundle(const ReadBundle& bundle);

// An InternalError "process <process>: byte <N>: ..." when `bytes` are not one whole bundle.
absl::StatusOr<ReadBundle> UnpackBundle(std::string_view bytes, int process);

}  // namespace bubblescope::distributed
