#include "readers/nsys_ranks.h"

#include <algorithm>
#include <memory>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "bubblescope/op_names.h"

namespace bubblescope::nsys {
namespace {

// NCCL names each range after its API call (NVTX3_FUNC_WITH_PARAMS): "ncclAllReduce",
// "ncclSend", "ncclCommInitRank", "ncclCommInitRankConfig", "ncclCommSplit", ...
bool IsCommunicatorCreation(std::string_view name) {
  return name.starts_with("ncclCommInit") || name.starts_with("ncclCommSplit");
}

// The communication a call does, or kUnknown for the calls that move no data (ncclGroupStart,
// ncclCommDestroy, ncclMemAlloc, ...).
CommKind CallKind(std::string_view name) {
  if (!name.starts_with("nccl") || name.starts_with("ncclGroup") || name.starts_with("ncclComm") ||
      name.starts_with("ncclMem")) {
    return CommKind::kUnknown;
  }
  return op_names::CommKindFromName(name.substr(4));
}

}  // namespace

void ProcessComms::Add(int64_t tid, TimeNs start, TimeNs end, std::string_view name,
                       const std::optional<NcclPayload>& payload) {
  if (IsCommunicatorCreation(name)) {
    if (payload.has_value() && payload->communicator.has_value() && payload->ranks.has_value() &&
        payload->rank.has_value() && *payload->ranks > 0 && *payload->rank >= 0 &&
        *payload->rank < *payload->ranks) {
      inits_.push_back(Init{start, *payload->communicator, *payload->ranks, *payload->rank});
    }
    return;
  }
  const CommKind kind = CallKind(name);
  if (kind == CommKind::kUnknown) return;
  Op op;
  op.tid = tid;
  op.start = start;
  op.end = end;
  op.name = std::string(name);
  op.kind = kind;
  if (payload.has_value()) {
    op.communicator = payload->communicator;
    op.bytes = payload->bytes.value_or(-1);
    op.peer = payload->peer.value_or(-1);
  }
  ops_.push_back(std::move(op));
}

void ResolveRanks(const std::vector<ProcessComms*>& processes, int32_t world_size) {
  // How many of the file's processes created each communicator.
  absl::flat_hash_map<uint64_t, int32_t> creators;
  for (ProcessComms* process : processes) {
    absl::flat_hash_set<uint64_t> created;
    for (const ProcessComms::Init& init : process->inits_) created.insert(init.communicator);
    for (uint64_t communicator : created) ++creators[communicator];
  }
  // (communicator, rank in it) -> global rank, over every process of the file.
  ProcessComms::GlobalRanks global;
  for (ProcessComms* process : processes) {
    std::stable_sort(process->inits_.begin(), process->inits_.end(),
                     [](const auto& a, const auto& b) { return a.start < b.start; });
    const ProcessComms::Init* world = nullptr;
    for (const ProcessComms::Init& init : process->inits_) {
      if (world_size > 0 ? (world == nullptr && init.ranks == world_size)
                         : (world == nullptr || init.ranks > world->ranks)) {
        world = &init;
      }
    }
    if (world == nullptr) continue;
    if (world_size <= 0 && world->ranks <= 2 && creators[world->communicator] != world->ranks) {
      continue;  // perhaps a pair's point-to-point communicator: no word on the rank
    }
    process->global_rank_ = world->rank;
    process->world_size_ = world->ranks;
    process->world_ = world->communicator;
  }
  for (ProcessComms* process : processes) {
    if (process->global_rank_ < 0) continue;
    for (const ProcessComms::Init& init : process->inits_) {
      global.try_emplace({init.communicator, init.rank}, process->global_rank_);
    }
  }
  // A communicator's members are listed where the file holds every one of them: memory in
  // proportion to the file, whatever size its records claim.
  absl::flat_hash_map<uint64_t, int32_t> known;  // communicator -> members known
  for (const auto& [member, global_rank] : global) ++known[member.first];
  auto shared = std::make_shared<const ProcessComms::GlobalRanks>(std::move(global));
  for (ProcessComms* process : processes) {
    process->global_ = shared;
    absl::flat_hash_set<uint64_t> seen;
    for (const ProcessComms::Init& init : process->inits_) {
      if (!seen.insert(init.communicator).second) continue;
      ProcessComms::Communicator communicator{init.communicator, init.ranks, {}};
      auto count = known.find(init.communicator);
      if (count != known.end() && count->second == init.ranks) {
        for (int32_t r = 0; r < init.ranks; ++r) {
          communicator.members.push_back(shared->at({init.communicator, r}));
        }
      }
      process->communicators_.push_back(std::move(communicator));
    }
  }
}

int32_t ProcessComms::GlobalRank(uint64_t communicator, int32_t rank) const {
  if (global_ != nullptr) {
    auto it = global_->find({communicator, rank});
    if (it != global_->end()) return it->second;
  }
  // In the world communicator a rank is the global rank itself.
  return world_ == communicator && rank >= 0 && rank < world_size_ ? rank : -1;
}

void ProcessComms::Fill(Rank* rank, absl::FunctionRef<Timeline&(int64_t tid)> thread) const {
  if (global_rank_ >= 0) {
    rank->rank = global_rank_;
    rank->world_size = world_size_;
  }
  // Communicators become process groups, named by their id; their members are listed only when
  // every one is known.
  // Communicator id -> (its group's index in the rank, its index here).
  absl::flat_hash_map<uint64_t, std::pair<uint32_t, size_t>> group_of;
  for (const Communicator& communicator : communicators_) {
    ProcessGroup group;
    group.name = absl::StrCat("nccl:", absl::Hex(communicator.id, absl::kZeroPad16));
    group.ranks = communicator.members;
    group_of.try_emplace(communicator.id, static_cast<uint32_t>(rank->process_groups.size()),
                         static_cast<size_t>(&communicator - communicators_.data()));
    rank->process_groups.push_back(std::move(group));
  }
  for (const Op& op : ops_) {
    CommInfo info;
    info.kind = op.kind;
    info.bytes = op.bytes;
    info.collective = rank->names.Intern(op.name);
    if (op.communicator.has_value()) {
      auto group = group_of.find(*op.communicator);
      if (group != group_of.end()) {
        const Communicator& communicator = communicators_[group->second.second];
        info.process_group = group->second.first;
        info.group_size = communicator.ranks;
        info.peer = op.peer >= 0 ? GlobalRank(communicator.id, op.peer) : -1;
      }
    }
    Interval interval;
    interval.start = op.start;
    interval.end = op.end;
    interval.name = info.collective;
    interval.kind = IntervalKind::kCpuCommOp;
    interval.comm = static_cast<uint32_t>(rank->comms.size());
    rank->comms.push_back(info);
    thread(op.tid).intervals.push_back(interval);
  }
}

namespace {

// Whether an NCCL call of `call` kind can have launched a kernel of `kernel` kind: a
// point-to-point call a SendRecv kernel, a collective its own.
bool Launches(CommKind call, CommKind kernel) {
  const bool p2p_call = call == CommKind::kSend || call == CommKind::kRecv;
  const bool p2p_kernel = kernel == CommKind::kSendRecv || kernel == CommKind::kSend ||
                          kernel == CommKind::kRecv || kernel == CommKind::kUnknown;
  return p2p_call ? p2p_kernel : (kernel == call || kernel == CommKind::kUnknown);
}

}  // namespace

void DescribeLaunchedKernels(Rank* rank) {
  // The communication kind of each communication kernel, by correlation id.
  absl::flat_hash_map<int64_t, CommKind> kernel_kind;
  for (const Timeline& stream : rank->timelines) {
    if (stream.kind != TimelineKind::kGpuStream) continue;
    for (const Interval& kernel : stream.intervals) {
      if (kernel.kind == IntervalKind::kCommKernel && kernel.comm != kNoIndex) {
        kernel_kind.try_emplace(kernel.correlation, rank->comms[kernel.comm].kind);
      }
    }
  }
  // Correlation id -> the call's communication record, for every launch inside an NCCL call.
  absl::flat_hash_map<int64_t, uint32_t> described;
  for (const Timeline& thread : rank->timelines) {
    if (thread.kind != TimelineKind::kCpuThread) continue;
    // NCCL's calls on this thread, by start (they do not nest), then each launch in one.
    std::vector<const Interval*> calls;
    for (const Interval& interval : thread.intervals) {
      if (interval.kind == IntervalKind::kCpuCommOp && interval.comm != kNoIndex &&
          rank->name(interval.name).starts_with("nccl")) {
        calls.push_back(&interval);
      }
    }
    if (calls.empty()) continue;
    for (const Interval& launch : thread.intervals) {
      if (launch.kind != IntervalKind::kRuntime || launch.correlation == 0) continue;
      auto kind = kernel_kind.find(launch.correlation);
      if (kind == kernel_kind.end()) continue;
      auto after =
          std::upper_bound(calls.begin(), calls.end(), launch.start,
                           [](TimeNs start, const Interval* call) { return start < call->start; });
      // The latest call around the launch that can have launched its kernel (calls of no
      // length at one instant are told apart by kind); a few steps back at most.
      for (int steps = 0; after != calls.begin() && steps < 8; ++steps) {
        const Interval* call = *--after;
        if (call->end < launch.end) continue;
        if (Launches(rank->comms[call->comm].kind, kind->second)) {
          described.try_emplace(launch.correlation, call->comm);
          break;
        }
      }
    }
  }
  if (described.empty()) return;
  for (Timeline& stream : rank->timelines) {
    if (stream.kind != TimelineKind::kGpuStream) continue;
    for (Interval& kernel : stream.intervals) {
      auto it = described.find(kernel.correlation);
      if (kernel.kind != IntervalKind::kCommKernel || kernel.comm == kNoIndex ||
          it == described.end()) {
        continue;
      }
      const CommInfo call = rank->comms[it->second];
      CommInfo& info = rank->comms[kernel.comm];
      const bool undirected = info.kind == CommKind::kSendRecv || info.kind == CommKind::kUnknown;
      if (undirected && (call.kind == CommKind::kSend || call.kind == CommKind::kRecv)) {
        info.kind = call.kind;
      }
      if (call.bytes >= 0) info.bytes = call.bytes;
      if (call.peer >= 0) info.peer = call.peer;
      if (call.process_group != kNoIndex) info.process_group = call.process_group;
      if (call.group_size >= 0) info.group_size = call.group_size;
      info.collective = call.collective;
    }
  }
}

bool NumberByDevice(std::vector<Rank>* ranks) {
  if (ranks->size() < 2) return false;
  std::vector<int32_t> devices;
  for (const Rank& rank : *ranks) {
    if (rank.rank >= 0) return false;
    int32_t device = -1;
    for (const Timeline& timeline : rank.timelines) {
      if (timeline.kind != TimelineKind::kGpuStream) continue;
      if (device >= 0 && timeline.device != device) return false;  // more than one GPU
      device = timeline.device;
    }
    if (device < 0) return false;
    devices.push_back(device);
  }
  std::vector<int32_t> sorted = devices;
  std::sort(sorted.begin(), sorted.end());
  if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) return false;
  for (size_t i = 0; i < ranks->size(); ++i) (*ranks)[i].rank = devices[i];
  return true;
}

}  // namespace bubblescope::nsys
