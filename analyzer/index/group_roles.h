// What each process group of a rank is for: the parallelism dimension it carries (pipeline,
// tensor, context, expert, data, ...), derived once per rank for every analysis
// (docs/timeline-model.md, "Process-group roles").
//
// A 3D-parallel job runs several kinds of communication beside the pipeline's hand-offs, and
// only the group says which one an op is: a tensor-parallel all-reduce inside a forward is the
// stage's own work, a context-parallel ring sends p2p inside one stage, the data-parallel
// gradient sync runs after the last backward. The role comes from, in order:
//
// - The group's description (pg_desc), which torch records since 2.4 from the group_desc its
//   creator passed: Megatron-Core names every group it creates (TENSOR_MODEL_PARALLEL_GROUP,
//   PIPELINE_MODEL_PARALLEL_GROUP, DATA_PARALLEL_GROUP_WITH_CP, ...), torch's DeviceMesh names
//   each mesh dimension's group "mesh_<dim>" (torchtitan's "tp", "pp", "dp_shard", "cp", "ep",
//   ...), the default group is "default_pg". Such a role is read from the trace: a fact.
// - Without a description ("undefined", as torch writes for a group created without one, and
//   every DeepSpeed group), the layout of the group's ranks in the world, read the way
//   Megatron-Core's default order tp-cp-ep-dp-pp lays ranks out: a run of consecutive ranks is
//   the innermost dimension (tensor parallel), a stride that spans the world the outermost
//   (pipeline), any other regular stride data parallel. Other frameworks order ranks otherwise
//   (torch.distributed.pipelining examples put the pipeline innermost), so this is a guess: it
//   is reported with its evidence and never changes a figure.
// - Without a description, from the job's structure (InferDataParallelGroups): once the pipelines
//   and their stage orders are known, a group of ranks that holds one rank of each of several
//   pipelines, all at the same stage, is those pipelines' data-parallel group. This is applied
//   only where the whole job admits that one reading (see there), and reported as inferred.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "bubblescope/trace.h"

namespace bubblescope::index {

enum class GroupRole : uint8_t {
  kUnknown,
  kPipeline,   // pp: the stages' activation and gradient hand-offs
  kTensor,     // tp (and Megatron's tensor+data / tensor+context groups for FP8 amax reductions)
  kContext,    // cp: ring attention's p2p and all-gathers inside one stage
  kExpert,     // ep: MoE token dispatch and combine (all-to-all)
  kData,       // dp, dp-cp, the distributed optimizer's shards: the gradient sync
  kEmbedding,  // the first and last stage's tied embedding (and position embedding) gradients
  kModel,      // Megatron's tensor+pipeline group: gradient-norm and loss reductions
  kWorld,      // the default group, all ranks
};

// "unknown", "pp", "tp", "cp", "ep", "dp", "embedding", "mp", "world".
std::string_view GroupRoleName(GroupRole role);

enum class RoleSource : uint8_t {
  kNone,         // neither a description nor a layout says
  kDescription,  // read from the group's description: a fact
  kLayout,       // guessed from the ranks' layout: never applied to a figure
  // Inferred from the job's structure: the group holds one same-stage rank of each of several
  // pipelines (InferDataParallelGroups); applied.
  kStructure,
};

// "none", "description", "layout_guess", "structure".
std::string_view RoleSourceName(RoleSource source);

struct GroupRoleInfo {
  GroupRole role = GroupRole::kUnknown;
  RoleSource source = RoleSource::kNone;
  std::string evidence;  // what the role was read or guessed from, in words
};

// The role a group description names, or kUnknown when it names none.
GroupRole RoleFromDescription(std::string_view description);

// The role of `group` in a world of `world_size` ranks (<= 0: unknown).
GroupRoleInfo ClassifyGroup(const ProcessGroup& group, int32_t world_size);

// One entry per Rank::process_groups entry.
std::vector<GroupRoleInfo> ClassifyGroups(const Rank& rank);

// One process group of the job, as its members declare it, with its role.
struct JobGroup {
  std::string name;
  std::string description;
  std::vector<int32_t> ranks;  // as declared; empty when no member gave them
  GroupRoleInfo role;
  std::vector<int32_t> declared_by;  // the loaded ranks that declare it, ascending
};

// The distinct groups the ranks declare (the same ranks, name and description are one group),
// ordered by role, then ranks; `roles` is parallel to trace.ranks, each parallel to the rank's
// process_groups (RankIndex::groups).
std::vector<JobGroup> JobGroups(const Trace& trace,
                                const std::vector<const std::vector<GroupRoleInfo>*>& roles);

// The role to apply to figures: the role when it was read from the trace or inferred from the
// job's structure, else kUnknown.
inline GroupRole AppliedRole(const GroupRoleInfo& info) {
  return info.source == RoleSource::kDescription || info.source == RoleSource::kStructure
             ? info.role
             : GroupRole::kUnknown;
}

// The members of a job group: as declared, else (a group declared without its ranks) at least
// the loaded ranks that declare it.
inline const std::vector<int32_t>& MembersOf(const JobGroup& group) {
  return group.ranks.empty() ? group.declared_by : group.ranks;
}

// What InferDataParallelGroups concluded.
struct StructureInference {
  int32_t inferred = 0;  // groups given the data-parallel role
  // Why no group was inferred although some looked like data-parallel groups; empty otherwise.
  std::string refused;
};

// Data-parallel groups from the job's structure, for a job whose groups carry no description
// saying so. `stage_orders` holds each pipeline's ranks, first stage first (indices are the
// pipelines' numbers). A candidate is an undescribed group of at least two members, each the
// rank of a different pipeline at one and the same stage position, all these pipelines having
// as many stages. The candidates are taken as data parallel only when they give one reading of
// the job: no rank in two of them (tensor- and data-parallel groups look alike by their ranks:
// then which is which is not known), every stage of every pipeline they touch in one of them,
// and the pipelines a rank's group joins the same at every stage. Then every candidate's role
// becomes kData with source kStructure and its evidence in words; else nothing changes and
// `refused` says why. A job with a described data-parallel group is left as it is.
StructureInference InferDataParallelGroups(const std::vector<std::vector<int32_t>>& stage_orders,
                                           std::vector<JobGroup>& groups);

// Communication of the stage's own work, which runs between its computations and is no wait
// for another stage: tensor, context and expert parallel.
inline bool InStageRole(GroupRole role) {
  return role == GroupRole::kTensor || role == GroupRole::kContext || role == GroupRole::kExpert;
}

// Whether a point-to-point transfer in a group of this role can be a pipeline hand-off: the
// pipeline's own group, and (as every trace without descriptions has them) the world and groups
// of unknown role.
inline bool PipelineTransferRole(GroupRole role) {
  return role == GroupRole::kPipeline || role == GroupRole::kWorld || role == GroupRole::kUnknown;
}

}  // namespace bubblescope::index
