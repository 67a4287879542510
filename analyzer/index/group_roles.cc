#include "index/group_roles.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <map>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace bubblescope::index {
namespace {

struct NamedRole {
  std::string_view name;
  GroupRole role;
};

// The group_desc Megatron-Core passes for each group it creates (megatron/core/parallel_state.py;
// each data-parallel one also exists as "<name>_GLOO").
constexpr std::array kMegatronGroups = {
    NamedRole{"TENSOR_MODEL_PARALLEL_GROUP", GroupRole::kTensor},
    NamedRole{"EXPERT_TENSOR_PARALLEL_GROUP", GroupRole::kTensor},
    // FP8 amax reductions inside the forward, over tensor (and data, context) ranks.
    NamedRole{"TENSOR_AND_DATA_PARALLEL_GROUP", GroupRole::kTensor},
    NamedRole{"TENSOR_AND_DATA_PARALLEL_GROUP_WITH_CP", GroupRole::kTensor},
    NamedRole{"TENSOR_AND_CONTEXT_PARALLEL_GROUP", GroupRole::kContext},
    NamedRole{"CONTEXT_PARALLEL_GROUP", GroupRole::kContext},
    NamedRole{"HIERARCHICAL_CONTEXT_PARALLEL_GROUP", GroupRole::kContext},
    NamedRole{"EXPERT_MODEL_PARALLEL_GROUP", GroupRole::kExpert},
    NamedRole{"EXPERT_TENSOR_AND_MODEL_PARALLEL_GROUP", GroupRole::kExpert},
    NamedRole{"PIPELINE_MODEL_PARALLEL_GROUP", GroupRole::kPipeline},
    NamedRole{"DATA_PARALLEL_GROUP", GroupRole::kData},
    NamedRole{"DATA_PARALLEL_GROUP_WITH_CP", GroupRole::kData},
    NamedRole{"INTRA_PARTIAL_DATA_PARALLEL_GROUP_WITH_CP", GroupRole::kData},
    NamedRole{"INTER_PARTIAL_DATA_PARALLEL_GROUP_WITH_CP", GroupRole::kData},
    NamedRole{"EXPERT_DATA_PARALLEL_GROUP", GroupRole::kData},
    NamedRole{"INTRA_DISTRIBUTED_OPTIMIZER_INSTANCE_GROUP", GroupRole::kData},
    NamedRole{"EMBEDDING_GROUP", GroupRole::kEmbedding},
    NamedRole{"POSITION_EMBEDDING_GROUP", GroupRole::kEmbedding},
    NamedRole{"MODEL_PARALLEL_GROUP", GroupRole::kModel},
    NamedRole{"EXPERT_TENSOR_MODEL_PIPELINE_PARALLEL_GROUP", GroupRole::kModel},
};

// A DeviceMesh dimension's name ("tp", "dp_shard", "dp_shard_cp", torchtitan's names).
GroupRole MeshDimRole(std::string_view dim) {
  if (dim.starts_with("dim_")) return GroupRole::kUnknown;  // an unnamed mesh dimension
  std::vector<std::string_view> tokens;
  for (size_t at = 0; at <= dim.size();) {
    const size_t end = std::min(dim.find('_', at), dim.size());
    tokens.push_back(dim.substr(at, end - at));
    at = end + 1;
  }
  auto has = [&tokens](std::string_view token) {
    return std::find(tokens.begin(), tokens.end(), token) != tokens.end();
  };
  // A flattened dimension that holds data parallelism (dp_shard_cp, dp_cp) is where FSDP and the
  // gradient sync run.
  if (has("dp") || has("fsdp") || has("efsdp") || has("hsdp") || has("replicate") || has("shard") ||
      has("batch")) {
    return GroupRole::kData;
  }
  if (has("pp") || has("pipe")) return GroupRole::kPipeline;
  if (has("tp") || has("etp")) return GroupRole::kTensor;
  if (has("cp")) return GroupRole::kContext;
  if (has("ep")) return GroupRole::kExpert;
  return GroupRole::kUnknown;
}

bool ContainsWord(const std::string& lower, std::string_view word) {
  return lower.find(word) != std::string::npos;
}

std::string RankList(const std::vector<int32_t>& ranks) {
  constexpr size_t kShown = 8;
  if (ranks.size() <= kShown) return absl::StrJoin(ranks, ",");
  return absl::StrCat(absl::StrJoin(ranks.begin(), ranks.begin() + kShown, ","), ",... (",
                      ranks.size(), " ranks)");
}

GroupRoleInfo FromLayout(const ProcessGroup& group, int32_t world_size) {
  GroupRoleInfo info;
  std::vector<int32_t> ranks = group.ranks;
  std::sort(ranks.begin(), ranks.end());
  ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
  if (ranks.size() < 2 || world_size <= 0) return info;
  info.source = RoleSource::kLayout;
  const int64_t n = static_cast<int64_t>(ranks.size());
  if (n == world_size) {
    info.role = GroupRole::kWorld;
    info.evidence = absl::StrCat("all ", world_size, " ranks of the world");
    return info;
  }
  const int64_t stride = int64_t{ranks[1]} - ranks[0];
  for (size_t i = 2; i < ranks.size(); ++i) {
    if (int64_t{ranks[i]} - ranks[i - 1] != stride) {
      info.source = RoleSource::kNone;
      info.evidence = absl::StrCat("ranks ", RankList(ranks), ": no regular stride");
      return info;
    }
  }
  const std::string where =
      absl::StrCat("ranks ", RankList(ranks), " (stride ", stride, " in a world of ", world_size,
                   "): in Megatron-Core's default rank order tp-cp-ep-dp-pp ");
  if (stride == 1) {
    info.role = GroupRole::kTensor;
    info.evidence = absl::StrCat(where, "consecutive ranks are the innermost dimension");
  } else if (stride * n == world_size) {
    info.role = GroupRole::kPipeline;
    info.evidence = absl::StrCat(where, "a stride spanning the world is the outermost dimension");
  } else {
    info.role = GroupRole::kData;
    info.evidence = absl::StrCat(where, "a stride between the two is data parallel");
  }
  return info;
}

}  // namespace

