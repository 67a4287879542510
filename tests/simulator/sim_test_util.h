// Shared helpers of the simulator tests.
#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "simulator/config.h"
#include "simulator/program.h"

namespace bubblescope::sim::testing {

// A job with free links (zero latency, infinite bandwidth), no launch gap, no optimizer, no
// jitter, one iteration and the same costs on every stage: the textbook pipeline.
inline Config IdealConfig(Schedule schedule, int32_t p, int32_t m, TimeNs forward, TimeNs backward,
                          int32_t v = 1) {
  Config config;
  config.schedule = schedule;
  config.stages = p;
  config.microbatches = m;
  config.virtual_stages = v;
  config.iterations = 1;
  config.costs.assign(static_cast<size_t>(p), StageCost{forward, backward, 0});
  config.kernels_per_op = 2;
  config.activation_bytes = 4096;
  config.link = Link{std::numeric_limits<double>::infinity(), 0};
  config.launch_gap_ns = 0;
  config.optimizer_ns = 0;
  config.jitter = 0.0;
  config.start_time_ns = 1'000'000;
  return config;
}

// "F0 F1 B0 ..." (with chunks: "F1:0" = chunk 1, microbatch 0).
inline std::string ProgramText(const std::vector<Op>& program, bool chunks) {
  std::string text;
  for (const Op& op : program) {
    if (!text.empty()) text += ' ';
    text += OpLetter(op.type);
    if (chunks) text += std::to_string(op.chunk) + ":";
    text += std::to_string(op.microbatch);
  }
  return text;
}

// Every schedule family, for tests parameterised over them, and their test names ("zbh1").
inline constexpr std::array<Schedule, 5> kAllSchedules = {
    Schedule::kGpipe, Schedule::k1F1B, Schedule::kInterleaved1F1B, Schedule::kZeroBubbleH1,
    Schedule::kForwardOnly};
inline std::string ScheduleTestName(const ::testing::TestParamInfo<Schedule>& param) {
  std::string name(ScheduleName(param.param));
  std::erase(name, '-');
  return name;
}

}  // namespace bubblescope::sim::testing
