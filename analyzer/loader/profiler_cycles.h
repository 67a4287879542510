// Keeps one profiler cycle's files apart from another's. torch.profiler's schedule(wait, warmup,
// active, repeat) profiles `active` steps and hands the trace to on_trace_ready, then starts over;
// with repeat=0 (its default) it does so until the job ends, so a folder gets one file per rank
// per cycle, and the same rank is then claimed by several files. What tells the cycles apart is
// in every file: the ProfilerStep#N numbers it holds, which count on across cycles (a cycle of
// active=3 after wait=1, warmup=1 holds steps 2-4, the next 7-9, ...). docs/getting-traces.md.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "bubblescope/trace.h"

namespace bubblescope {

// What the choice reads of one trace file.
struct CycleFile {
  int32_t rank = -1;  // the rank the file would be given; -1 when nothing says
  // The lowest and highest ProfilerStep number the file holds; nullopt when it holds none.
  std::optional<int64_t> first_step;
  std::optional<int64_t> last_step;
};

struct CycleChoice {
  ProfilerCycles cycles;  // `found` is empty when the files are one cycle
  // Per file, the number of the cycle it belongs to (0 when `found` is empty).
  std::vector<int32_t> cycle_of;
  // Per file, whether it is read: of the chosen cycle, or every file when there is one cycle.
  std::vector<bool> keep;
};

// Finds the cycles among `files`: only when some rank is claimed by two files and every file
// holds profiler steps, the files' step ranges grouped where they overlap, numbered from the
// lowest steps. `wanted` is --cycle's number (0: none given), which picks that cycle; without it
// the newest complete cycle is chosen. Errors (one line, InvalidArgument, the cycles listed): a
// `wanted` past the cycles found (or above 1 when there is one), and several cycles none of
// which is complete.
absl::StatusOr<CycleChoice> ChooseProfilerCycle(const std::vector<CycleFile>& files,
                                                int32_t wanted);

// "1 (steps 2-3, 2 files), 2 (steps 6-7, 2 files, incomplete)": the newest cycles first when
// there are more than a few, the rest counted.
std::string ListProfilerCycles(const std::vector<ProfilerCycle>& cycles);

}  // namespace bubblescope