std::string_view GroupRoleName(GroupRole role) {
  switch (role) {
    case GroupRole::kUnknown:
      return "unknown";
    case GroupRole::kPipeline:
      return "pp";
    case GroupRole::kTensor:
      return "tp";
    case GroupRole::kContext:
      return "cp";
    case GroupRole::kExpert:
      return "ep";
    case GroupRole::kData:
      return "dp";
    case GroupRole::kEmbedding:
      return "embedding";
    case GroupRole::kModel:
      return "mp";
    case GroupRole::kWorld:
      return "world";
  }
  return "unknown";
}

std::string_view RoleSourceName(RoleSource source) {
  switch (source) {
    case RoleSource::kNone:
      return "none";
    case RoleSource::kDescription:
      return "description";
    case RoleSource::kLayout:
      return "layout_guess";
    case RoleSource::kStructure:
      return "structure";
  }
  return "none";
}

GroupRole RoleFromDescription(std::string_view description) {
  std::string_view name = description;
  if (name.ends_with("_GLOO")) name.remove_suffix(5);
  for (const NamedRole& named : kMegatronGroups) {
    if (named.name == name) return named.role;
  }
  if (description == "default_pg") return GroupRole::kWorld;
  if (description.starts_with("mesh_")) return MeshDimRole(description.substr(5));
  // Other frameworks' own words, in any case.
  std::string lower(description);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (ContainsWord(lower, "embed")) return GroupRole::kEmbedding;
  if (ContainsWord(lower, "pipe")) return GroupRole::kPipeline;
  if (ContainsWord(lower, "expert")) return GroupRole::kExpert;
  if (ContainsWord(lower, "context")) return GroupRole::kContext;
  if (ContainsWord(lower, "tensor")) return GroupRole::kTensor;
  if (ContainsWord(lower, "data")) return GroupRole::kData;
  return GroupRole::kUnknown;
}

GroupRoleInfo ClassifyGroup(const ProcessGroup& group, int32_t world_size) {
  const GroupRole described = RoleFromDescription(group.description);
  if (described != GroupRole::kUnknown) {
    return GroupRoleInfo{described, RoleSource::kDescription,
                         absl::StrCat("description \"", group.description, "\"")};
  }
  return FromLayout(group, world_size);
}

std::vector<GroupRoleInfo> ClassifyGroups(const Rank& rank) {
  std::vector<GroupRoleInfo> roles;
  roles.reserve(rank.process_groups.size());
  for (const ProcessGroup& group : rank.process_groups) {
    roles.push_back(ClassifyGroup(group, rank.world_size));
  }
  return roles;
}

std::vector<JobGroup> JobGroups(const Trace& trace,
                                const std::vector<const std::vector<GroupRoleInfo>*>& roles) {
  using Key = std::tuple<std::vector<int32_t>, std::string, std::string>;
  std::map<Key, JobGroup> groups;
  for (size_t r = 0; r < trace.ranks.size() && r < roles.size(); ++r) {
    const Rank& rank = trace.ranks[r];
    for (size_t g = 0; g < rank.process_groups.size() && g < roles[r]->size(); ++g) {
      const ProcessGroup& group = rank.process_groups[g];
      JobGroup& entry = groups[Key{group.ranks, group.name, group.description}];
      if (entry.declared_by.empty()) {
        entry.name = group.name;
        entry.description = group.description;
        entry.ranks = group.ranks;
        entry.role = (*roles[r])[g];
      }
      if (entry.declared_by.empty() || entry.declared_by.back() != rank.rank) {
        entry.declared_by.push_back(rank.rank);
      }
    }
  }
  std::vector<JobGroup> out;
  out.reserve(groups.size());
  for (auto& [key, group] : groups) {
    std::sort(group.declared_by.begin(), group.declared_by.end());
    group.declared_by.erase(std::unique(group.declared_by.begin(), group.declared_by.end()),
                            group.declared_by.end());
    out.push_back(std::move(group));
  }
  std::stable_sort(out.begin(), out.end(), [](const JobGroup& a, const JobGroup& b) {
    return std::tie(a.role.role, a.ranks) < std::tie(b.role.role, b.ranks);
  });
  return out;
}

