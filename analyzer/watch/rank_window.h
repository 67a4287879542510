// One rank's events over the iterations `watch` still needs (docs/watch.md): the parts of its
// file read so far are appended (AppendRank), and the iterations already reported are dropped
// (TrimRankBefore), so what is held stays a few iterations long whatever the job's length.
#pragma once

#include <cstdint>
#include <optional>

#include "bubblescope/trace.h"

namespace bubblescope::watch {

// Appends `part` (a later part of the same rank's trace, read on its own) to `held`: names
// interned again, communication records and process groups re-indexed, timelines matched by
// kind, device, process and id, everything put back in the model's orders (trace.h). The rank's
// own facts (id, host, devices, ...) are taken from `part` where `held` has none yet; import
// counters are added up.
void AppendRank(Rank& held, Rank part);

// Drops everything of `rank` that ends before `cut` (intervals and memory samples before it,
// annotations and profiler steps that start before it), then the names and communication
// records nothing left refers to. Intervals and annotations that start before `cut` and end
// after it are kept whole.
void TrimRankBefore(Rank& rank, TimeNs cut);

// The number of the last profiler step of `rank` whose events are all there: with `finished`
// (its file is closed) the last step; otherwise the one before the last step, since a step's
// kernels and its range reach the file only once the next step has begun. nullopt when none is.
std::optional<int64_t> SettledStep(const Rank& rank, bool finished);

// The start of `rank`'s step `number`; nullopt when it has no such step.
std::optional<TimeNs> StepStart(const Rank& rank, int64_t number);

}  // namespace bubblescope::watch
