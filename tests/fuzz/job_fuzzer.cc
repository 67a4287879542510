// Fuzz target for a whole job: one to four ranks, each reading its own file, through the Kineto
// reader, the job driver (every analysis, the cross-rank ones too: p2p graph, send/recv matching,
// clock alignment, schedule inference, links) and both reports.
//
// Input (fuzz_input.h): up to four files separated by kFileSeparator lines, then one choice byte
// at the end. Bits 0-1: an input with a single file gives it to 1 + (bits) ranks, so a trace
// copied into the corpus is a job of identical ranks; with several files, rank r reads file r.
// Bit 2: rank ids as the loader assigns them (distributedInfo.rank, else the r of the file's
// name "rank<r>.json"; two files with one id end the input, as they end a load), so ids may be
// sparse or huge; otherwise rank r is id r. A file that is not a readable trace ends the input,
// as it ends the loader. Checks (fuzz_checks.h): as trace_fuzzer's, for every file.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "fuzz_checks.h"
#include "fuzz_input.h"
#include "loader/rank_assigner.h"

namespace {

constexpr size_t kMaxRanks = 4;
constexpr int64_t kMaxTextBytes = int64_t{8} << 20;  // per file, as trace_fuzzer

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace bubblescope;  // NOLINT(build/namespaces): a fuzz entry point, no API
  fuzz::FuzzInput input(data, size);
  const uint8_t choice = input.TakeByte();
  const bool loader_rank_ids = (choice & 4) != 0;
  std::vector<std::string_view> files = fuzz::SplitFiles(input.rest(), kMaxRanks);
  if (files.size() == 1) files.assign(1 + (choice & 3), files.front());

  std::vector<std::string> names;
  for (size_t r = 0; r < files.size(); ++r) names.push_back(absl::StrCat("rank", r, ".json"));
  absl::StatusOr<RankAssigner> assigner = RankAssigner::Create(names, {});
  fuzz::RequireOk(assigner.status(), "a rank assigner without overrides");

  static KinetoReader* reader = new KinetoReader();  // reused, as each loader worker reuses one
  Trace trace;
  for (size_t r = 0; r < files.size(); ++r) {
    absl::StatusOr<Rank> rank = fuzz::ReadRank(*reader, names[r], files[r], kMaxTextBytes);
    if (!rank.ok()) return 0;
    if (loader_rank_ids) {
      absl::StatusOr<int32_t> id = assigner->Assign(r, rank->rank);
      if (!id.ok()) return 0;  // a rank claimed twice: the loader's error, not a job
      rank->rank = *id;
    } else {
      rank->rank = static_cast<int32_t>(r);
    }
    trace.ranks.push_back(*std::move(rank));
  }
  std::sort(trace.ranks.begin(), trace.ranks.end(),
            [](const Rank& a, const Rank& b) { return a.rank < b.rank; });
  fuzz::RequireOk(fuzz::AnalyzeAndReport(trace, {}), "analysing readable traces");
  return 0;
}
