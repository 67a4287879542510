#include "report/cause_report.h"

#include "absl/strings/str_cat.h"
#include "compare/report_schema.h"
#include "report/units.h"

namespace bubblescope {
namespace {

std::string SavingText(const root_causes::RootCause& cause) {
  if (!cause.saving_per_iteration_ns.has_value()) {
    return absl::StrCat("saving not predicted (", cause.fix, ")");
  }
  return absl::StrCat("fixing it (", cause.fix, ") is predicted to save ",
                      MillisWithUnit(static_cast<double>(*cause.saving_per_iteration_ns)),
                      " per iteration (", cause.before_is_measured ? "measured " : "modelled ",
                      MillisWithUnit(static_cast<double>(cause.iteration_before_ns)), " -> ",
                      MillisWithUnit(static_cast<double>(cause.iteration_after_ns)), ")");
}

}  // namespace

std::string CauseSentence(const root_causes::RootCause& cause) {
  return absl::StrCat(std::string(root_causes::CauseName(cause.cause)), " (", cause.summary,
                      "): ", SavingText(cause));
}

std::string CausesText(const job::Pipeline& pipeline) {
  const std::vector<findings::Finding>& all = pipeline.findings.findings;
  if (pipeline.causes.causes.empty()) return "  findings: none\n";
  std::string out =
      "  causes, by the iteration time fixing each is predicted to save (docs/findings.md):\n";
  int rank = 0;
  for (const root_causes::RootCause& cause : pipeline.causes.causes) {
    absl::StrAppend(&out, "    ", ++rank, ". ", std::string(root_causes::CauseName(cause.cause)),
                    " (", std::string(SeverityName(cause.severity)), "): ", cause.summary,
                    "\n       costs ",
                    MillisWithUnit(static_cast<double>(cause.cost_per_iteration_ns)),
                    " of rank time per iteration; ", SavingText(cause),
                    "\n       next: ", cause.next_step, "\n");
    for (size_t index : cause.findings) {
      if (index >= all.size()) continue;
      const findings::Finding& finding = all[index];
      absl::StrAppend(&out, "       - ", std::string(SeverityName(finding.severity)), " ",
                      std::string(findings::KindName(finding.kind)), ": ", finding.message, "\n");
    }
  }
  return out;
}

void WriteFindingJson(const findings::Finding& finding, JsonWriter& json) {
  json.BeginObject();
  compare::schema::WriteFields(compare::schema::kFindingFields, finding, json);
  json.EndObject();
}

void WriteCausesMember(const job::Pipeline& pipeline, JsonWriter& json) {
  const std::vector<findings::Finding>& all = pipeline.findings.findings;
  json.Key("root_causes");
  json.BeginArray();
  for (const root_causes::RootCause& cause : pipeline.causes.causes) {
    json.BeginObject();
    json.StringMember("cause", root_causes::CauseName(cause.cause));
    json.StringMember("severity", SeverityName(cause.severity));
    json.StringMember("summary", cause.summary);
    json.IntArrayMember("ranks", cause.ranks);
    json.DecimalMember("cost_per_iteration_us", cause.cost_per_iteration_ns, 3);
    json.Key("saving_per_iteration_us");
    if (cause.saving_per_iteration_ns.has_value()) {
      json.Decimal(*cause.saving_per_iteration_ns, 3);
      json.DecimalMember("iteration_before_us", cause.iteration_before_ns, 3);
      json.StringMember("iteration_before_source",
                        cause.before_is_measured ? "measured" : "modelled");
      json.DecimalMember("iteration_after_fix_us", cause.iteration_after_ns, 3);
    } else {
      json.Null();
    }
    json.StringMember("fix", cause.fix);
    json.StringMember("next_step", cause.next_step);
    json.Key("findings");
    json.BeginArray();
    for (size_t index : cause.findings) {
      if (index < all.size()) WriteFindingJson(all[index], json);
    }
    json.EndArray();
    json.EndObject();
  }
  json.EndArray();
}

}  // namespace bubblescope
