// libbubblescope_cupti_handoff.so, preloaded as `record` preloads it, in front of a stand-in
// libcupti.so.13 that accepts one subscriber: a profiler library subscribing through the
// versioned reference libtorch makes reaches the hand-over first (named by its file) and then
// CUPTI, which now accepts it; the collector's own earlier subscription passes straight through.
// Without the preload the profiler is refused, as it is on a GPU without it.
#include <cstdio>
#include <string>

#include "gtest/gtest.h"

namespace bubblescope::collector {
namespace {

std::string RunProbe(const std::string& preload) {
  // ASan builds: a preloaded library ahead of ASan's runtime is what this test is about.
  std::string command = "ASAN_OPTIONS=verify_asan_link_order=0 ";
  if (!preload.empty()) command += "LD_PRELOAD=" + preload + " ";
  command += BUBBLESCOPE_HANDOFF_PROBE " 2>&1";
  std::string output;
  if (FILE* pipe = popen(command.c_str(), "r")) {
    char chunk[256];
    while (fgets(chunk, sizeof chunk, pipe) != nullptr) output += chunk;
    pclose(pipe);
  }
  return output;
}

TEST(CuptiHandoffTest, TheUsersProfilerGetsCuptiAfterTheCollectorHandsItOver) {
  EXPECT_EQ(RunProbe(BUBBLESCOPE_HANDOFF_LIBRARY),
            "collector subscribes: 0\n"
            "hand-off offered: yes\n"
            "hand-off to libbubblescope_fake_profiler.so\n"
            "profiler subscribes: 0\n"
            "profiler subscribes again: 39\n"
            "calls reaching CUPTI: 3\n");
}

TEST(CuptiHandoffTest, WithoutThePreloadTheProfilerIsRefused) {
  EXPECT_EQ(RunProbe(""),
            "collector subscribes: 0\n"
            "hand-off offered: no\n"
            "profiler subscribes: 39\n"
            "profiler subscribes again: 39\n"
            "calls reaching CUPTI: 3\n");
}

}  // namespace
}  // namespace bubblescope::collector
