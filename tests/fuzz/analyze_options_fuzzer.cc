// Fuzz target for the analysis options: job::Options as `bubblescope analyze` fills them
// (--iteration-marker, --layers-per-stage, --slow-link-threshold) and the thresholds that have no
// flag (findings, link findings, slow links), on a fixed set of small valid jobs simulated in
// process once, through the job driver and both reports. The CLI's own parsing of these flags is
// CLI11's and lives in cli/; what reaches job::Analyze is what is fuzzed here, in the domains the
// flags allow (layer counts >= 1, the threshold in [0, 1]).
//
// Input (fuzz_input.h): the iteration marker (an RE2 pattern) is the contents; from the end: the
// job (gpipe, 1f1b, interleaved, zb-h1, fwd-only; each with its own annotations, clocks and
// imbalance), whether the marker is given, up to six layer counts (mostly 1 to 16, one in eight
// any int32 >= 1), the slow-link threshold and minimum links per class, the four findings
// thresholds and the two link-findings thresholds, and per rank which `bubblescope:layers=N`
// annotations it declares (none, one of six names, or two that disagree), so the rebalance
// suggestion also reads counts from the trace.
//
// Checks: the analysis fails only with InvalidArgument, and exactly when the marker does not
// compile or the layer counts do not fit; otherwise as job_fuzzer (reports written, JSON).
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "fuzz_checks.h"
#include "fuzz_input.h"
#include "re2/re2.h"
#include "synth/synthetic_job.h"

