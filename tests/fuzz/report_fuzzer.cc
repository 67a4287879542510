// Fuzz target for the one input bubblescope reads that it also writes: analyze's JSON report, as
// `bubblescope whatif REPORT.json` reads it (report/whatif_model_json.h). Every pipeline model
// the reader accepts goes through the what-if predictions, default candidates and all, so a
// hostile model must be refused or predicted within bounds, never crash or hang.
//
// Input: the report's text. Checks: the reader returns a status or models; an accepted model
// passes whatif::ValidateModel and its predictions return.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_checks.h"
#include "report/whatif_model_json.h"
#include "whatif/whatif.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace bubblescope;  // NOLINT(build/namespaces): a fuzz entry point, no API
  constexpr size_t kMaxBytes = size_t{1} << 20;
  if (size > kMaxBytes) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<std::vector<ReportedPipeline>> pipelines = ParseReportModels(text, "report.json");
  if (!pipelines.ok()) return 0;
  for (const ReportedPipeline& pipeline : *pipelines) {
    if (!pipeline.model.ok()) continue;
    fuzz::RequireOk(whatif::ValidateModel(*pipeline.model), "a model the reader accepted");
    // The defaults simulate m x4 over p stages: keep the work of one input small.
    if (int64_t{pipeline.model->p} * pipeline.model->m * pipeline.model->v > 4096) continue;
    absl::StatusOr<whatif::Result> predicted =
        whatif::Analyze(*pipeline.model, whatif::DefaultCandidates(*pipeline.model,
                                                                   pipeline.rebalance_layers_after));
    (void)predicted;
  }
  return 0;
}
