// The CUPTI activity record structs the collector reads, chosen by the CUPTI version it is built
// against (CUDA 12.0 to 13.x). Only the header is used here (plain structs); nothing in this file
// calls CUPTI.
//
// CUPTI fills each record in the newest struct version of the library that runs, and newer
// versions only append fields (tests/collector/record_versions_test.cc checks that every field
// the translator reads sits at the same offset in each version chosen below), so a collector built
// against an older CUDA 12 header reads a newer CUPTI's records correctly. Which struct each
// toolkit's cupti_activity.h has (the rest are in cupti_activity_deprecated.h or absent):
//
//   CUPTI_API_VERSION     18 (12.0, 12.1)  20 (12.2)  24 (12.6)  26 (12.8)  130000 (13.0)
//   CONCURRENT_KERNEL     Kernel9                                          Kernel10
//   MEMCPY                Memcpy5                                Memcpy6
//   MEMSET                Memset4
//   MEMORY2               Memory3                     Memory4
//   MARKER                Marker2
//   MARKER_DATA           MarkerData                                       MarkerData2
//   RUNTIME, DRIVER       API
//   DEVICE                Device4          Device5
#pragma once

#include <cupti_activity.h>
#include <cupti_version.h>

// CUDA 11.8's CUPTI has the same CUPTI_API_VERSION (18) as 12.0's but no Kernel9: cuda.h, which
// cupti_activity.h includes, tells them apart.
#if CUPTI_API_VERSION < 18 || (CUPTI_API_VERSION == 18 && CUDA_VERSION < 12000)
#error "bubblescope's collector needs CUPTI from CUDA 12.0 or later"
#endif

namespace bubblescope::collector {

#if CUPTI_API_VERSION >= 130000
using KernelRecord = CUpti_ActivityKernel10;
using MarkerDataRecord = CUpti_ActivityMarkerData2;
#else
using KernelRecord = CUpti_ActivityKernel9;
using MarkerDataRecord = CUpti_ActivityMarkerData;
#endif

#if CUPTI_API_VERSION >= 26
using MemcpyRecord = CUpti_ActivityMemcpy6;
#else
using MemcpyRecord = CUpti_ActivityMemcpy5;
#endif

#if CUPTI_API_VERSION >= 24
using MemoryRecord = CUpti_ActivityMemory4;
#else
using MemoryRecord = CUpti_ActivityMemory3;
#endif

#if CUPTI_API_VERSION >= 20
using DeviceRecord = CUpti_ActivityDevice5;
#else
using DeviceRecord = CUpti_ActivityDevice4;
#endif

using MemsetRecord = CUpti_ActivityMemset4;
using MarkerRecord = CUpti_ActivityMarker2;
using ApiRecord = CUpti_ActivityAPI;  // RUNTIME and DRIVER

}  // namespace bubblescope::collector
