#include "loader/record_runs.h"

#include <algorithm>
#include <map>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace bubblescope {
namespace {

// Runs named in an error before the rest are only counted: a directory reused a thousand
// times must not make a thousand-entry message.
constexpr size_t kRunsListed = 5;

std::string RunLabel(const RecordRun& run) {
  const std::string files = absl::StrCat(run.files, run.files == 1 ? " file" : " files");
  if (run.id.empty()) return absl::StrCat(files, " without a run id");
  return absl::StrCat(run.id, " (", files, ")");
}

std::string ListRuns(const std::vector<RecordRun>& runs) {
  std::vector<std::string> labels;
  for (size_t i = 0; i < runs.size() && i < kRunsListed; ++i) labels.push_back(RunLabel(runs[i]));
  std::string list = absl::StrJoin(labels, ", ");
  if (runs.size() > kRunsListed) {
    absl::StrAppend(&list, " and ", runs.size() - kRunsListed, " more");
  }
  return list;
}

}  // namespace

std::vector<RecordRun> RecordRunsOf(const std::vector<std::string_view>& run_ids) {
  std::map<std::string_view, size_t> counts;
  for (std::string_view id : run_ids) ++counts[id];
  std::vector<RecordRun> runs;
  for (auto it = counts.rbegin(); it != counts.rend(); ++it) {
    runs.push_back(RecordRun{std::string(it->first), it->second});
  }
  // The map's reverse order already puts "" last: it sorts before every other id.
  return runs;
}

absl::StatusOr<std::vector<bool>> ChooseRecordRun(const std::vector<std::string_view>& run_ids,
                                                  const RecordRunChoice& choice) {
  const std::vector<RecordRun> runs = RecordRunsOf(run_ids);
  if (choice.mix && !choice.run_id.empty()) {
    return absl::InvalidArgumentError("--run and --mix-runs exclude each other");
  }
  if (choice.run_id.empty()) {
    if (runs.size() > 1 && !choice.mix) {
      return absl::InvalidArgumentError(absl::StrCat(
          "the traces come from ", runs.size(), " different record runs: ", ListRuns(runs),
          "; analyze one with --run ID (a unique prefix will do), or all together with "
          "--mix-runs"));
    }
    return std::vector<bool>(run_ids.size(), true);
  }
  std::vector<const RecordRun*> matches;
  for (const RecordRun& run : runs) {
    if (run.id == choice.run_id) {
      matches = {&run};
      break;
    }
    if (!run.id.empty() && run.id.starts_with(choice.run_id)) matches.push_back(&run);
  }
  if (matches.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("--run ", choice.run_id,
                                                   ": no trace of that record run; the traces "
                                                   "hold ",
                                                   ListRuns(runs)));
  }
  if (matches.size() > 1) {
    std::vector<RecordRun> matching;
    for (const RecordRun* run : matches) matching.push_back(*run);
    return absl::InvalidArgumentError(absl::StrCat("--run ", choice.run_id, ": ", matches.size(),
                                                   " record runs begin so: ", ListRuns(matching)));
  }
  std::vector<bool> keep(run_ids.size());
  std::transform(run_ids.begin(), run_ids.end(), keep.begin(),
                 [&](std::string_view id) { return id == matches.front()->id; });
  return keep;
}

}  // namespace bubblescope
