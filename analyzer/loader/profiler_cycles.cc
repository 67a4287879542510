#include "loader/profiler_cycles.h"

#include <algorithm>
#include <numeric>
#include <set>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace bubblescope {
namespace {

// A job profiled in cycles for days writes thousands: the error names the newest few.
constexpr size_t kCyclesListed = 5;

std::string CycleLabel(const ProfilerCycle& cycle) {
  std::string steps = cycle.first_step == cycle.last_step
                          ? absl::StrCat("step ", cycle.first_step)
                          : absl::StrCat("steps ", cycle.first_step, "-", cycle.last_step);
  return absl::StrCat(cycle.number, " (", steps, ", ", cycle.files,
                      cycle.files == 1 ? " file" : " files", cycle.complete ? "" : ", incomplete",
                      ")");
}

// True when some rank is claimed by more than one file: only then can cycles be in the way.
bool SomeRankClaimedTwice(const std::vector<CycleFile>& files) {
  std::set<int32_t> seen;
  for (const CycleFile& file : files) {
    if (file.rank >= 0 && !seen.insert(file.rank).second) return true;
  }
  return false;
}

CycleChoice OneCycle(size_t files) {
  CycleChoice choice;
  choice.cycle_of.assign(files, 0);
  choice.keep.assign(files, true);
  return choice;
}

}  // namespace

std::string ListProfilerCycles(const std::vector<ProfilerCycle>& cycles) {
  std::vector<std::string> labels;
  const size_t listed = std::min(cycles.size(), kCyclesListed);
  for (size_t i = cycles.size() - listed; i < cycles.size(); ++i) {
    labels.push_back(CycleLabel(cycles[i]));
  }
  std::string list = absl::StrJoin(labels, ", ");
  if (cycles.size() > listed) {
    list = absl::StrCat(list, " and ", cycles.size() - listed, " earlier");
  }
  return list;
}

absl::StatusOr<CycleChoice> ChooseProfilerCycle(const std::vector<CycleFile>& files,
                                                int32_t wanted) {
  const bool all_have_steps = std::all_of(files.begin(), files.end(), [](const CycleFile& f) {
    return f.first_step.has_value() && f.last_step.has_value();
  });
  if (!all_have_steps || !SomeRankClaimedTwice(files)) {
    if (wanted > 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("--cycle ", wanted, ": the traces hold one profiler cycle"));
    }
    return OneCycle(files.size());
  }
  // Files by their first step; a file whose steps overlap the cycle so far belongs to it.
  std::vector<size_t> order(files.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::sort(order.begin(), order.end(),
            [&files](size_t a, size_t b) { return *files[a].first_step < *files[b].first_step; });
  CycleChoice choice;
  choice.cycle_of.assign(files.size(), 0);
  std::vector<ProfilerCycle>& cycles = choice.cycles.found;
  std::vector<std::set<int32_t>> ranks_of;
  for (size_t i : order) {
    const CycleFile& file = files[i];
    if (cycles.empty() || *file.first_step > cycles.back().last_step) {
      cycles.push_back(ProfilerCycle{.number = static_cast<int32_t>(cycles.size() + 1),
                                     .first_step = *file.first_step,
                                     .last_step = *file.last_step});
      ranks_of.emplace_back();
    }
    ProfilerCycle& cycle = cycles.back();
    cycle.last_step = std::max(cycle.last_step, *file.last_step);
    cycle.files += 1;
    ranks_of.back().insert(file.rank);
    choice.cycle_of[i] = cycle.number;
  }
  if (cycles.size() == 1) {
    // One range of steps: the clash is two files of one rank, which the rank ids report.
    if (wanted > 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("--cycle ", wanted, ": the traces hold one profiler cycle"));
    }
    return OneCycle(files.size());
  }
  std::set<int32_t> every_rank;
  int64_t longest = 0;
  for (size_t c = 0; c < cycles.size(); ++c) {
    every_rank.insert(ranks_of[c].begin(), ranks_of[c].end());
    longest = std::max(longest, cycles[c].last_step - cycles[c].first_step);
  }
  // A file of fewer steps than its cycle's (a rank that stopped early) leaves the cycle short.
  std::vector<bool> every_file_spans(cycles.size(), true);
  for (size_t i = 0; i < files.size(); ++i) {
    const ProfilerCycle& cycle = cycles[static_cast<size_t>(choice.cycle_of[i] - 1)];
    if (*files[i].first_step != cycle.first_step || *files[i].last_step != cycle.last_step) {
      every_file_spans[static_cast<size_t>(cycle.number - 1)] = false;
    }
  }
  for (size_t c = 0; c < cycles.size(); ++c) {
    cycles[c].complete = ranks_of[c] == every_rank && !every_rank.contains(-1) &&
                         static_cast<size_t>(cycles[c].files) == every_rank.size() &&
                         every_file_spans[c] &&
                         cycles[c].last_step - cycles[c].first_step == longest;
  }
  const std::string listed = ListProfilerCycles(cycles);
  if (wanted > 0) {
    if (static_cast<size_t>(wanted) > cycles.size()) {
      return absl::InvalidArgumentError(absl::StrCat("--cycle ", wanted, ": the traces hold ",
                                                     cycles.size(), " profiler cycles: ", listed));
    }
    choice.cycles.chosen = wanted;
    choice.cycles.by_flag = true;
  } else {
    for (auto it = cycles.rbegin(); it != cycles.rend(); ++it) {
      if (it->complete) {
        choice.cycles.chosen = it->number;
        break;
      }
    }
    if (choice.cycles.chosen == 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "the traces hold ", cycles.size(), " profiler cycles and none has a file of every rank ",
          "over every step: ", listed, "; pick one with --cycle N"));
    }
  }
  choice.keep.resize(files.size());
  for (size_t i = 0; i < files.size(); ++i) {
    choice.keep[i] = choice.cycle_of[i] == choice.cycles.chosen;
  }
  return choice;
}

}  // namespace bubblescope
