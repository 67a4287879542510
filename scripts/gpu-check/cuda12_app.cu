// A small CUDA application for the GPU check's step 7 (docs/collector-gpu-check.md): compiled by
// whatever nvcc the CPU machine has, but linked against CUDA 12.9's libcudart.so.12 (from the
// nvidia-cuda-runtime-cu12 wheel), so that on the GPU machine it is a CUDA 12 application, which
// the collector built against CUDA 12.9's CUPTI records.
//
// Three steps, each a ProfilerStep#N NVTX range: a copy in, four kernels, a memset, a copy out
// and a synchronisation. Prints the runtime's and the driver's CUDA versions and whether the
// arithmetic came out right; exits 1 on any CUDA error or wrong result.
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#include <cstdio>
#include <string>
#include <vector>

namespace {

constexpr int kSteps = 3;
constexpr int kKernelsPerStep = 4;
constexpr int kElements = 1 << 20;

__global__ void AddOne(float* data, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] += 1.0f;
}

bool Ok(cudaError_t result, const char* what) {
  if (result == cudaSuccess) return true;
  std::fprintf(stderr, "cuda12_app: %s: %s\n", what, cudaGetErrorString(result));
  return false;
}

}  // namespace

int main() {
  int runtime = 0;
  int driver = 0;
  if (!Ok(cudaRuntimeGetVersion(&runtime), "cudaRuntimeGetVersion") ||
      !Ok(cudaDriverGetVersion(&driver), "cudaDriverGetVersion")) {
    return 1;
  }
  std::printf("cuda12_app: runtime %d, driver %d\n", runtime, driver);
  cudaStream_t stream = nullptr;
  float* device = nullptr;
  std::vector<float> host(kElements, 0.0f);
  if (!Ok(cudaStreamCreate(&stream), "cudaStreamCreate") ||
      !Ok(cudaMalloc(&device, kElements * sizeof(float)), "cudaMalloc")) {
    return 1;
  }
  bool right = true;
  for (int step = 0; step < kSteps; ++step) {
    const std::string name = "ProfilerStep#" + std::to_string(step);
    nvtxRangePushA(name.c_str());
    for (float& value : host) value = static_cast<float>(step);
    if (!Ok(cudaMemcpyAsync(device, host.data(), kElements * sizeof(float), cudaMemcpyHostToDevice,
                            stream),
            "cudaMemcpyAsync in")) {
      return 1;
    }
    for (int k = 0; k < kKernelsPerStep; ++k) {
      AddOne<<<(kElements + 255) / 256, 256, 0, stream>>>(device, kElements);
      if (!Ok(cudaGetLastError(), "AddOne")) return 1;
    }
    // The memset covers the last element only, so the check below sees both it and the kernels.
    if (!Ok(cudaMemsetAsync(device + kElements - 1, 0, sizeof(float), stream), "cudaMemsetAsync") ||
        !Ok(cudaMemcpyAsync(host.data(), device, kElements * sizeof(float), cudaMemcpyDeviceToHost,
                            stream),
            "cudaMemcpyAsync out") ||
        !Ok(cudaStreamSynchronize(stream), "cudaStreamSynchronize")) {
      return 1;
    }
    nvtxRangePop();
    right = right && host[0] == static_cast<float>(step + kKernelsPerStep) &&
            host[kElements - 1] == 0.0f;
  }
  cudaFree(device);
  cudaStreamDestroy(stream);
  std::printf("cuda12_app: %d steps of %d kernels, results %s\n", kSteps, kKernelsPerStep,
              right ? "correct" : "WRONG");
  return right ? 0 : 1;
}
