#include "report/cycle_report.h"

#include "absl/strings/str_cat.h"

namespace bubblescope {
namespace {

const ProfilerCycle* ChosenCycle(const ProfilerCycles& cycles) {
  for (const ProfilerCycle& cycle : cycles.found) {
    if (cycle.number == cycles.chosen) return &cycle;
  }
  return nullptr;
}

}  // namespace

std::string ProfilerCycleText(const ProfilerCycles& cycles) {
  const ProfilerCycle* chosen = ChosenCycle(cycles);
  if (chosen == nullptr) return "";
  return absl::StrCat("profiler cycle ", chosen->number, " of ", cycles.found.size(), " (steps ",
                      chosen->first_step, "-", chosen->last_step, "), ",
                      cycles.by_flag ? "chosen with --cycle" : "the newest complete one",
                      chosen->complete ? "" : ", incomplete", "; --cycle N reads another\n");
}

void WriteProfilerCycleMember(const ProfilerCycles& cycles, JsonWriter& json) {
  json.Key("profiler_cycle");
  const ProfilerCycle* chosen = ChosenCycle(cycles);
  if (chosen == nullptr) {
    json.Null();
    return;
  }
  json.BeginObject();
  json.IntMember("number", chosen->number);
  json.StringMember("chosen_by", cycles.by_flag ? "flag" : "newest_complete");
  json.Key("cycles");
  json.BeginArray();
  for (const ProfilerCycle& cycle : cycles.found) {
    json.BeginObject();
    json.IntMember("number", cycle.number);
    json.IntMember("first_step", cycle.first_step);
    json.IntMember("last_step", cycle.last_step);
    json.IntMember("files", cycle.files);
    json.BoolMember("complete", cycle.complete);
    json.EndObject();
  }
  json.EndArray();
  json.EndObject();
}

}  // namespace bubblescope
