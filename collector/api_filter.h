// Which CUDA runtime and driver calls the collector leaves out of its trace by default.
//
// A PyTorch training step makes about 15 runtime calls per kernel it launches, and all but one
// only ask or set host-side state: on an H100 running a small transformer (scripts/gpu-check.sh,
// 2026-11-26) 79,129 of 94,768 runtime records were cudaGetDevice and 25,343 of 35,116 driver
// records cuDevicePrimaryCtxGetState, while 6,434 runtime and 500 driver records launched the
// GPU work the analyses read (they pair a launch with its kernel by correlation id). Recording
// the queries made the trace 4x larger and every one costs CUPTI a record. They stay available
// as the opt-in kind `queries` (BUBBLESCOPE_KINDS).
#pragma once

#include <string_view>

namespace bubblescope::collector {

// True for a call that only queries or configures host-side state and never enqueues GPU work
// or waits for it: its verb is Get, Peek, Query or Is (cudaGetDevice, cuKernelGetName,
// cudaPeekAtLastError, cudaStreamQuery, cudaStreamIsCapturing), it computes occupancy, or it sets
// a function attribute. `name` is the API's name without CUPTI's "_vNNNN" suffix, "cuda..." for
// the runtime, "cu..." for the driver; anything else is false.
bool IsHostQueryApi(std::string_view name);

}  // namespace bubblescope::collector
