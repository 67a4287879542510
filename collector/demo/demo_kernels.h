// The demo job's GPU work: stand-ins for a layer's forward and backward pass that keep the GPU
// busy for a controllable time. Compiled by nvcc (demo_kernels.cu); the host program only calls
// these launchers, so it builds with the project's C++ compiler and warnings.
#pragma once

#include <cuda_runtime_api.h>

namespace bubblescope::demo {

// Launches `kernels` forward-layer kernels over `elements` floats of `data` on `stream`, each
// repeating its arithmetic `rounds` times per element (the knob for how long a kernel runs).
cudaError_t LaunchForwardLayers(float* data, int elements, int kernels, int rounds,
                                cudaStream_t stream);

// The same for the backward pass, whose kernels do twice a forward kernel's work (as a layer's
// backward, computing two gradients, roughly does).
cudaError_t LaunchBackwardLayers(float* data, int elements, int kernels, int rounds,
                                 cudaStream_t stream);

}  // namespace bubblescope::demo
