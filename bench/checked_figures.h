// The figures the benchmark checks: every number `bubblescope analyze` reports about a simulated
// pipeline that the simulator's truth also states, taken once from a job::Result and once from a
// sim::Truth under the same names, so the two lists can be compared entry by entry. The figures
// travel between processes as text (the analysis runs in a forked child), so they serialise
// without loss.
//
// What must agree, and how exactly (as tests/job/file_grid_test.cc and
// tests/analysis/sim_bubble_test.cc hold the analysis to the truth): integers (times in ns,
// counts, bytes) and names exactly; fractions and means within 4 ULPs (GoogleTest's
// DOUBLE_EQ), since the analysis may add up the same exact integers in another order.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "absl/status/statusor.h"
#include "job/job.h"
#include "schedule_engine/config.h"
#include "schedule_engine/truth.h"

namespace bubblescope::bench {

struct Figure {
  std::string field;  // what it is: "bubble_fraction", "iteration.fill_ns"
  std::string where;  // which one: "iteration 3 rank 5"; empty for a figure of the whole job
  std::variant<int64_t, double, std::string> value;
};

using Figures = std::vector<Figure>;

// The job's figures of its first pipeline (a simulated set has exactly one), with the pipeline
// count itself, so a job that found more or none fails on that figure.
Figures FiguresOfJob(const job::Result& result);

// What the job's figures must be for the simulated job `config`. The analysis reports times on
// the clock of the first stage's rank; the truth keeps the true clock, so its instants are moved
// by that rank's clock offset.
Figures FiguresOfTruth(const sim::Config& config, const sim::Truth& truth);

// One figure per line: field, where, type tag and value, tab-separated; doubles in their shortest
// exact decimal form.
std::string SerializeFigures(const Figures& figures);
absl::StatusOr<Figures> ParseFigures(std::string_view text);

// The comparison of one field over all its instances.
struct FieldCheck {
  std::string field;
  int64_t compared = 0;    // instances in the truth
  int64_t mismatched = 0;  // differing, missing from the analysis, or only in the analysis
  std::string first_mismatch;
};

// One check per field, in the truth's order (fields only the analysis has come last).
std::vector<FieldCheck> CompareFigures(const Figures& truth, const Figures& analysis);

}  // namespace bubblescope::bench
