// What the names of operators and kernels say, whatever format carried them: torch's operator
// and range names (c10d and gloo communication, namespaced operators, ProfilerStep#N, dtype
// names) and the communication libraries' kernel names (NCCL, RCCL, HCCL, DeepEP). Kineto JSON
// and Nsight exports hold the same names (torch's ranges reach Nsight through NVTX), so every
// reader, and the rank index, reads them through these rules and no other.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "bubblescope/trace.h"

namespace bubblescope::op_names {

// True for NCCL/RCCL/HCCL kernels: the name contains nccl, rccl or hccl, with "ccl" spelled
// ccl, CCL or Ccl and the letter before it in either case (ncclKernel_*, NCCL*, RCCL, hccl).
bool IsCommKernelName(std::string_view kernel_name);

// What a communication kernel does, nullopt for compute: NCCL/RCCL/HCCL kernels by their name
// (CommKindFromName), and expert-parallel all-to-all kernels, which move tokens between ranks
// over NVLink/RDMA without NCCL: DeepEP's dispatch/combine and their notify/cached kernels
// (namespaces deep_ep::intranode, ::internode, ::internode_ll; DeepSeek's own traces spell them
// dpsk::ep::internode, ...). Its layout kernel get_dispatch_layout (deep_ep::layout, early
// releases' deep_ep::internode, DeepSeek's dpsk::ep::cuda) only computes, and stays compute.
std::optional<CommKind> CommKernelKind(std::string_view kernel_name);

// The kind of a collective from a "Collective name" arg ("send", "all_to_allv", "allreduce"),
// a kernel name ("ncclDevKernel_SendRecv(...)") or a CPU op name ("c10d::allreduce_").
CommKind CommKindFromName(std::string_view name);

// Whether a CPU event's name is an operator's. Torch built without Kineto exports every
// RecordFunction as a plain "X" event with no category: operators always carry a namespace
// ("aten::mm", "c10d::send", "autograd::engine::evaluate_function: MmBackward0"), while
// record_function ranges ("PP:F3", "gloo:send", "Optimizer.step#SGD.step", "ProfilerStep#2")
// and autograd nodes ("MmBackward0") do not. So such an event is a user range unless its name
// holds "::".
bool IsOperatorName(std::string_view name);

// How torch names the CPU range of an autograd node's backward call
// ("autograd::engine::evaluate_function: MmBackward0").
inline constexpr std::string_view kAutogradNodePrefix = "autograd::engine::evaluate_function";

// The communication kind of a CPU op that is communication (gloo:*, nccl:*, c10d:: collectives and
// p2p, record_param_comms), nullopt for every other op (c10d utilities included).
std::optional<CommKind> CpuCommOpKind(std::string_view op_name);

// Bytes per element of a torch dtype name as Kineto writes it ("Float", "BFloat16"), -1 unknown.
int DtypeSize(std::string_view dtype);

// Whether a runtime or driver call's name is a launch of device work: CUDA's and HIP's kernel
// launches (cudaLaunchKernel, cudaLaunchKernelExC, cuLaunchKernel, hipLaunchKernel,
// hipExtLaunchKernel, the cooperative ones) and graph launches (cudaGraphLaunch, hipGraphLaunch).
bool IsDeviceLaunchName(std::string_view runtime_name);

// N of a "ProfilerStep#N" name, nullopt for any other name.
std::optional<int64_t> ProfilerStepNumber(std::string_view name);

}  // namespace bubblescope::op_names
