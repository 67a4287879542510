// Fuzz target for the trace input API: bytes as `bubblescope analyze` receives them from one file
// (gzip'd or not) through the Kineto reader, every analysis and both report formats. The first
// byte chooses how many ranks (1 to 4) read the rest, so the cross-rank code (p2p graph,
// matching, clock alignment, schedule inference) sees the fuzzed events too.
//
// Built two ways (tests/fuzz/CMakeLists.txt): with clang's libFuzzer when BUBBLESCOPE_FUZZ is
// on, and in every build as a replay binary that runs saved inputs, which ctest does over the
// malformed-input corpus under ASan and UBSan. Contract checked: no crash, no sanitizer report,
// and a whole-file error always reads "<file>: byte <N>: <what>".
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "job/job.h"
#include "loader/gzip_inflate.h"
#include "readers/kineto_reader.h"
#include "report/pipeline_report.h"

namespace {

constexpr std::string_view kFileName = "fuzz.json";

// A whole-file error must name the file and a byte offset; anything else is a contract breach,
// reported as a crash so the fuzzer keeps the input.
void CheckErrorShape(const absl::Status& status) {
  const std::string prefix = std::string(kFileName) + ": byte ";
  if (status.message().substr(0, prefix.size()) == prefix) return;
  std::fprintf(stderr, "error without file and byte offset: %s\n",
               std::string(status.message()).c_str());
  std::abort();
}

void Render(const bubblescope::Trace& trace) {
  using namespace bubblescope;  // NOLINT(build/namespaces): a fuzz entry point, no API
  absl::StatusOr<job::Result> job = job::Analyze(trace, {});
  if (!job.ok()) return;  // only a bad iteration marker or layer count fails, and none is given
  SummaryReportOptions options;
  const std::string text = AnalyzeText(*job, options);
  absl::StatusOr<std::string> json = AnalyzeJson(*job, options);
  if (!json.ok()) {
    std::fprintf(stderr, "report not written: %s\n", std::string(json.status().message()).c_str());
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace bubblescope;  // NOLINT(build/namespaces): a fuzz entry point, no API
  if (size == 0) return 0;
  const int ranks = 1 + data[0] % 4;
  std::string_view bytes(reinterpret_cast<const char*>(data) + 1, size - 1);

  simdjson::padded_string text;
  if (LooksLikeGzip(bytes)) {
    absl::StatusOr<InflatedText> inflated = InflateGzip(kFileName, bytes);
    if (!inflated.ok()) {
      CheckErrorShape(inflated.status());
      return 0;
    }
    text = std::move(inflated->text);
  } else {
    text = simdjson::padded_string(bytes);
  }

  static KinetoReader* reader = new KinetoReader();  // reused, as each loader worker does
  Trace trace;
  for (int r = 0; r < ranks; ++r) {
    Rank rank;
    absl::Status status = reader->Read(kFileName, text, &rank);
    if (!status.ok()) {
      CheckErrorShape(status);
      return 0;
    }
    rank.rank = r;
    trace.ranks.push_back(std::move(rank));
  }
  Render(trace);
  return 0;
}
