#include "bubblescope/op_names.h"

#include <string_view>

#include "gtest/gtest.h"

namespace bubblescope::op_names {
namespace {

TEST(OpNamesTest, CommKernelNames) {
  EXPECT_TRUE(IsCommKernelName("ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)"));
  EXPECT_TRUE(IsCommKernelName("ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*)"));
  EXPECT_TRUE(IsCommKernelName("void nccl::kernel<float>(int)"));
  EXPECT_TRUE(IsCommKernelName("NCCL_AllGather"));
  EXPECT_TRUE(IsCommKernelName("Nccl_Broadcast"));
  EXPECT_TRUE(IsCommKernelName("rcclGenericKernel<1>"));
  EXPECT_TRUE(IsCommKernelName("hcclAllReduce"));
  EXPECT_FALSE(IsCommKernelName("void at::native::vectorized_elementwise_kernel<4>"));
  EXPECT_FALSE(IsCommKernelName("ccl_allreduce"));  // no n/r/h before "ccl"
  EXPECT_FALSE(IsCommKernelName("accl"));
  EXPECT_FALSE(IsCommKernelName(""));
}

// Expert-parallel kernels are all-to-all communication whatever their template arguments say
// (a "reduce" or "send" there must not decide it); DeepEP's layout kernel is compute.
TEST(OpNamesTest, CommKernelKinds) {
  EXPECT_EQ(CommKernelKind("void deep_ep::internode::dispatch<false, 8, 7>(int4*, float*)"),
            CommKind::kAllToAll);
  EXPECT_EQ(CommKernelKind("void deep_ep::intranode::combine<nv_bfloat16, 8, 768>(reduce_t*)"),
            CommKind::kAllToAll);
  EXPECT_EQ(CommKernelKind("void deep_ep::internode_ll::dispatch<true, 3, 7168>(void*)"),
            CommKind::kAllToAll);
  EXPECT_EQ(CommKernelKind("void deep_ep::intranode::notify_dispatch<8>(int const*)"),
            CommKind::kAllToAll);
  EXPECT_EQ(CommKernelKind("dpsk::ep::internode::combine(send_buffer)"), CommKind::kAllToAll);
  EXPECT_EQ(CommKernelKind("void deep_ep::layout::get_dispatch_layout<256, 32, 8>(long const*)"),
            std::nullopt);
  // DeepSeek's traces: dispatch / combine / notify kernels under dpsk::ep::internode are
  // all-to-all; the layout kernel (dpsk::ep::cuda::) and CUB's scan kernels under cdpsk::ep::
  // compute. Early DeepEP kept the layout kernel in internode::, where it still computes.
  EXPECT_EQ(CommKernelKind("void dpsk::ep::internode::notify_dispatch<false, 4>(int const*)"),
            CommKind::kAllToAll);
  EXPECT_EQ(CommKernelKind("void dpsk::ep::internode::dispatch_ll<true, 3>(void*)"),
            CommKind::kAllToAll);
  EXPECT_EQ(CommKernelKind("void dpsk::ep::cuda::get_dispatch_layout<256, 32, 8>(long const*)"),
            std::nullopt);
  EXPECT_EQ(CommKernelKind("void cdpsk::ep::CUB_DeviceScanKernel<int*>(int*)"), std::nullopt);
  EXPECT_EQ(CommKernelKind("void deep_ep::internode::get_dispatch_layout<256, 32, 8>(long const*)"),
            std::nullopt);
  EXPECT_EQ(CommKernelKind("ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage)"),
            CommKind::kAllReduce);
  EXPECT_EQ(CommKernelKind("ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)"),
            CommKind::kSendRecv);
  EXPECT_EQ(CommKernelKind("sm90_xmma_gemm_bf16bf16_bf16f32"), std::nullopt);
}

TEST(OpNamesTest, CommKindFromCollectiveAndKernelNames) {
  EXPECT_EQ(CommKindFromName("send"), CommKind::kSend);
  EXPECT_EQ(CommKindFromName("recv"), CommKind::kRecv);
  EXPECT_EQ(CommKindFromName("allreduce"), CommKind::kAllReduce);
  EXPECT_EQ(CommKindFromName("all_reduce"), CommKind::kAllReduce);
  EXPECT_EQ(CommKindFromName("all_to_allv"), CommKind::kAllToAll);
  EXPECT_EQ(CommKindFromName("all_to_all"), CommKind::kAllToAll);
  EXPECT_EQ(CommKindFromName("_allgather_base"), CommKind::kAllGather);
  EXPECT_EQ(CommKindFromName("reduce_scatter_tensor_coalesced"), CommKind::kReduceScatter);
  EXPECT_EQ(CommKindFromName("broadcast"), CommKind::kBroadcast);
  EXPECT_EQ(CommKindFromName("reduce"), CommKind::kReduce);
  EXPECT_EQ(CommKindFromName("barrier"), CommKind::kBarrier);
  EXPECT_EQ(CommKindFromName("gather"), CommKind::kUnknown);
  EXPECT_EQ(CommKindFromName("ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)"),
            CommKind::kSendRecv);
  EXPECT_EQ(CommKindFromName("ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclDevComm*)"),
            CommKind::kSendRecv);
  EXPECT_EQ(CommKindFromName("ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage)"),
            CommKind::kAllGather);
  EXPECT_EQ(CommKindFromName("ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL(x)"),
            CommKind::kReduceScatter);
  EXPECT_EQ(CommKindFromName("ncclKernel_Broadcast_RING_LL_Sum_int8_t(x)"), CommKind::kBroadcast);
  EXPECT_EQ(CommKindFromName("ncclDevKernel_Generic(x)"), CommKind::kUnknown);
}

TEST(OpNamesTest, CpuCommOps) {
  EXPECT_EQ(CpuCommOpKind("c10d::send"), CommKind::kSend);
  EXPECT_EQ(CpuCommOpKind("c10d::recv_"), CommKind::kRecv);
  EXPECT_EQ(CpuCommOpKind("c10d::allreduce_"), CommKind::kAllReduce);
  EXPECT_EQ(CpuCommOpKind("c10d::_allgather_base_"), CommKind::kAllGather);
  EXPECT_EQ(CpuCommOpKind("c10d::alltoall_base_"), CommKind::kAllToAll);
  EXPECT_EQ(CpuCommOpKind("c10d::broadcast_"), CommKind::kBroadcast);
  EXPECT_EQ(CpuCommOpKind("c10d::barrier"), CommKind::kBarrier);
  EXPECT_EQ(CpuCommOpKind("c10d::gather_"), CommKind::kUnknown);
  EXPECT_EQ(CpuCommOpKind("gloo:all_reduce"), CommKind::kAllReduce);
  EXPECT_EQ(CpuCommOpKind("nccl:send"), CommKind::kSend);
  EXPECT_EQ(CpuCommOpKind("record_param_comms"), CommKind::kUnknown);
  EXPECT_FALSE(CpuCommOpKind("c10d::_resolve_process_group").has_value());
  EXPECT_FALSE(CpuCommOpKind("c10d::wait").has_value());
  EXPECT_FALSE(CpuCommOpKind("aten::mm").has_value());
  EXPECT_FALSE(CpuCommOpKind("ProfilerStep#1").has_value());
}

TEST(OpNamesTest, DtypeSizes) {
  EXPECT_EQ(DtypeSize("Float"), 4);
  EXPECT_EQ(DtypeSize("BFloat16"), 2);
  EXPECT_EQ(DtypeSize("Half"), 2);
  EXPECT_EQ(DtypeSize("Long"), 8);
  EXPECT_EQ(DtypeSize("Byte"), 1);
  EXPECT_EQ(DtypeSize("ComplexDouble"), 16);
  EXPECT_EQ(DtypeSize("float"), -1);
  EXPECT_EQ(DtypeSize("Mystery"), -1);
}

TEST(OpNamesTest, ProfilerStepNumbers) {
  EXPECT_EQ(ProfilerStepNumber("ProfilerStep#551"), 551);
  EXPECT_EQ(ProfilerStepNumber("ProfilerStep#0"), 0);
  EXPECT_FALSE(ProfilerStepNumber("ProfilerStep#").has_value());
  EXPECT_FALSE(ProfilerStepNumber("ProfilerStep#-1").has_value());
  EXPECT_FALSE(ProfilerStepNumber("ProfilerStep#1.5").has_value());
  EXPECT_FALSE(ProfilerStepNumber("ProfilerStep#12a").has_value());
  EXPECT_FALSE(ProfilerStepNumber("profilerstep#1").has_value());
  EXPECT_EQ(ProfilerStepNumber("ProfilerStep#9223372036854775807"), INT64_MAX);
  EXPECT_FALSE(ProfilerStepNumber("ProfilerStep#9223372036854775808").has_value());
}

TEST(OpNamesTest, DeviceLaunchNames) {
  for (const std::string_view launch :
       {"cudaLaunchKernel", "cudaLaunchKernelExC", "cuLaunchKernel", "cuLaunchKernelEx",
        "cudaLaunchCooperativeKernel", "hipLaunchKernel", "hipExtLaunchKernel", "cudaGraphLaunch",
        "hipGraphLaunch"}) {
    EXPECT_TRUE(IsDeviceLaunchName(launch)) << launch;
  }
  for (const std::string_view other : {"cudaMemcpyAsync", "cudaStreamSynchronize",
                                       "cudaLaunchHostFunc", "aten::mm", "LaunchKernel", ""}) {
    EXPECT_FALSE(IsDeviceLaunchName(other)) << other;
  }
}

}  // namespace
}  // namespace bubblescope::op_names
