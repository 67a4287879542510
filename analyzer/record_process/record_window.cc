#include "record_process/record_window.h"

#include "absl/strings/str_cat.h"

namespace bubblescope {
namespace {

// "; at most 256 MiB of trace and 600 s of recording per process", or its one-cap forms; empty
// without caps.
std::string CapsText(const RecordWindow& window) {
  if (window.max_mib > 0 && window.max_seconds > 0) {
    return absl::StrCat("; at most ", window.max_mib, " MiB of trace and ", window.max_seconds,
                        " s of recording per process");
  }
  if (window.max_mib > 0)
    return absl::StrCat("; at most ", window.max_mib, " MiB of trace per process");
  if (window.max_seconds > 0) {
    return absl::StrCat("; at most ", window.max_seconds, " s of recording per process");
  }
  return "";
}

}  // namespace

std::string CollectorStartValue(const RecordWindow& window) {
  switch (window.kind) {
    case WindowKind::kDefault:
      return absl::StrCat("steps:+", window.first_step, ":+", window.last_step);
    case WindowKind::kSteps:
      return absl::StrCat("steps:", window.first_step, ":", window.last_step);
    case WindowKind::kAfterDelay:
      return absl::StrCat("after:", window.delay_seconds);
    case WindowKind::kProfilerApi:
      return "profiler-api";
    case WindowKind::kWholeJob:
      return "";
  }
  return "";
}

std::string CollectorLimitValue(const RecordWindow& window) {
  if (window.kind == WindowKind::kWholeJob || (window.max_mib <= 0 && window.max_seconds <= 0)) {
    return "";
  }
  return absl::StrCat(window.max_mib, ":", window.max_seconds);
}

std::string DescribeRecordWindow(const RecordWindow& window) {
  switch (window.kind) {
    case WindowKind::kDefault:
      return absl::StrCat(
          "recording a bounded window (the default): training steps +", window.first_step, " to +",
          window.last_step,
          " counted from each process's first ProfilerStep#N NVTX range, or from the start in a "
          "job without such ranges",
          CapsText(window),
          "; --steps, --start-after, --profiler-api or --whole-job choose another window");
    case WindowKind::kSteps:
      return absl::StrCat("recording training steps ", window.first_step, " to ", window.last_step,
                          " (NVTX ranges ProfilerStep#", window.first_step, " to #",
                          window.last_step, ")", CapsText(window));
    case WindowKind::kAfterDelay:
      return absl::StrCat("recording from ", window.delay_seconds,
                          " s after each process initialises CUDA", CapsText(window));
    case WindowKind::kProfilerApi:
      return absl::StrCat(
          "recording between the job's cudaProfilerStart and cudaProfilerStop calls",
          CapsText(window));
    case WindowKind::kWholeJob:
      return "recording the whole job, without a cap (--whole-job)";
  }
  return "";
}

}  // namespace bubblescope
