// Which profiler cycle a report covers, when the inputs held several (loader/profiler_cycles.h):
// a line under the text report's headline and the JSON report's "profiler_cycle" member.
#pragma once

#include <string>

#include "bubblescope/trace.h"
#include "text/json_writer.h"

namespace bubblescope {

// "profiler cycle 3 of 3 (steps 12-14), the newest complete one; --cycle N reads another\n";
// empty when the inputs held one cycle.
std::string ProfilerCycleText(const ProfilerCycles& cycles);

// The "profiler_cycle" member (docs/json-report.md): null when the inputs held one cycle.
void WriteProfilerCycleMember(const ProfilerCycles& cycles, JsonWriter& json);

}  // namespace bubblescope
