#include "readers/event_classifier.h"

#include <array>
#include <utility>

#include "absl/strings/match.h"

namespace bubblescope::kineto {

EventCategory ClassifyCategory(std::string_view cat) {
  static constexpr std::array<std::pair<std::string_view, EventCategory>, 15> kCategories = {{
      {"kernel", EventCategory::kKernel},
      // Meta's MTIA accelerators: Kineto writes their device work under this category, not
      // "kernel" (a rank of nothing else read as a CPU rank, its device time lost).
      {"mtia_ccp_events", EventCategory::kKernel},
      {"cpu_op", EventCategory::kCpuOp},
      {"cuda_runtime", EventCategory::kRuntime},
      {"ac2g", EventCategory::kFlow},
      {"user_annotation", EventCategory::kUserAnnotation},
      {"gpu_user_annotation", EventCategory::kGpuUserAnnotation},
      {"gpu_memcpy", EventCategory::kMemcpy},
      {"gpu_memset", EventCategory::kMemset},
      {"cuda_driver", EventCategory::kRuntime},
      {"[memory]", EventCategory::kMemory},
      {"memcpy", EventCategory::kMemcpy},
      {"memset", EventCategory::kMemset},
      {"runtime", EventCategory::kRuntime},
      {"operator", EventCategory::kCpuOp},
  }};
  for (const auto& [name, category] : kCategories) {
    if (absl::EqualsIgnoreCase(absl::string_view(cat.data(), cat.size()),
                               absl::string_view(name.data(), name.size()))) {
      return category;
    }
  }
  return EventCategory::kOther;
}

}  // namespace bubblescope::kineto
