// The CUPTI activity record structs the collector reads, chosen by the CUPTI version it is built
// against. Only the header is used here (plain structs); nothing in this file calls CUPTI.
#pragma once

#include <cupti_activity.h>
#include <cupti_version.h>

namespace bubblescope::collector {

#if CUPTI_API_VERSION >= 130000
// CUDA 13: the newest struct of each kind (cupti_activity.h; older ones are in
// cupti_activity_deprecated.h). CUPTI fills the struct version matching its own header.
using KernelRecord = CUpti_ActivityKernel10;      // CONCURRENT_KERNEL
using MemcpyRecord = CUpti_ActivityMemcpy6;       // MEMCPY
using MemsetRecord = CUpti_ActivityMemset4;       // MEMSET
using MemoryRecord = CUpti_ActivityMemory4;       // MEMORY2
using MarkerRecord = CUpti_ActivityMarker2;       // MARKER
using MarkerDataRecord = CUpti_ActivityMarkerData2;  // MARKER_DATA
using ApiRecord = CUpti_ActivityAPI;              // RUNTIME, DRIVER
using DeviceRecord = CUpti_ActivityDevice5;       // DEVICE
#else
#error "bubblescope's collector needs CUPTI from CUDA 13 or later (CUPTI_API_VERSION >= 130000)"
#endif

}  // namespace bubblescope::collector
