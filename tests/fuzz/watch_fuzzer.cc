// Fuzz target for `bubblescope watch` (watch/job_follower.h): the files of a folder that grows
// while it is followed. Up to four files, each written look after look as a longer prefix of its
// contents (cut anywhere: inside an event, a string, an escape), followed by a live JobFollower,
// then written whole and looked at until nothing changes; and the whole folder once more with
// `once`.
//
// Input (fuzz_input.h): the files' contents, separated by kFileSeparator lines, named
// rank<i>.json; before them, from the end: the number of looks (1 to 6), then for each look and
// file the share of the file written by then (a byte: 0 to 255 of 255, never less than the look
// before).
//
// Checks: a look's error is one line; no pipeline iteration is reported twice; every reported
// figure is a figure (bubble within [0, 1], windows and time splits not negative, split parts
// adding up); nothing is held once the files are whole and every iteration that can be is
// reported beyond what the `once` analysis of the same folder holds.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "file_fuzz_util.h"
#include "fuzz_checks.h"
#include "fuzz_input.h"
#include "watch/job_follower.h"

namespace {

namespace fs = std::filesystem;
using bubblescope::fuzz::Fail;
using bubblescope::fuzz::FuzzInput;
using bubblescope::watch::IterationReport;
using bubblescope::watch::JobFollower;
using bubblescope::watch::Polled;

constexpr size_t kMaxFiles = 4;

void CheckReport(const IterationReport& report) {
  if (!(report.bubble_fraction >= 0.0 && report.bubble_fraction <= 1.0)) {
    Fail(absl::StrCat("bubble fraction ", report.bubble_fraction, " outside [0, 1]"));
  }
  if (report.window_ns < 0) Fail("negative window");
  for (const bubblescope::watch::StageIteration& stage : report.stages) {
    const bubblescope::IdleSplit& split = stage.split;
    if (split.compute < 0 || split.idle < 0 || split.fill < 0 || split.drain < 0 ||
        split.stall < 0 || split.comm_wait < 0 || split.empty < 0) {
      Fail("negative time in a stage's split");
    }
    if (split.fill + split.stall + split.drain != split.idle ||
        split.comm_wait + split.empty != split.stall) {
      Fail("a stage's idle split does not add up");
    }
  }
}

// Polls once; checks the error or the reports, and that none repeats an iteration.
void Look(JobFollower& follower, std::set<std::pair<int32_t, int64_t>>& reported) {
  absl::StatusOr<Polled> polled = follower.Poll(0);
  if (!polled.ok()) {
    if (polled.status().message().find('\n') != std::string_view::npos) {
      Fail(absl::StrCat("a look's error is not one line: ", polled.status().message()));
    }
    return;
  }
  for (const IterationReport& report : polled->iterations) {
    CheckReport(report);
    if (!reported.emplace(report.pipeline, report.step).second) {
      Fail(absl::StrCat("pipeline ", report.pipeline, " step ", report.step, " reported twice"));
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzInput input(data, size);
  const int looks = input.TakeInRange<int>(1, 6);
  std::vector<std::vector<uint8_t>> shares(static_cast<size_t>(looks));
  for (std::vector<uint8_t>& look : shares) {
    for (size_t f = 0; f < kMaxFiles; ++f) look.push_back(input.TakeByte());
  }
  const std::vector<std::string_view> files =
      bubblescope::fuzz::SplitFiles(input.rest(), kMaxFiles);

  bubblescope::fuzz::EmptyWorkDirectory();
  const fs::path& dir = bubblescope::fuzz::WorkDirectory();

  JobFollower follower({.dir = dir.string(), .read_bytes_per_look = 1 << 16});
  std::set<std::pair<int32_t, int64_t>> reported;
  std::vector<size_t> written(files.size(), 0);
  for (int look = 0; look < looks; ++look) {
    for (size_t f = 0; f < files.size(); ++f) {
      const size_t share = files[f].size() * shares[static_cast<size_t>(look)][f] / 255;
      written[f] = std::max(written[f], share);
      bubblescope::fuzz::WriteWorkFile(absl::StrCat("rank", f, ".json"),
                                       files[f].substr(0, written[f]));
    }
    Look(follower, reported);
  }
  for (size_t f = 0; f < files.size(); ++f) {
    bubblescope::fuzz::WriteWorkFile(absl::StrCat("rank", f, ".json"), files[f]);
  }
  // Whole files are read once they hold still for a look; a growing one 64 KiB a look.
  for (int again = 0; again < 4; ++again) Look(follower, reported);

  JobFollower once({.dir = dir.string(), .once = true});
  std::set<std::pair<int32_t, int64_t>> reported_once;
  Look(once, reported_once);
  return 0;
}
