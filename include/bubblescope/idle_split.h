// How one rank's time in an iteration's window divides: its work (compute, and the in-stage
// communication no compute overlaps) and its idle time, with where that idle time lies. The
// analysis measures it (analysis/bubble.h) and the simulator knows it exactly (simulator/truth.h),
// so it is defined here, in the model both read; docs/bubble.md states every definition with an
// example.
#pragma once

#include "bubblescope/trace.h"

namespace bubblescope {

// idle = window - compute - in_stage_comm, idle = fill + stall + drain and
// stall = comm_wait + empty hold exactly; dp_sync is a share of idle, across its parts.
struct IdleSplit {
  TimeNs compute = 0;  // |union of compute intervals|
  // |work| - compute: the in-stage communication no compute overlaps (exposed), which is work.
  TimeNs in_stage_comm = 0;
  TimeNs idle = 0;       // window - compute - in_stage_comm
  TimeNs fill = 0;       // window start -> the schedule's first op, less work
  TimeNs drain = 0;      // last work end -> window end
  TimeNs stall = 0;      // idle between the first work start and the last work end
  TimeNs comm_wait = 0;  // part of stall where communication runs and compute does not
  TimeNs empty = 0;      // stall - comm_wait
  // The part of idle in which a data-parallel group's communication runs (the gradient sync
  // after the last backward, mostly in the drain): a share of idle across fill, stall and drain.
  TimeNs dp_sync = 0;

  // Adds every part of `other`, saturating (a sum over iterations).
  IdleSplit& operator+=(const IdleSplit& other) {
    compute = SaturatingAdd(compute, other.compute);
    in_stage_comm = SaturatingAdd(in_stage_comm, other.in_stage_comm);
    idle = SaturatingAdd(idle, other.idle);
    fill = SaturatingAdd(fill, other.fill);
    drain = SaturatingAdd(drain, other.drain);
    stall = SaturatingAdd(stall, other.stall);
    comm_wait = SaturatingAdd(comm_wait, other.comm_wait);
    empty = SaturatingAdd(empty, other.empty);
    dp_sync = SaturatingAdd(dp_sync, other.dp_sync);
    return *this;
  }

  friend bool operator==(const IdleSplit&, const IdleSplit&) = default;
};

}  // namespace bubblescope
