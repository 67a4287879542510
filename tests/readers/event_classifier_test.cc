#include "readers/event_classifier.h"

#include "gtest/gtest.h"

namespace bubblescope::kineto {
namespace {

TEST(EventClassifierTest, Categories) {
  EXPECT_EQ(ClassifyCategory("kernel"), EventCategory::kKernel);
  EXPECT_EQ(ClassifyCategory("Kernel"), EventCategory::kKernel);
  EXPECT_EQ(ClassifyCategory("gpu_memcpy"), EventCategory::kMemcpy);
  EXPECT_EQ(ClassifyCategory("Memset"), EventCategory::kMemset);
  EXPECT_EQ(ClassifyCategory("cuda_runtime"), EventCategory::kRuntime);
  EXPECT_EQ(ClassifyCategory("cuda_driver"), EventCategory::kRuntime);
  EXPECT_EQ(ClassifyCategory("cpu_op"), EventCategory::kCpuOp);
  EXPECT_EQ(ClassifyCategory("Operator"), EventCategory::kCpuOp);
  EXPECT_EQ(ClassifyCategory("user_annotation"), EventCategory::kUserAnnotation);
  EXPECT_EQ(ClassifyCategory("gpu_user_annotation"), EventCategory::kGpuUserAnnotation);
  EXPECT_EQ(ClassifyCategory("ac2g"), EventCategory::kFlow);
  EXPECT_EQ(ClassifyCategory("[memory]"), EventCategory::kMemory);
  EXPECT_EQ(ClassifyCategory("python_function"), EventCategory::kOther);
  EXPECT_EQ(ClassifyCategory("Trace"), EventCategory::kOther);
  EXPECT_EQ(ClassifyCategory("kernels"), EventCategory::kOther);
}

}  // namespace
}  // namespace bubblescope::kineto
