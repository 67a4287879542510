// Turns the engine's records into the timeline model, as a profiler on each rank would have
// recorded it: every timestamp of rank r is shifted by clock_offsets_ns[r] (the rank's clock),
// while the records (and so the truth) stay on the true clock.
//
// Per rank: one CPU thread (cudaLaunchKernel runtime calls carrying their kernel's correlation
// id, one cudaDeviceSynchronize per iteration), the compute stream (stream 7) and the p2p streams
// that carried traffic, ProfilerStep#i ranges (i = 0..K-1, in `steps` only, not in
// `annotations`: the Kineto writer writes `steps` as the ProfilerStep events, and the reader then
// records each as a step and a CPU annotation), the chosen PP annotations, and device-0 memory
// samples. Compute kernels are named "void pp_stage<S>_<forward|backward|weight_grad>_kernel
// <bf16>(...)" (S = chunk * p + stage) and the optimizer "void multi_tensor_apply_kernel<adam>
// (...)"; p2p kernels are "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)" with a
// CommInfo {send|recv, global peer, bytes, group "pp_all" of every rank, as torch records a p2p op
// on the pipeline's process group}; the iteration-end all-reduce is
// "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)" on stream 36 with a
// CommInfo {allreduce, 4 bytes of Float, group "pp_all" of every rank}.
//
// Batched p2p (P2pStyle::kBatched) is written as torch records batch_isend_irecv: per transfer a
// c10d::send / c10d::recv_ op (kind only) over its c10d call with a record_param_comms op inside
// it carrying {send|recv, global peer, bytes, group "pp_all"}; per batch one SendRecv kernel on
// stream 40 whose CommInfo says only {coalesced, group "pp_all"}, launched inside an
// `nccl:coalesced` CPU annotation (mirrored onto stream 40 under AnnotationStyle::kPpMirrored).
//
// LaunchStyle::kTorch launches the compute kernels of B and W ops from a second CPU thread
// (AutogradThreadId, as torch's autograd engine does) and names every compute kernel after a
// cuBLAS GEMM of its phase's operand layout ("ampere_bf16_s16816gemm_..._tn" / "_nn" / "_nt").
// With ModelParallel (config.h) each rank is one copy of its pipeline rank; its in-stage
// communication runs on the tensor- (44), data- (48) and expert-parallel (60) groups' streams,
// ring attention's transfers on the streams of the CP ring's pair communicators (52 with the next
// CP rank, 56 with the previous); docs/simulator.md lists names, args and groups.
// Vendor::kRocm spells the runtime calls hipLaunchKernel / hipDeviceSynchronize (the writer then
// adds roctracer's text stream handle), names the device an MI250X and the GEMMs as hipBLASLt
// does ("Cijk_Alik_Bljk_...").
#pragma once

#include "bubblescope/trace.h"
#include "schedule_engine/config.h"
#include "schedule_engine/records.h"

namespace bubblescope::sim {

// The name of a simulated rank's host: "sim-host-<h>" with ranks_per_host, written by the traces
// as their host_name; alone it names the machine of a job whose traces name none (the worker
// name of its profiler cycle files, simulated_set.h).
inline constexpr char kSimulatedHostName[] = "sim-host";

// Stream ids of a simulated rank.
inline constexpr int64_t kComputeStreamId = 7;
int64_t StreamId(StreamRole role);
// Process id of a simulated rank's CPU thread (its thread id is the same number).
int64_t ProcessId(int32_t rank);
// Thread id of a rank's autograd engine thread (LaunchStyle::kTorch).
int64_t AutogradThreadId(int32_t rank);

Trace BuildTrace(const Config& config, const Records& records);

}  // namespace bubblescope::sim
