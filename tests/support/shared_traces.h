// The third-party traces in ../shared/traces (BUBBLESCOPE_SHARED_DIR): tests that read them skip
// when the folder is absent on a developer's machine, and fail when CI runs (.ci/run sets
// BUBBLESCOPE_REQUIRE_SHARED=1), so a CI without the data cannot pass by skipping them.
#pragma once

#include <filesystem>
#include <string>

#include "gtest/gtest.h"

namespace bubblescope::testing {

// The full path of `relative` under the shared traces folder ("param_dlrm_8rank/...").
std::string SharedTracePath(const std::string& relative);

// True when the shared traces are required to be present (CI).
bool SharedTracesRequired();

}  // namespace bubblescope::testing

// Ends the test when `path` does not exist: a skip on a developer's machine, a failure in CI.
#define BUBBLESCOPE_NEED_SHARED(path)                                                      \
  do {                                                                                     \
    if (!std::filesystem::exists(path)) {                                                  \
      if (::bubblescope::testing::SharedTracesRequired()) {                                \
        FAIL() << "shared trace " << (path) << " is missing (BUBBLESCOPE_REQUIRE_SHARED)"; \
      }                                                                                    \
      GTEST_SKIP() << "shared trace " << (path) << " not found";                           \
    }                                                                                      \
  } while (false)
