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
  if (has("dp") || has("fsdp") || has("efsdp") || has("hsdp") || has("replicate") ||
      has("shard") || has("batch")) {
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

}  // namespace bubblescope::index
