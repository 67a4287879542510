// The simulated job the HTML tests draw: p stages on the ranks in reverse order (so stage and
// rank differ), 1 MiB activations on 100 Gbit/s links, launch gaps and an optimizer step, and
// memory every chart can show (3 GiB of weights and optimizer state per stage, 256 MiB per
// in-flight activation).
#pragma once

#include <cstdint>

#include "schedule_engine/config.h"

namespace bubblescope::html_testing {

inline sim::Config HtmlTestJob(sim::Schedule schedule, int32_t p, int32_t m, int32_t iterations,
                               sim::StageCost cost, double jitter) {
  sim::Config config;
  config.schedule = schedule;
  config.stages = p;
  config.microbatches = m;
  config.iterations = iterations;
  config.costs.assign(static_cast<size_t>(p), cost);
  config.activation_bytes = int64_t{1} << 20;
  config.link = sim::Link{.gbps = 100.0, .latency_ns = 0};
  config.launch_gap_ns = 2000;
  config.optimizer_ns = 50'000;
  config.jitter = jitter;
  config.weights_bytes.assign(static_cast<size_t>(p), int64_t{3} << 30);
  config.activation_stash_bytes = int64_t{256} << 20;
  for (int32_t s = 0; s < p; ++s) config.stage_to_rank.push_back(p - 1 - s);
  return config;
}

}  // namespace bubblescope::html_testing
