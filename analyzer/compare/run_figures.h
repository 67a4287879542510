// The figures two runs are compared on (docs/diff-and-gate.md): what `bubblescope diff` and
// `bubblescope gate` read from one side (and the what-if model `bubblescope whatif` reads). Each
// member is filled by one row of compare/report_schema.h: from analyze's JSON report
// (compare/report_reader.h) or, for a trace analysed on the fly, from the job result as the report
// would hold it (report/pipeline_report.h, AnalyzeFigures), so both read the same. Times are
// microseconds, as in the report; a figure the report leaves null is nullopt.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "whatif/whatif.h"

namespace bubblescope::compare {

// One iteration of a pipeline (the report's `iterations[]`).
struct IterationFigures {
  int64_t step = 0;
  bool complete = false;
  double window_us = 0.0;
  double bubble_fraction = 0.0;
};

// One rank of a pipeline (the report's `rank_stats[]`), summed over the complete iterations.
struct StageFigures {
  int32_t rank = -1;
  std::optional<int32_t> stage;  // pipeline position; nullopt when the shape is unknown
  double bubble_fraction = 0.0;
  std::optional<double> peak_allocated_bytes;
  std::optional<double> peak_reserved_bytes;
  std::optional<double> forward_us;  // mean per op (per chunk when v > 1)
  std::optional<double> backward_us;
  std::optional<double> weight_grad_us;  // separate W ops only
};

// One directed link with matched transfers (the report's `links[]`).
struct LinkFigures {
  int32_t src = -1;
  int32_t dst = -1;
  std::optional<double> transfer_us_median;  // none: no transfer with times of its own
  std::optional<double> gbps_median;
  double wait_us = 0.0;
  bool slow = false;
};

// One finding (the report's `findings[]`), attached to the pipeline that holds its first rank.
struct FindingFigures {
  std::string kind;
  std::string severity;
  std::string message;
  std::vector<int32_t> ranks;
  double cost_us = 0.0;
};

struct PipelineFigures {
  std::vector<int32_t> ranks;     // in stage order (rank id order when the order is unknown)
  std::optional<int32_t> stages;  // p; nullopt when the shape is unknown (as m, v, schedule)
  std::optional<int32_t> microbatches;
  std::optional<int32_t> virtual_stages;
  std::optional<std::string> schedule;
  double bubble_fraction = 0.0;
  std::optional<double> theoretical_bubble_fraction;
  std::optional<double> excess_bubble_fraction;
  double latency_p50_us = 0.0;
  double latency_p90_us = 0.0;
  double latency_max_us = 0.0;
  int64_t complete_iterations = 0;
  // Why the pipeline has no complete iteration (the report's `no_complete_iteration`); empty
  // when it has one. Without one its bubble and latency are no figures at all: diff shows the
  // reason and the gate refuses to judge them (exit status 2).
  std::string no_complete_iteration;
  std::vector<IterationFigures> iterations;
  std::vector<StageFigures> stage_figures;  // as the report lists them
  std::vector<LinkFigures> links;
  std::vector<FindingFigures> findings;  // largest cost first, as the report lists them
  // The what-if model of the measured job (`whatif_model`), which `bubblescope whatif` predicts
  // from; nullopt with why in whatif_model_problem (or a report without the member).
  std::optional<whatif::Model> whatif_model;
  std::string whatif_model_problem;
  std::vector<int32_t> rebalance_layers_after;  // the suggested layer split; empty without one
};

struct RunFigures {
  std::string source;  // the file (or trace path) the figures came from, for messages
  int32_t schema_major = 0;
  int32_t schema_minor = 0;
  std::string tool_version;
  std::vector<PipelineFigures> pipelines;
};

}  // namespace bubblescope::compare
