// The bytes one process of `analyze --mpi` sends to process 0: the outcome of every file it read,
// each rank as a digest (writers/digest_writer.h), and which file list it read them from.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace bubblescope::distributed {

// One file's outcome (loader's FileRead) with its ranks encoded.
struct EncodedRead {
  uint64_t index = 0;  // the file's place in the list
  bool read = false;
  absl::Status status;
  bool merged = false;
  std::vector<std::string> digests;  // one per rank of the file
};

struct ReadBundle {
  absl::Status list_status;  // why this process has no file list (ListTraceFiles' error)
  uint64_t list_fingerprint = 0;  // ListFingerprint of the list it read from
  uint64_t list_size = 0;         // files in that list
  std::vector<EncodedRead> reads;
};

// Little-endian fixed-width numbers and length-prefixed strings; the same on every process.
std::string PackBundle(const ReadBundle& bundle);

// An InternalError "process <process>: byte <N>: ..." when `bytes` are not one whole bundle.
absl::StatusOr<ReadBundle> UnpackBundle(std::string_view bytes, int process);

}  // namespace bubblescope::distributed
