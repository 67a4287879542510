#include "crossrank/collective_matching.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace bubblescope::collective_matching {
namespace {

// What names a group the same way on every member: its ranks, else its name, else its
// description; empty: unknown.
std::string GroupKey(const ProcessGroup& group) {
  if (!group.ranks.empty()) {
    std::vector<int32_t> ranks = group.ranks;
    std::sort(ranks.begin(), ranks.end());
    return absl::StrCat("ranks:", absl::StrJoin(ranks, ","));
  }
  if (!group.name.empty()) return absl::StrCat("name:", group.name);
  return group.description.empty() ? std::string() : absl::StrCat("desc:", group.description);
}

bool AllNumbered(const std::vector<Kernel>& kernels) {
  return std::all_of(kernels.begin(), kernels.end(),
                     [](const Kernel& kernel) { return kernel.seq >= 0; });
}

// The kernels by sequence number; a number seen twice is left out (it names no one collective).
std::map<int64_t, const Kernel*> BySeq(const std::vector<Kernel>& kernels) {
  std::map<int64_t, const Kernel*> by_seq;
  std::set<int64_t> repeated;
  for (const Kernel& kernel : kernels) {
    if (!by_seq.emplace(kernel.seq, &kernel).second) repeated.insert(kernel.seq);
  }
  for (int64_t seq : repeated) by_seq.erase(seq);
  return by_seq;
}

}  // namespace

Kernels Collect(const Trace& trace, const index::TraceIndex& index, const Options& options) {
  Kernels kernels;
  auto& groups = kernels.groups;
  for (int32_t rank_id : options.ranks) {
    const int32_t position = index.PositionOf(rank_id);
    if (position < 0) continue;
    const Rank& rank = trace.ranks[static_cast<size_t>(position)];
    const index::RankIndex& rank_index = index.ranks[static_cast<size_t>(position)];
    if (rank_index.cpu_only()) continue;
    for (const index::DeviceOp& op : rank_index.ops) {
      if (op.op_class != index::OpClass::kComm || !IsCollective(op.comm)) continue;
      const CommInfo* info = rank.comm(rank.timelines[op.timeline].intervals[op.interval]);
      if (info == nullptr || info->process_group == kNoIndex ||
          info->process_group >= rank.process_groups.size()) {
        continue;
      }
      const std::string key = GroupKey(rank.process_groups[info->process_group]);
      if (key.empty()) continue;
      groups[key][rank_id].push_back(Kernel{op.end, op.end - op.start, info->seq});
    }
  }
  return kernels;
}

void Join(Kernels& into, Kernels other) {
  for (auto& [key, members] : other.groups) {
    std::map<int32_t, std::vector<Kernel>>& joined = into.groups[key];
    for (auto& [rank, rank_kernels] : members) joined.emplace(rank, std::move(rank_kernels));
  }
}

std::vector<MatchedEnds> Match(const Kernels& kernels) {
  // Each member against the group's lowest rank: enough to connect them, linear in the group.
  std::vector<MatchedEnds> matches;
  for (const auto& [key, members] : kernels.groups) {
    const auto first = members.begin();
    const bool first_numbered = AllNumbered(first->second);
    const std::map<int64_t, const Kernel*> first_by_seq =
        first_numbered ? BySeq(first->second) : std::map<int64_t, const Kernel*>();
    for (auto other = std::next(first); other != members.end(); ++other) {
      if (first_numbered && AllNumbered(other->second)) {
        // Both name each collective: pair them by name, whatever either window left out.
        for (const auto& [seq, kernel] : BySeq(other->second)) {
          const auto mate = first_by_seq.find(seq);
          if (mate == first_by_seq.end()) continue;
          matches.push_back(MatchedEnds{first->first, other->first, mate->second->end, kernel->end,
                                        kernel->duration, mate->second->duration, true});
        }
        continue;
      }
      if (first->second.size() != other->second.size()) continue;
      for (size_t k = 0; k < first->second.size(); ++k) {
        matches.push_back(MatchedEnds{first->first, other->first, first->second[k].end,
                                      other->second[k].end, other->second[k].duration,
                                      first->second[k].duration, false});
      }
    }
  }
  return matches;
}

std::vector<MatchedEnds> Analyze(const Trace& trace, const index::TraceIndex& index,
                                 const Options& options) {
  return Match(Collect(trace, index, options));
}

}  // namespace bubblescope::collective_matching
