// What of a rank a digest keeps (docs/digest.md): the rank reduced to what the rank index and
// the analyses read, so that analysing the reduced rank gives the same report as the full one.
//
// The rule, written here once beside the index it mirrors (rank_index.h says what each fact is
// derived from):
// - Kept whole: the GPU streams (every device op), the annotations (markers, PP: names,
//   optimizer and communication ranges, mirrors: any of them can be an --iteration-marker), the
//   profiler steps, memory samples, devices, process groups, metadata and import counters.
// - A CPU thread of a GPU rank keeps what the launch records are read from: every CPU
//   communication op (the scopes that direct a SendRecv kernel or queue a batch's transfers);
//   each runtime call whose correlation id is a device op's (its launch), or that starts inside
//   a communication scope of its thread (a launch there marks the scope as holding one, so it
//   queued nothing); and the CPU ops whose names decide backward and recompute time (autograd
//   engine nodes, checkpoint nodes, the forward operators: index/recompute_regions.h). Dropped:
//   every other CPU op (aten::*, module ranges), runtime calls of no device op outside those
//   scopes (cudaStreamSynchronize, cudaEventRecord, ...).
// - A CPU thread of a rank without GPU activity (whose model thread stands in for the device)
//   keeps its top-level CPU ops (the device ops, and which thread is the model thread, depend
//   on nothing else), every CPU communication op (its communication time counts nested ones)
//   and the ops that decide recompute time; runtime calls are dropped.
// - The rank's earliest interval is kept wherever it is (it says whether the clock starts at
//   the trace's own zero: crossrank/clock_alignment.h).
// - Where a thread's recompute regions would differ with its other CPU ops gone (ops that
//   overlap without nesting, which real traces do not hold), that thread keeps all its CPU ops.
// - Names and communication records are kept when something kept refers to them, in their
//   order, so ids compare as before.
//
// ReduceForDigest then checks its own work: the index of the reduced rank must equal the full
// rank's (every device op, issue order, recompute time, model thread, mirrors); where it does
// not, the full rank is returned, never a wrong one.
#pragma once

#include "bubblescope/trace.h"

namespace bubblescope::index {

struct Reduction {
  Rank rank;
  // False when the reduced rank's index differed and `rank` is the full rank (a bug to report:
  // the rule above missed something the index reads).
  bool reduced = true;
};

// `rank` reduced to what the analyses read (the rule above). source_path is kept.
Reduction ReduceForDigest(const Rank& rank);

}  // namespace bubblescope::index
