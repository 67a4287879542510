// CUPTI fills records in the newest struct version of the library that runs, which may be newer
// than the header the collector was built with (a CUDA 12.0 build under CUDA 12.9's libcupti).
// That is only correct while every field the translator reads keeps its offset from one struct
// version to the next: checked here between the struct this build chose (cupti_records.h) and
// the one a CUDA 12.0 build chooses, which every supported header set still declares.
#include <cstddef>

#include "cupti_records.h"
#include "gtest/gtest.h"

namespace bubblescope::collector {
namespace {

#define EXPECT_SAME_OFFSET(Chosen, Oldest, field) \
  EXPECT_EQ(offsetof(Chosen, field), offsetof(Oldest, field)) << #Oldest "::" #field

TEST(RecordVersionsTest, KernelFieldsKeepTheirOffsets) {
  EXPECT_GE(sizeof(KernelRecord), sizeof(CUpti_ActivityKernel9));
  EXPECT_SAME_OFFSET(KernelRecord, CUpti_ActivityKernel9, kind);
  EXPECT_SAME_OFFSET(KernelRecord, CUpti_ActivityKernel9, start);
  EXPECT_SAME_OFFSET(KernelRecord, CUpti_ActivityKernel9, end);
  EXPECT_SAME_OFFSET(KernelRecord, CUpti_ActivityKernel9, deviceId);
  EXPECT_SAME_OFFSET(KernelRecord, CUpti_ActivityKernel9, contextId);
  EXPECT_SAME_OFFSET(KernelRecord, CUpti_ActivityKernel9, streamId);
  EXPECT_SAME_OFFSET(KernelRecord, CUpti_ActivityKernel9, correlationId);
  EXPECT_SAME_OFFSET(KernelRecord, CUpti_ActivityKernel9, registersPerThread);
  EXPECT_SAME_OFFSET(KernelRecord, CUpti_ActivityKernel9, staticSharedMemory);
  EXPECT_SAME_OFFSET(KernelRecord, CUpti_ActivityKernel9, dynamicSharedMemory);
  EXPECT_SAME_OFFSET(KernelRecord, CUpti_ActivityKernel9, gridX);
  EXPECT_SAME_OFFSET(KernelRecord, CUpti_ActivityKernel9, gridY);
  EXPECT_SAME_OFFSET(KernelRecord, CUpti_ActivityKernel9, gridZ);
  EXPECT_SAME_OFFSET(KernelRecord, CUpti_ActivityKernel9, blockX);
  EXPECT_SAME_OFFSET(KernelRecord, CUpti_ActivityKernel9, blockY);
  EXPECT_SAME_OFFSET(KernelRecord, CUpti_ActivityKernel9, blockZ);
  EXPECT_SAME_OFFSET(KernelRecord, CUpti_ActivityKernel9, name);
}

TEST(RecordVersionsTest, MemcpyFieldsKeepTheirOffsets) {
  EXPECT_GE(sizeof(MemcpyRecord), sizeof(CUpti_ActivityMemcpy5));
  EXPECT_SAME_OFFSET(MemcpyRecord, CUpti_ActivityMemcpy5, kind);
  EXPECT_SAME_OFFSET(MemcpyRecord, CUpti_ActivityMemcpy5, copyKind);
  EXPECT_SAME_OFFSET(MemcpyRecord, CUpti_ActivityMemcpy5, srcKind);
  EXPECT_SAME_OFFSET(MemcpyRecord, CUpti_ActivityMemcpy5, dstKind);
  EXPECT_SAME_OFFSET(MemcpyRecord, CUpti_ActivityMemcpy5, bytes);
  EXPECT_SAME_OFFSET(MemcpyRecord, CUpti_ActivityMemcpy5, start);
  EXPECT_SAME_OFFSET(MemcpyRecord, CUpti_ActivityMemcpy5, end);
  EXPECT_SAME_OFFSET(MemcpyRecord, CUpti_ActivityMemcpy5, deviceId);
  EXPECT_SAME_OFFSET(MemcpyRecord, CUpti_ActivityMemcpy5, contextId);
  EXPECT_SAME_OFFSET(MemcpyRecord, CUpti_ActivityMemcpy5, streamId);
  EXPECT_SAME_OFFSET(MemcpyRecord, CUpti_ActivityMemcpy5, correlationId);
}

TEST(RecordVersionsTest, MemoryFieldsKeepTheirOffsets) {
  EXPECT_GE(sizeof(MemoryRecord), sizeof(CUpti_ActivityMemory3));
  EXPECT_SAME_OFFSET(MemoryRecord, CUpti_ActivityMemory3, kind);
  EXPECT_SAME_OFFSET(MemoryRecord, CUpti_ActivityMemory3, memoryOperationType);
  EXPECT_SAME_OFFSET(MemoryRecord, CUpti_ActivityMemory3, memoryKind);
  EXPECT_SAME_OFFSET(MemoryRecord, CUpti_ActivityMemory3, address);
  EXPECT_SAME_OFFSET(MemoryRecord, CUpti_ActivityMemory3, bytes);
  EXPECT_SAME_OFFSET(MemoryRecord, CUpti_ActivityMemory3, timestamp);
  EXPECT_SAME_OFFSET(MemoryRecord, CUpti_ActivityMemory3, processId);
  EXPECT_SAME_OFFSET(MemoryRecord, CUpti_ActivityMemory3, deviceId);
}

TEST(RecordVersionsTest, DeviceFieldsKeepTheirOffsets) {
  EXPECT_GE(sizeof(DeviceRecord), sizeof(CUpti_ActivityDevice4));
  EXPECT_SAME_OFFSET(DeviceRecord, CUpti_ActivityDevice4, kind);
  EXPECT_SAME_OFFSET(DeviceRecord, CUpti_ActivityDevice4, id);
  EXPECT_SAME_OFFSET(DeviceRecord, CUpti_ActivityDevice4, name);
  EXPECT_SAME_OFFSET(DeviceRecord, CUpti_ActivityDevice4, globalMemorySize);
  EXPECT_SAME_OFFSET(DeviceRecord, CUpti_ActivityDevice4, computeCapabilityMajor);
  EXPECT_SAME_OFFSET(DeviceRecord, CUpti_ActivityDevice4, computeCapabilityMinor);
  EXPECT_SAME_OFFSET(DeviceRecord, CUpti_ActivityDevice4, numMultiprocessors);
}

TEST(RecordVersionsTest, MarkerDataFieldsKeepTheirOffsets) {
  EXPECT_GE(sizeof(MarkerDataRecord), sizeof(CUpti_ActivityMarkerData));
  EXPECT_SAME_OFFSET(MarkerDataRecord, CUpti_ActivityMarkerData, kind);
  EXPECT_SAME_OFFSET(MarkerDataRecord, CUpti_ActivityMarkerData, flags);
  EXPECT_SAME_OFFSET(MarkerDataRecord, CUpti_ActivityMarkerData, id);
  EXPECT_SAME_OFFSET(MarkerDataRecord, CUpti_ActivityMarkerData, color);
}

#undef EXPECT_SAME_OFFSET

}  // namespace
}  // namespace bubblescope::collector
