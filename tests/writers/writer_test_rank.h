// A small hand-built Rank that exercises every kind of event the Kineto writer emits, with times
// chosen so the expected JSON values can be worked out by hand.
#pragma once

#include "bubblescope/trace.h"

namespace bubblescope::testing {

inline constexpr TimeNs kBase = 1700000000000000000;

inline Rank MakeWriterTestRank() {
  Rank rank;
  rank.rank = 3;
  rank.world_size = 8;
  rank.backend = "nccl";
  rank.pid = 4242;
  rank.source_path = "rank3.json";
  rank.devices.push_back(DeviceInfo{0, "NVIDIA H100 80GB HBM3", 85029158912, 9, 0, 132});
  rank.process_groups.push_back(ProcessGroup{"pp", {3, 4}});

  Timeline cpu{TimelineKind::kCpuThread, -1, 4242, 4250, {}};
  cpu.intervals.push_back({kBase + 1234, kBase + 5678, 0, rank.names.Intern("aten::mm"), kNoIndex,
                           IntervalKind::kCpuOp});
  cpu.intervals.push_back({kBase + 2000, kBase + 2500, 77, rank.names.Intern("cudaLaunchKernel"),
                           kNoIndex, IntervalKind::kRuntime});
  // A launch whose GPU op is not in the trace: no flow arrow may be written for it.
  cpu.intervals.push_back({kBase + 2600, kBase + 2700, 99, rank.names.Intern("cudaLaunchKernel"),
                           kNoIndex, IntervalKind::kRuntime});
  cpu.intervals.push_back({kBase + 6000, kBase + 7000, 0, rank.names.Intern("c10d::send"), kNoIndex,
                           IntervalKind::kCpuCommOp});
  rank.timelines.push_back(cpu);

  Timeline compute{TimelineKind::kGpuStream, 0, 0, 7, {}};
  compute.intervals.push_back({kBase + 3000, kBase + 4500, 77, rank.names.Intern("gemm_kernel"),
                               kNoIndex, IntervalKind::kComputeKernel});
  rank.comms.push_back(CommInfo{65536, -1, -1, kNoIndex, kNoName, kNoName, CommKind::kUnknown});
  compute.intervals.push_back({kBase + 5000, kBase + 5100, 80,
                               rank.names.Intern("Memcpy HtoD (Pinned -> Device)"), 0,
                               IntervalKind::kMemcpy});
  compute.intervals.push_back({kBase + 5200, kBase + 5250, 81, rank.names.Intern("Memset (Device)"),
                               kNoIndex, IntervalKind::kMemset});
  rank.timelines.push_back(compute);

  Timeline comm{TimelineKind::kGpuStream, 0, 0, 20, {}};
  rank.comms.push_back(CommInfo{4096, 4, 2, 0, rank.names.Intern("send"),
                                rank.names.Intern("BFloat16"), CommKind::kSend});
  comm.intervals.push_back(
      {kBase + 8000, kBase + 9000, 78,
       rank.names.Intern("ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)"), 1,
       IntervalKind::kCommKernel});
  rank.comms.push_back(CommInfo{800, 2, 2, kNoIndex, rank.names.Intern("recv"),
                                rank.names.Intern("Float"), CommKind::kRecv});
  comm.intervals.push_back({kBase + 9500, kBase + 9600, 79, rank.names.Intern("ncclRecvKernel"), 2,
                            IntervalKind::kCommKernel});
  rank.timelines.push_back(comm);

  rank.annotations.push_back(
      {kBase + 1000, kBase + 8000, rank.names.Intern("forward"), AnnotationScope::kCpu, -1, 4250});
  rank.annotations.push_back(
      {kBase + 3000, kBase + 4500, rank.names.Intern("gpu_forward"), AnnotationScope::kGpu, 0, 7});
  rank.steps.push_back({5, kBase + 500, kBase + 10000});
  rank.memory.push_back({kBase + 1500, 1048576, 2097152, 0});
  rank.memory.push_back({kBase + 3500, 1572864, 4194304, 0});
  return rank;
}

}  // namespace bubblescope::testing
