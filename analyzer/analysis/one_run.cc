#include "analysis/one_run.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <optional>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "bubblescope/rank_finish.h"

namespace bubblescope::one_run {
namespace {

// "0,1,2" or, past 8 ids, "0,1,...,63 (64 ranks)".
std::string Members(const std::vector<int32_t>& ranks) {
  constexpr size_t kShown = 8;
  if (ranks.size() <= kShown) return absl::StrJoin(ranks, ",");
  return absl::StrCat(absl::StrJoin(ranks.begin(), ranks.begin() + kShown - 1, ","), ",...,",
                      ranks.back(), " (", ranks.size(), " ranks)");
}

// The UTC date of a time on the epoch clock, "2024-05-02".
std::string Date(TimeNs epoch_ns) {
  using std::chrono::days;
  const auto day = std::chrono::floor<days>(
      std::chrono::sys_time<std::chrono::nanoseconds>(std::chrono::nanoseconds(epoch_ns)));
  const std::chrono::year_month_day date(day);
  return absl::StrFormat("%04d-%02u-%02u", static_cast<int>(date.year()),
                         static_cast<unsigned>(date.month()), static_cast<unsigned>(date.day()));
}

// "811 days" from two days on, else "3.2 hours".
std::string Duration(TimeNs ns) {
  constexpr double kHour = 3.6e12;
  if (ns >= 2 * kApartProofNs) return absl::StrCat(ns / kApartProofNs, " days");
  return absl::StrFormat("%.1f hours", static_cast<double>(ns) / kHour);
}

std::optional<Sign> WorldSizes(const Trace& trace) {
  const Rank* first = nullptr;
  for (const Rank& rank : trace.ranks) {
    if (rank.world_size <= 0) continue;
    if (first == nullptr) {
      first = &rank;
    } else if (rank.world_size != first->world_size) {
      return Sign{SignKind::kWorldSize, true, first->rank, rank.rank,
                  absl::StrCat("rank ", first->rank, " declares world size ", first->world_size,
                               ", rank ", rank.rank, " world size ", rank.world_size)};
    }
  }
  return std::nullopt;
}

// One run names each group once: torch numbers groups in the order every rank creates them.
// A list that is the start of the other is no disagreement (an event's args may list fewer).
std::optional<Sign> ProcessGroups(const Trace& trace) {
  std::map<std::string, std::pair<const std::vector<int32_t>*, int32_t>> declared;
  for (const Rank& rank : trace.ranks) {
    for (const ProcessGroup& group : rank.process_groups) {
      if (group.name.empty() || group.ranks.empty()) continue;
      const auto [it, inserted] = declared.try_emplace(group.name, &group.ranks, rank.rank);
      if (inserted) continue;
      const std::vector<int32_t>& other = *it->second.first;
      const size_t common = std::min(other.size(), group.ranks.size());
      if (std::equal(other.begin(), other.begin() + static_cast<std::ptrdiff_t>(common),
                     group.ranks.begin())) {
        continue;
      }
      return Sign{SignKind::kProcessGroups, true, it->second.second, rank.rank,
                  absl::StrCat("rank ", it->second.second, " declares process group '", group.name,
                               "' as ranks ", Members(other), ", rank ", rank.rank, " as ranks ",
                               Members(group.ranks))};
    }
  }
  return std::nullopt;
}

// The widest gap between the ranks' spans on the epoch clock, where no span covers it.
std::optional<Sign> Times(const rank_summary::Result& ranks) {
  std::vector<const rank_summary::RankFigures*> dated;
  for (const rank_summary::RankFigures& figures : ranks.ranks) {
    if (figures.span_start >= kAbsoluteTimeFromNs && figures.span_end >= figures.span_start) {
      dated.push_back(&figures);
    }
  }
  std::sort(dated.begin(), dated.end(),
            [](const auto* a, const auto* b) { return a->span_start < b->span_start; });
  const rank_summary::RankFigures* latest_end = nullptr;
  const rank_summary::RankFigures* before = nullptr;
  const rank_summary::RankFigures* after = nullptr;
  TimeNs widest = 0;
  for (const rank_summary::RankFigures* figures : dated) {
    if (latest_end != nullptr && figures->span_start - latest_end->span_end > widest) {
      widest = figures->span_start - latest_end->span_end;
      before = latest_end;
      after = figures;
    }
    if (latest_end == nullptr || figures->span_end > latest_end->span_end) latest_end = figures;
  }
  if (widest < kApartSignNs) return std::nullopt;
  const bool proof = widest >= kApartProofNs;
  std::string detail = absl::StrCat("rank ", before->rank, "'s events end ", Duration(widest),
                                    " before rank ", after->rank, "'s begin");
  if (proof) {
    absl::StrAppend(&detail, " (", Date(before->span_end), ", ", Date(after->span_start), ")");
  }
  absl::StrAppend(&detail, ", without overlap");
  return Sign{SignKind::kTimes, proof, std::min(before->rank, after->rank),
              std::max(before->rank, after->rank), std::move(detail)};
}

std::optional<Sign> Devices(const Trace& trace) {
  const Rank* first = nullptr;
  std::set<std::string_view> first_models;
  for (const Rank& rank : trace.ranks) {
    std::set<std::string_view> models;
    for (const DeviceInfo& device : rank.devices) {
      if (!device.name.empty()) models.insert(device.name);
    }
    if (models.empty()) continue;
    if (first == nullptr) {
      first = &rank;
      first_models = std::move(models);
      continue;
    }
    const bool shared = std::any_of(models.begin(), models.end(), [&](std::string_view model) {
      return first_models.count(model) > 0;
    });
    if (!shared) {
      return Sign{
          SignKind::kDevices, false, first->rank, rank.rank,
          absl::StrCat("rank ", first->rank, " runs on ", std::string(*first_models.begin()),
                       ", rank ", rank.rank, " on ", std::string(*models.begin()))};
    }
  }
  return std::nullopt;
}

// "ProfilerSteps 5-7", "ProfilerStep 10".
std::string StepRange(int64_t low, int64_t high) {
  if (low == high) return absl::StrCat("ProfilerStep ", low);
  return absl::StrCat("ProfilerSteps ", low, "-", high);
}

std::optional<Sign> Steps(const Trace& trace) {
  const Rank* first = nullptr;
  for (const Rank& rank : trace.ranks) {
    if (rank.steps.empty()) continue;
    if (first == nullptr) {
      first = &rank;
      continue;
    }
    const auto range = [](const Rank& r) {
      const auto [low, high] = std::minmax_element(
          r.steps.begin(), r.steps.end(),
          [](const ProfilerStep& a, const ProfilerStep& b) { return a.number < b.number; });
      return std::pair<int64_t, int64_t>(low->number, high->number);
    };
    const auto [first_low, first_high] = range(*first);
    const auto [low, high] = range(rank);
    if (high < first_low || low > first_high) {
      return Sign{
          SignKind::kSteps, false, first->rank, rank.rank,
          absl::StrCat("rank ", first->rank, " holds ", StepRange(first_low, first_high), ", rank ",
                       rank.rank, " ", StepRange(low, high), ", none in common")};
    }
  }
  return std::nullopt;
}

// One process is one rank, but for the rare one that drives several.
std::optional<Sign> Processes(const Trace& trace) {
  std::map<std::pair<std::string_view, int64_t>, const Rank*> seen;
  for (const Rank& rank : trace.ranks) {
    if (rank.host.empty() || rank.pid == 0) continue;
    const auto [it, inserted] = seen.try_emplace({rank.host, rank.pid}, &rank);
    if (inserted || it->second->source_path == rank.source_path) continue;
    return Sign{SignKind::kProcess, false, it->second->rank, rank.rank,
                absl::StrCat("ranks ", it->second->rank, " and ", rank.rank, " both name process ",
                             rank.pid, " on host ", rank.host, ", from two files")};
  }
  return std::nullopt;
}

}  // namespace

std::string_view SignKindName(SignKind kind) {
  switch (kind) {
    case SignKind::kWorldSize:
      return "world_size";
    case SignKind::kProcessGroups:
      return "process_groups";
    case SignKind::kTimes:
      return "times";
    case SignKind::kDevices:
      return "devices";
    case SignKind::kSteps:
      return "steps";
    case SignKind::kProcess:
      return "process";
  }
  return "unknown";
}

bool Result::CannotBeOneRun() const {
  return std::any_of(signs.begin(), signs.end(), [](const Sign& sign) { return sign.conclusive; });
}

Result Compare(const Trace& trace, const rank_summary::Result& ranks) {
  Result result;
  for (const std::optional<Sign>& sign : {WorldSizes(trace), ProcessGroups(trace), Times(ranks),
                                          Devices(trace), Steps(trace), Processes(trace)}) {
    if (sign.has_value()) result.signs.push_back(*sign);
  }
  std::stable_sort(result.signs.begin(), result.signs.end(),
                   [](const Sign& a, const Sign& b) { return a.conclusive && !b.conclusive; });
  return result;
}

}  // namespace bubblescope::one_run