namespace {

using namespace bubblescope;  // NOLINT(build/namespaces): a fuzz target's private helpers

// The layer annotations a rank may declare; the last two are not whole numbers from 1 to 1e6.
constexpr std::array<std::string_view, 6> kLayerNames = {
    "bubblescope:layers=1",       "bubblescope:layers=4",       "bubblescope:layers=8",
    "bubblescope:layers=1000000", "bubblescope:layers=1000001", "bubblescope:layers=x"};

sim::Config Job(sim::Schedule schedule, int32_t p, int32_t m, int32_t v) {
  sim::Config config;
  config.schedule = schedule;
  config.stages = p;
  config.microbatches = m;
  config.virtual_stages = v;
  config.iterations = 2;
  config.costs.assign(static_cast<size_t>(p), sim::StageCost{1'000'000, 2'000'000, 700'000});
  config.kernels_per_op = 2;
  config.activation_bytes = int64_t{1} << 20;
  config.link = sim::Link{100.0, 5'000};
  config.launch_gap_ns = 5'000;
  return config;
}

// Five small jobs, one per schedule, each with something of its own for the options to act on.
std::vector<sim::Config> Jobs() {
  std::vector<sim::Config> jobs;
  jobs.push_back(Job(sim::Schedule::kGpipe, 4, 4, 1));  // a slow stage and a slow link
  jobs.back().costs[2].forward = 1'500'000;
  jobs.back().link_overrides.push_back({1, 2, sim::Link{10.0, 5'000}});
  jobs.back().annotations = sim::AnnotationStyle::kPpShortCpu;
  jobs.push_back(Job(sim::Schedule::k1F1B, 4, 8, 1));  // jitter, clock offsets, the optimizer
  jobs.back().jitter = 0.05;
  jobs.back().clock_offsets_ns = {0, 1'234'567, -7'654'321, 40'000};
  jobs.back().optimizer_ns = 300'000;
  jobs.back().annotations = sim::AnnotationStyle::kPpCpu;
  jobs.push_back(Job(sim::Schedule::kInterleaved1F1B, 2, 4, 2));
  jobs.back().annotations = sim::AnnotationStyle::kPpGpu;
  jobs.push_back(Job(sim::Schedule::kZeroBubbleH1, 3, 6, 1));
  jobs.back().stage_to_rank = {2, 0, 1};
  jobs.push_back(Job(sim::Schedule::kForwardOnly, 2, 4, 1));
  jobs.back().iteration_barrier = false;
  return jobs;
}

// A job's trace, plus where each rank's layer annotations go: at its earliest time, so the
// annotations stay sorted when they are put in front.
struct Base {
  Trace trace;
  std::vector<std::array<NameId, kLayerNames.size()>> layer_names;  // per rank
  std::vector<TimeNs> earliest;                                     // per rank
};

std::vector<Base>& Bases() {
  static std::vector<Base>* bases = [] {
    auto* made = new std::vector<Base>();
    for (const sim::Config& config : Jobs()) {
      absl::StatusOr<sim::Simulation> simulation = sim::Simulate(config);
      fuzz::RequireOk(simulation.status(), "simulating a base job");
      Base base;
      base.trace = std::move(simulation->trace);
      for (Rank& rank : base.trace.ranks) {
        std::array<NameId, kLayerNames.size()> ids{};
        for (size_t i = 0; i < kLayerNames.size(); ++i) ids[i] = rank.names.Intern(kLayerNames[i]);
        base.layer_names.push_back(ids);
        TimeNs earliest = std::numeric_limits<TimeNs>::max();
        if (!rank.annotations.empty()) earliest = rank.annotations.front().start;
        for (const Timeline& timeline : rank.timelines) {
          if (!timeline.intervals.empty()) {
            earliest = std::min(earliest, timeline.intervals.front().start);
          }
        }
        base.earliest.push_back(earliest);
      }
      made->push_back(std::move(base));
    }
    return made;
  }();
  return *bases;
}

// Puts the chosen layer annotations in front of each rank's; returns how many per rank.
std::vector<size_t> DeclareLayers(fuzz::FuzzInput& input, Base& base) {
  std::vector<size_t> added;
  for (size_t r = 0; r < base.trace.ranks.size(); ++r) {
    const int choice = input.TakeInRange(0, 7);  // 0 none, 1-6 one name, 7 two that disagree
    std::vector<NameId> names;
    if (choice >= 1 && choice <= 6) names.push_back(base.layer_names[r][choice - 1]);
    if (choice == 7) names = {base.layer_names[r][1], base.layer_names[r][2]};
    std::vector<Annotation>& annotations = base.trace.ranks[r].annotations;
    for (NameId name : names) {
      annotations.insert(
          annotations.begin(),
          Annotation{.start = base.earliest[r], .end = base.earliest[r], .name = name});
    }
    added.push_back(names.size());
  }
  return added;
}

job::Options TakeOptions(fuzz::FuzzInput& input) {
  job::Options options;
  const int layer_count = input.TakeInRange(0, 6);
  for (int i = 0; i < layer_count; ++i) {
    // Mostly small counts; one in eight any int32 >= 1, whose rebalance search is the slow one.
    options.layers_per_stage.push_back(
        input.TakeInRange(0, 7) == 7
            ? input.TakeInRange<int32_t>(1, std::numeric_limits<int32_t>::max())
            : input.TakeInRange<int32_t>(1, 16));
  }
  options.slow.threshold = input.TakeFraction(1.0);
  options.slow.min_links_per_class = input.TakeInRange(0, 8);
  options.findings.excess_bubble_min_points = input.TakeFraction(100.0);
  options.findings.imbalance_min_percent = input.TakeFraction(200.0);
  options.findings.comm_wait_min_fraction = input.TakeFraction(1.0);
  options.findings.host_bound_min_fraction = input.TakeFraction(1.0);
  options.link_findings.late_min_fraction = input.TakeFraction(1.0);
  options.link_findings.busy_min_percent = input.TakeFraction(200.0);
  return options;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::FuzzInput input(data, size);
  std::vector<Base>& bases = Bases();
  Base& base = bases[input.TakeInRange<size_t>(0, bases.size() - 1)];
  const bool marker_given = input.TakeBool();
  job::Options options = TakeOptions(input);
  const std::vector<size_t> added = DeclareLayers(input, base);
  if (marker_given) options.iterations.iteration_marker = std::string(input.rest());

  const absl::Status status = fuzz::AnalyzeAndReport(base.trace, options);
  for (size_t r = 0; r < added.size(); ++r) {
    std::vector<Annotation>& annotations = base.trace.ranks[r].annotations;
    annotations.erase(annotations.begin(), annotations.begin() + static_cast<ptrdiff_t>(added[r]));
  }

  const bool marker_compiles =
      !marker_given || RE2(*options.iterations.iteration_marker, RE2::Quiet).ok();
  if (!marker_compiles && status.ok()) {
    fuzz::Fail("an iteration marker that does not compile passed");
  }
  if (marker_compiles && options.layers_per_stage.empty() && !status.ok()) {
    fuzz::Fail(absl::StrCat("valid options refused: ", status.ToString()));
  }
  return 0;
}
