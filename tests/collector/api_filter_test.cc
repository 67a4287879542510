// Which runtime and driver calls are host queries: every name seen in a recorded PyTorch step on
// an H100 (scripts/gpu-check.sh), split by whether a GPU op carried its correlation id there.
#include "api_filter.h"

#include <string_view>

#include "gtest/gtest.h"

namespace bubblescope::collector {
namespace {

TEST(ApiFilterTest, QueriesSeenInATorchStepAreLeftOut) {
  for (std::string_view name : {"cudaGetDevice",
                                "cudaGetLastError",
                                "cudaDeviceGetAttribute",
                                "cudaFuncGetAttributes",
                                "cudaStreamIsCapturing",
                                "cudaFuncSetAttribute",
                                "cudaOccupancyMaxActiveClusters",
                                "cudaGetDeviceCount",
                                "cudaGetDriverEntryPointByVersion",
                                "cudaGetDeviceProperties",
                                "cudaOccupancyAvailableDynamicSMemPerBlock",
                                "cudaDeviceGetStreamPriorityRange",
                                "cudaGetSymbolAddress",
                                "cudaPeekAtLastError",
                                "cudaStreamQuery",
                                "cudaEventQuery",
                                "cudaStreamGetCaptureInfo",
                                "cuDevicePrimaryCtxGetState",
                                "cuKernelGetName",
                                "cuCtxGetCurrent",
                                "cuGetProcAddress",
                                "cuKernelGetFunction",
                                "cuFuncGetAttribute",
                                "cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags",
                                "cuDeviceGetAttribute",
                                "cuLibraryGetKernel",
                                "cuModuleGetLoadingMode",
                                "cuDeviceGet",
                                "cuDriverGetVersion"}) {
    EXPECT_TRUE(IsHostQueryApi(name)) << name;
  }
}

TEST(ApiFilterTest, CallsThatLaunchWaitOrAllocateAreKept) {
  for (std::string_view name :
       {"cudaLaunchKernel", "cudaLaunchKernelExC", "cudaMemsetAsync", "cudaMemcpyAsync",
        "cudaMalloc", "cudaFree", "cudaDeviceSynchronize", "cudaStreamSynchronize",
        "cudaEventSynchronize", "cudaStreamWaitEvent", "cudaEventRecord", "cudaGraphLaunch",
        "cudaEventCreateWithFlags", "cudaStreamCreate", "cuLaunchKernel", "cuLaunchKernelEx",
        "cuMemcpyHtoDAsync", "cuInit", "cuLibraryLoadData", "cuStreamWaitValue32",
        // Words that merely contain a query verb.
        "cudaMemcpyToSymbolAsync", "cuTargetLaunch"}) {
    EXPECT_FALSE(IsHostQueryApi(name)) << name;
  }
}

TEST(ApiFilterTest, NamesOutsideCudaAreNotQueries) {
  for (std::string_view name : {"", "cu", "cuda", "cudaget", "hipGetDevice", "cublasGetVersion",
                                "ncclGetUniqueId", "GetDevice"}) {
    EXPECT_FALSE(IsHostQueryApi(name)) << name;
  }
}

}  // namespace
}  // namespace bubblescope::collector
