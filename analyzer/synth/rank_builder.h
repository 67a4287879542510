// The builder of one simulated rank's timeline model (trace_builder.h), shared by the files that
// write its parts: trace_builder.cc (its kernels, launches, steps and annotations) and
// rank_comms.cc (the metadata torch records on its communication, and the CPU calls and ranges
// around its transfers).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "bubblescope/trace.h"
#include "schedule_engine/config.h"
#include "schedule_engine/parallel_groups.h"
#include "schedule_engine/records.h"

namespace bubblescope::sim {

// The runtime's kernel launch call per vendor (index: Vendor).
inline constexpr std::array<std::string_view, 2> kLaunchNames = {"cudaLaunchKernel",
                                                                 "hipLaunchKernel"};

class RankBuilder {
 public:
  // The rank running `record` in `replica` of the pipeline (ModelParallel).
  RankBuilder(const Config& config, const RankRecord& record, Replica replica)
      : config_(config),
        record_(record),
        replica_(replica),
        global_(GlobalRank(config, record.rank, replica)) {
    if (config.parallel.replicas() > 1) groups_ = GroupsOf(config, record.rank, replica);
  }

  Rank Build();

 private:
  NameId ComputeKernelName(const KernelRecord& kernel);
  // A send's or recv's metadata as torch records it: peer, size and process group.
  uint32_t TransferCommIndex(bool send, int32_t peer, int64_t bytes, uint32_t group,
                             int32_t group_size);
  uint32_t AllReduceCommIndex(const KernelRecord& kernel);
  uint32_t AllRanksGroup();
  // The pipeline's process group: PIPELINE_MODEL_PARALLEL_GROUP with replicas, else "pp_all".
  uint32_t PipelineGroup() { return groups_ ? GroupIndex(groups_->pipeline) : AllRanksGroup(); }
  // With replicas (ModelParallel): the index of one of the rank's groups, added on first use.
  uint32_t GroupIndex(const ProcessGroup& group);
  uint32_t CollectiveCommIndex(const KernelRecord& kernel);
  // The global rank of pipeline rank `pipeline_rank` in this rank's replica.
  int32_t Global(int32_t pipeline_rank) const {
    return GlobalRank(config_, pipeline_rank, replica_);
  }
  // The c10d::send / c10d::recv_ operator over [start, end) (it names no peer).
  void AddC10dOp(bool send, TimeNs start, TimeNs end, Timeline* cpu);
  // A c10d operator `name` of `kind` over [start, end), with no metadata of its own.
  void AddCpuCommOp(std::string_view name, CommKind kind, TimeNs start, TimeNs end, Timeline* cpu);
  // A coalesced collective (KernelRecord::coalesced) as torch writes one: its c10d operator and
  // `nccl:` range around the launch, and the kernel's record (returned, an index into
  // Rank::comms) with its kind only, as a reader makes of a kernel without args.
  uint32_t AddCoalescedCollective(const KernelRecord& kernel, Timeline* cpu);
  // A transfer batch_isend_irecv queues: its c10d operator, and inside it record_param_comms
  // with the transfer's metadata (`comm`).
  void AddQueuedTransfer(bool send, TimeNs start, TimeNs end, uint32_t comm, Timeline* cpu);
  // The `nccl:coalesced` range ProcessGroupNCCL::endCoalescing launches a batch's kernel in, and
  // (AnnotationStyle::kPpMirrored) Kineto's copy over the kernel on its stream.
  void AddCoalescedRange(const Interval& launch, const Interval& kernel, int64_t thread,
                         int64_t stream);
  // One KV exchange of ring attention (KernelRole::kContextParallel), written as Transformer
  // Engine issues it: a send to the next CP rank and a receive from the previous one in a
  // forward, the other way round in a backward, the even CP ranks sending first; both in one
  // batch_isend_irecv, or each an isend / irecv with its own kernel on the stream of its pair's
  // communicator.
  void AddRingExchange(const KernelRecord& kernel, Timeline* thread,
                       std::vector<Timeline>* streams);
  void AddAnnotations();

  // The timelines a rank's records go to while it is built: its main CPU thread, torch's
  // autograd thread (LaunchStyle::kTorch) and a GPU stream per StreamRole.
  struct Threads {
    Timeline cpu;
    Timeline autograd;
    std::vector<Timeline> streams;
  };
  // The names every kernel's launch and p2p kernel share, interned once before the kernels.
  struct SharedNames {
    NameId launch = kNoName;
    NameId send_recv = kNoName;
  };
  // Who the rank is: its ids, host, process, backend and device.
  void SetIdentity();
  Threads MakeThreads() const;
  // One kernel: its launch on the thread that issues it and its run on its stream, with the
  // CPU ops and communicator records its kind brings.
  void AddKernel(const KernelRecord& kernel, const SharedNames& names, Threads* threads);
  // Each step's synchronisation at its end and its ProfilerStep range.
  void AddSteps(Timeline* cpu);
  // The threads' timelines into the rank, sorted as every reader leaves them.
  void PlaceTimelines(Threads threads);
  // A true time as this rank's clock writes it (config.h, RecordedTime).
  TimeNs Recorded(TimeNs true_time) const {
    return RecordedTime(config_, record_.rank, global_, true_time);
  }

  const Config& config_;
  const RankRecord& record_;
  const Replica replica_;
  const int32_t global_;
  std::optional<RankGroups> groups_;  // with replicas only
  Rank rank_;
  std::vector<NameId> kernel_names_;     // by virtual stage * 3 + op type
  uint32_t all_ranks_group_ = kNoIndex;  // process group of the iteration-end all-reduce
};

}  // namespace bubblescope::sim