StructureInference InferDataParallelGroups(const std::vector<std::vector<int32_t>>& stage_orders,
                                           std::vector<JobGroup>& groups) {
  StructureInference out;
  for (const JobGroup& group : groups) {
    if (group.role.source == RoleSource::kDescription && group.role.role == GroupRole::kData) {
      return out;
    }
  }
  struct Place {
    int32_t pipeline = -1;
    int32_t stage = -1;
  };
  std::map<int32_t, Place> place_of;
  for (size_t p = 0; p < stage_orders.size(); ++p) {
    for (size_t s = 0; s < stage_orders[p].size(); ++s) {
      place_of.emplace(stage_orders[p][s], Place{static_cast<int32_t>(p), static_cast<int32_t>(s)});
    }
  }
  // The candidates, each with its pipelines ascending and its stage.
  struct Candidate {
    size_t group = 0;
    std::vector<int32_t> pipelines;
    int32_t stage = -1;
  };
  std::vector<Candidate> candidates;
  for (size_t g = 0; g < groups.size(); ++g) {
    if (groups[g].role.source == RoleSource::kDescription) continue;
    const std::vector<int32_t>& members = MembersOf(groups[g]);
    if (members.size() < 2) continue;
    Candidate candidate{g, {}, -1};
    bool fits = true;
    for (int32_t rank : members) {
      const auto found = place_of.find(rank);
      if (found == place_of.end() ||
          (candidate.stage >= 0 && found->second.stage != candidate.stage)) {
        fits = false;
        break;
      }
      candidate.stage = found->second.stage;
      candidate.pipelines.push_back(found->second.pipeline);
    }
    if (!fits) continue;
    std::sort(candidate.pipelines.begin(), candidate.pipelines.end());
    const auto stages = [&](int32_t p) { return stage_orders[static_cast<size_t>(p)].size(); };
    fits = std::adjacent_find(candidate.pipelines.begin(), candidate.pipelines.end()) ==
               candidate.pipelines.end() &&
           std::all_of(candidate.pipelines.begin(), candidate.pipelines.end(),
                       [&](int32_t p) { return stages(p) == stages(candidate.pipelines[0]); });
    if (fits) candidates.push_back(std::move(candidate));
  }
  if (candidates.empty()) return out;
  // One reading: each (pipeline, stage) in at most one candidate, ...
  std::map<std::pair<int32_t, int32_t>, size_t> candidate_at;  // (pipeline, stage) -> candidate
  for (size_t c = 0; c < candidates.size(); ++c) {
    for (int32_t p : candidates[c].pipelines) {
      const auto [at, inserted] = candidate_at.emplace(std::pair{p, candidates[c].stage}, c);
      if (!inserted) {
        out.refused = absl::StrCat(
            "rank ", stage_orders[static_cast<size_t>(p)][static_cast<size_t>(candidates[c].stage)],
            " is in two groups that each hold one same-stage rank of several pipelines (ranks ",
            RankList(MembersOf(groups[candidates[at->second].group])), " and ",
            RankList(MembersOf(groups[candidates[c].group])),
            "): tensor- and data-parallel groups look alike by their ranks, so neither is taken "
            "as data parallel");
        return out;
      }
    }
  }
  // ... every stage of every pipeline they touch in one, joining the same pipelines throughout.
  for (const auto& [where, c] : candidate_at) {
    const int32_t p = where.first;
    const std::vector<int32_t>& order = stage_orders[static_cast<size_t>(p)];
    for (size_t s = 0; s < order.size(); ++s) {
      const auto other = candidate_at.find({p, static_cast<int32_t>(s)});
      if (other == candidate_at.end()) {
        out.refused = absl::StrCat("pipeline ", p,
                                   " has a rank in a group holding one same-stage rank of several "
                                   "pipelines, but its stage ",
                                   s, " (rank ", order[s], ") is in no such group");
        return out;
      }
      if (candidates[other->second].pipelines != candidates[c].pipelines) {
        out.refused = absl::StrCat(
            "the groups of pipeline ", p, "'s stages join different pipelines (",
            absl::StrJoin(candidates[c].pipelines, ","), " at stage ", where.second, ", ",
            absl::StrJoin(candidates[other->second].pipelines, ","), " at stage ", s, ")");
        return out;
      }
    }
  }
  for (const Candidate& candidate : candidates) {
    GroupRoleInfo& role = groups[candidate.group].role;
    role.role = GroupRole::kData;
    role.source = RoleSource::kStructure;
    role.evidence = absl::StrCat(
        "ranks ", RankList(MembersOf(groups[candidate.group])), ": the stage-", candidate.stage,
        " rank of each of pipelines ", absl::StrJoin(candidate.pipelines, ","),
        ", which share such a group at every stage (no description; inferred from the ranks)");
    ++out.inferred;
  }
  return out;
}

}  // namespace bubblescope::index
