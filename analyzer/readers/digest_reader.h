// Reads a digest file (docs/digest.md, written by writers/digest_writer.h) back into the Rank it
// was made from. Like every reader it trusts nothing in the file: every count, index, time and
// length is checked before use, so a damaged or hostile digest is a one-line error, never a
// crash, a hang or an allocation beyond what the file can hold.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "bubblescope/trace.h"
#include "readers/trace_reader.h"

namespace bubblescope::digest {

// True when `first_bytes` (the start of a file, any length) begins with the digest magic.
bool LooksLikeDigest(std::string_view first_bytes);

// The Rank a digest holds, its source_path set to `source_path`. Errors are one line,
// "<source_path>: byte <N>: <what>", N the offset in the file; an error in the payload names
// where the compressed stream starts and the offset inside the inflated payload:
// "<source_path>: byte <N>: inflated byte <M>: <what>". A payload
// that would inflate past `max_inflated_bytes` (the loader passes its reading budget) is a
// ResourceExhausted error before anything is allocated.
absl::StatusOr<Rank> Decode(std::string_view bytes, const std::string& source_path,
                            int64_t max_inflated_bytes = std::numeric_limits<int64_t>::max());

// Decode as the loader's reader of the format (readers/trace_reader.h): claims a file by its
// magic, whatever its name, or one named *.bsdigest (so that a damaged one says so).
class DigestTraceReader final : public TraceReader {
 public:
  std::string_view format_name() const override { return "digest"; }
  bool Sniff(std::string_view head, std::string_view path) const override;
  bool ReadsText() const override { return true; }
  absl::StatusOr<FileRanks> Read(const std::string& path, const ReaderOptions& options) override;
};

}  // namespace bubblescope::digest
