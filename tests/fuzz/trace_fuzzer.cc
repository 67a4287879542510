// Fuzz target for reading one trace file: the input is the file, exactly as `bubblescope analyze`
// would read it (gzip'd or not; no choice bytes), through the Kineto reader, then the job driver
// on that one rank and both reports. Checks (fuzz_checks.h): a whole-file error reads
// "<file>: byte <N>: <what>"; the rank keeps the model's promises; the analysis succeeds; the
// JSON report is always written and is JSON. job_fuzzer gives several ranks different files.
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <utility>

#include "fuzz_checks.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace bubblescope;  // NOLINT(build/namespaces): a fuzz entry point, no API
  // A reading budget, as the loader has: a gzip bomb stops there with its one-line error. Small,
  // so no input takes seconds to inflate and parse.
  constexpr int64_t kMaxTextBytes = int64_t{8} << 20;
  static KinetoReader* reader = new KinetoReader();  // reused, as each loader worker reuses one
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<Rank> rank = fuzz::ReadRank(*reader, "fuzz.json", bytes, kMaxTextBytes);
  if (!rank.ok()) return 0;
  rank->rank = 0;
  Trace trace;
  trace.ranks.push_back(*std::move(rank));
  fuzz::RequireOk(fuzz::AnalyzeAndReport(trace, {}), "analysing a readable trace");
  return 0;
}
