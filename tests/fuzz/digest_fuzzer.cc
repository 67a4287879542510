// Fuzz target for reading one digest file (docs/digest.md): the input is the file, exactly as
// the loader reads it, through digest::Decode under a reading budget, then the job driver on
// that one rank and both reports. Checks (fuzz_checks.h): an error reads
// "<file>: byte <N>: <what>"; a rank read keeps the model's promises (CheckRank) and writes
// itself back to the same bytes (Encode after Decode is a fixed point); the analysis succeeds
// and the JSON report is JSON.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "fuzz_checks.h"
#include "readers/digest_reader.h"
#include "writers/digest_writer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace bubblescope;  // NOLINT(build/namespaces): a fuzz entry point, no API
  // A reading budget as the loader passes one; small, so no input takes long to inflate.
  constexpr int64_t kMaxInflatedBytes = int64_t{8} << 20;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<Rank> rank = digest::Decode(bytes, "fuzz.bsdigest", kMaxInflatedBytes);
  if (!rank.ok()) {
    fuzz::CheckFileError(rank.status(), "fuzz.bsdigest");
    return 0;
  }
  fuzz::CheckRank(*rank);
  const std::string encoded = digest::Encode(*rank);
  absl::StatusOr<Rank> again = digest::Decode(encoded, "again.bsdigest");
  fuzz::RequireOk(again.status(), "reading back a digest written from a digest");
  if (digest::Encode(*again) != encoded) fuzz::Fail("a digest read back writes other bytes");
  rank->rank = 0;
  Trace trace;
  trace.ranks.push_back(*std::move(rank));
  fuzz::RequireOk(fuzz::AnalyzeAndReport(trace, {}), "analysing a readable digest");
  return 0;
}
