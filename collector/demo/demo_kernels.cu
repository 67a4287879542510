#include "demo_kernels.h"

namespace bubblescope::demo {
namespace {

constexpr int kThreadsPerBlock = 256;

// The names say which phase a kernel belongs to, as real frameworks' kernel names often do.
__global__ void demo_forward_layer(float* data, int elements, int rounds) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= elements) return;
  float value = data[i];
  for (int r = 0; r < rounds; ++r) value = value * 0.999f + 0.001f;
  data[i] = value;
}

__global__ void demo_backward_layer(float* data, int elements, int rounds) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= elements) return;
  float value = data[i];
  for (int r = 0; r < 2 * rounds; ++r) value = value * 0.998f + 0.002f;
  data[i] = value;
}

int Blocks(int elements) { return (elements + kThreadsPerBlock - 1) / kThreadsPerBlock; }

}  // namespace

cudaError_t LaunchForwardLayers(float* data, int elements, int kernels, int rounds,
                                cudaStream_t stream) {
  for (int k = 0; k < kernels; ++k) {
    demo_forward_layer<<<Blocks(elements), kThreadsPerBlock, 0, stream>>>(data, elements, rounds);
  }
  return cudaGetLastError();
}

cudaError_t LaunchBackwardLayers(float* data, int elements, int kernels, int rounds,
                                 cudaStream_t stream) {
  for (int k = 0; k < kernels; ++k) {
    demo_backward_layer<<<Blocks(elements), kThreadsPerBlock, 0, stream>>>(data, elements, rounds);
  }
  return cudaGetLastError();
}

}  // namespace bubblescope::demo
