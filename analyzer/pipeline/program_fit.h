// Forward / backward / weight-gradient ops of traces without op annotations, found by fitting the
// inferred schedule's program to each rank's transfers and compute (docs/schedule-inference.md,
// "Ops fitted to the schedule's program").
//
// The program (sim::StageProgram) lists the ops a stage runs in one iteration, and for each op
// whether it receives its input from another stage (a forward from the previous virtual stage, a
// backward from the next) and sends its output to one. Every trace of a pipeline records those
// transfers, in the order the rank issued them, and usually with their peer. The k-th receive from
// a peer is the input of the k-th op of the program that receives from that stage, the k-th send to
// it the output of the k-th op that sends there: each op must lie after its receive and before its
// send. The compute between two consecutive transfers is a block; each op is placed in one block,
// in the program's order. The transfers decide the block of every op of 1F1B, GPipe and interleaved
// schedules; where several ops share a block (the last stage's forward and backward of one
// microbatch, the first stage's backward and its next forward) the block is cut by supporting
// evidence (block_cuts.h): the kernel-name sequences the rank's own lone ops of each type repeat,
// phase hints (index::PhaseHint) whose runs are exactly the ops, other stages' lone ops' names. A
// cut no evidence confirms is placed at the first hinted item (or halfway) and counted weak.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "pipeline/block_cuts.h"
#include "pipeline/issued_items.h"
#include "pipeline/pipeline_op.h"
#include "schedule_engine/program.h"

namespace bubblescope::pipeline {

struct FitInput {
  // The pipeline's ranks, each with its stage position in `stage_order`.
  const std::vector<IssuedTimeline>* timelines = nullptr;
  std::vector<int32_t> stage_order;  // rank of stage 0 .. p-1
  int32_t v = 1;
  // The program of each stage (pipeline::StagePrograms), by stage position.
  const std::vector<std::vector<sim::Op>>* programs = nullptr;
};

// How well the program fitted, over every rank and step of the pipeline.
struct FitSummary {
  // Steps seen on some rank of the pipeline, and those every rank's transfers fit the program in.
  // Only ops of steps that fit on every rank are kept, so every stage counts the same ops.
  int64_t steps = 0;
  int64_t steps_fitted = 0;
  bool reference_fitted = false;  // step 0 fits on every rank
  int64_t program_ops = 0;        // the program's ops over every rank's steps
  int64_t placed = 0;             // of those, kept (in a step that fits on every rank)
  int64_t weak = 0;               // of the placed, cut where no evidence confirmed the cut
  int64_t by_evidence[5] = {0, 0, 0, 0, 0};  // placed ops by FitEvidence
  // Compute items of the kept steps with a backward or weight-gradient hint that no op took:
  // work the program has no op for, so the fit is a guess.
  int64_t hinted_left_out = 0;
  bool used = false;  // set by the caller: the per-stage figures come from these ops
};

struct ProgramFit {
  FitSummary summary;
  std::vector<PipelineOp> ops;  // the placed ops, each rank's in issue order
  // Why a step did not fit, for the first such step of each rank.
  std::vector<std::string> notes;
};

// Linear in the items and the programs' ops (signatures are compared a bounded number of times).
ProgramFit FitProgram(const FitInput& input);

}  // namespace bubblescope::pipeline
