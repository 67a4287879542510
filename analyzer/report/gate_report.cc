#include "report/gate_report.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "report/text_table.h"
#include "text/one_line.h"

namespace bubblescope {
namespace {

using compare::Check;
using compare::CheckKind;
using compare::CheckOutcome;
using compare::GateResult;

FigureUnit UnitOf(CheckKind kind) {
  switch (kind) {
    case CheckKind::kMaxBubble:
    case CheckKind::kMaxBubbleIncrease:
    case CheckKind::kMaxStageBubbleIncrease:
      return FigureUnit::kFraction;
    case CheckKind::kMaxLatency:
    case CheckKind::kMaxLatencyIncrease:
      return FigureUnit::kMicros;
    case CheckKind::kMaxMemory:
    case CheckKind::kMaxMemoryIncrease:
      return FigureUnit::kBytes;
  }
  return FigureUnit::kCount;
}

std::string LimitText(const Check& check) {
  const FigureUnit unit = UnitOf(check.kind);
  switch (check.kind) {
    case CheckKind::kMaxBubble:
    case CheckKind::kMaxLatency:
    case CheckKind::kMaxMemory:
      return absl::StrCat("<= ", FigureText(check.limit, unit));
    case CheckKind::kMaxBubbleIncrease:
    case CheckKind::kMaxStageBubbleIncrease:
      return absl::StrCat(
          "<= ",
          DeltaText(compare::Change{.a = 0.0, .b = check.limit, .spread = std::nullopt}, unit));
    case CheckKind::kMaxLatencyIncrease:
    case CheckKind::kMaxMemoryIncrease:
      return absl::StrCat("<= ", SignedPercent(check.limit));
  }
  return "-";
}

std::string OutcomeText(CheckOutcome outcome) {
  if (outcome == CheckOutcome::kFail) return "FAIL";
  if (outcome == CheckOutcome::kError) return "ERROR";
  return std::string(compare::CheckOutcomeName(outcome));
}

// The verdict: a check that cannot be judged makes it an error, whatever the others say; a gate
// whose every check was skipped checked nothing, which is no pass either.
std::string_view Verdict(const GateResult& result, bool capitals) {
  if (result.Undecided()) return capitals ? "ERROR" : "**error**";
  if (result.NothingChecked()) return capitals ? "NOTHING CHECKED" : "**nothing checked**";
  if (result.Passed()) return capitals ? "PASS" : "pass";
  return capitals ? "FAIL" : "**regression**";
}

// The escapes XML character data and attribute values need. Control characters XML 1.0 cannot
// carry at all are dropped (OneLine has already spelled them out as \xNN).
void AppendXmlEscaped(char c, std::string* out) {
  switch (c) {
    case '&':
      *out += "&amp;";
      break;
    case '<':
      *out += "&lt;";
      break;
    case '>':
      *out += "&gt;";
      break;
    case '"':
      *out += "&quot;";
      break;
    case '\'':
      *out += "&apos;";
      break;
    default:
      *out += c;
  }
}

std::string XmlEscaped(const std::string& raw) {
  std::string escaped;
  for (char c : text::OneLine(raw)) AppendXmlEscaped(c, &escaped);
  return escaped;
}

// Text in the Markdown comment a CI posts (a schedule name, a reason, a check's name: report
// strings anyone can write). GitHub renders raw HTML and Markdown syntax there, so the HTML
// characters become references, as in the JUnit output, the characters that open Markdown's
// inline syntax are backslash-escaped, and a '|' (which would end a table cell) too; OneLine
// keeps a line break from ending the row.
std::string MarkdownText(const std::string& text) {
  std::string cell;
  for (char c : text::OneLine(text)) {
    switch (c) {
      case '\\':
      case '`':
      case '*':
      case '_':
      case '[':
      case ']':
      case '|':
        cell += '\\';
        cell += c;
        break;
      default:
        AppendXmlEscaped(c, &cell);
    }
  }
  return cell;
}

// A file name as inline code, where nothing is rendered: fenced by more backticks than the
// longest run it holds (CommonMark), so a backtick in the name cannot end the span early.
std::string MarkdownCode(const std::string& text) {
  const std::string line = text::OneLine(text);
  size_t longest = 0;
  size_t run = 0;
  for (char c : line) {
    run = c == '`' ? run + 1 : 0;
    longest = std::max(longest, run);
  }
  const std::string fence(longest + 1, '`');
  // A span that starts or ends with a backtick needs a space between it and the fence.
  const bool pad = !line.empty() && (line.front() == '`' || line.back() == '`');
  const std::string space = pad ? " " : "";
  return absl::StrCat(fence, space, line, space, fence);
}

std::string Counts(const GateResult& result) {
  const int32_t total = static_cast<int32_t>(result.checks.size());
  const int32_t skipped = result.Count(CheckOutcome::kSkipped);
  const int32_t errors = result.Count(CheckOutcome::kError);
  return absl::StrCat(result.Count(CheckOutcome::kFail), " of ", total, " checks failed",
                      skipped > 0 ? absl::StrCat(" (", skipped, " skipped)") : "",
                      errors > 0 ? absl::StrCat("; ", errors, " cannot be judged") : "");
}

// One change behind a failed check, as the diff gives it: "stage 2 backward 3.100 ms -> 4.400
// ms (+1.300 ms (+41.9%))", "link 1->2 transfer (median) ...", "m 8 -> 4".
std::string ChangeBehindText(const compare::ChangeBehind& change) {
  switch (change.kind) {
    case compare::ChangeBehind::Kind::kShape:
      return absl::StrCat(change.figure, " ", change.a, " -> ", change.b);
    case compare::ChangeBehind::Kind::kStageOp:
      return absl::StrCat("stage ", change.stage, " ", change.figure, " ",
                          ChangeText(change.change, FigureUnit::kMicros));
    case compare::ChangeBehind::Kind::kLink:
      return absl::StrCat("link ", change.stage, "->", change.dst_stage, " transfer (median) ",
                          ChangeText(change.change, FigureUnit::kMicros));
  }
  return "";
}

// "what changed: a; b; c", or empty when the diff names nothing behind the check.
std::string ChangesBehindText(const Check& check) {
  std::vector<std::string> parts;
  for (const compare::ChangeBehind& change : check.behind)
    parts.push_back(ChangeBehindText(change));
  if (parts.empty()) return "";
  return absl::StrCat("what changed: ", absl::StrJoin(parts, "; "));
}

}  // namespace

std::string CheckName(const Check& check) {
  std::string where = check.pipeline;
  if (check.stage.has_value()) {
    absl::StrAppend(&where, " stage ", *check.stage);
    if (check.rank.has_value()) absl::StrAppend(&where, " (rank ", *check.rank, ")");
  }
  return absl::StrCat(where, ": ", std::string(compare::ThresholdKey(check.kind)));
}

CheckCells CheckCellsOf(const Check& check) {
  const FigureUnit unit = UnitOf(check.kind);
  // Times and bytes carry their relative change too, which the relative limits are judged on.
  const compare::Change change{.a = check.baseline, .b = check.current, .spread = std::nullopt};
  return {FigureText(check.baseline, unit), FigureText(check.current, unit),
          DeltaText(change, unit), LimitText(check)};
}

std::string GateVerdictLine(const GateResult& result) {
  return absl::StrCat(std::string(Verdict(result, true)), ": ", Counts(result));
}

std::string GateText(const GateResult& result) {
  std::string out = absl::StrCat("bubblescope gate: ", GateVerdictLine(result), "\n",
                                 "  baseline: ", text::OneLine(result.baseline_source), "\n",
                                 "  current:  ", text::OneLine(result.current_source), "\n");
  for (const std::string& note : result.notes) absl::StrAppend(&out, "  note: ", note, "\n");
  TextTable table({{"check", Align::kLeft},
                   {"baseline"},
                   {"current"},
                   {"delta"},
                   {"limit", Align::kLeft},
                   {"result", Align::kLeft},
                   {"note", Align::kLeft}});
  for (const Check& check : result.checks) {
    const CheckCells cells = CheckCellsOf(check);
    table.AddRow({CheckName(check), cells.baseline, cells.current, cells.delta, cells.limit,
                  OutcomeText(check.outcome), check.note});
  }
  absl::StrAppend(&out, table.Render(2));
  for (const Check& check : result.checks) {
    const std::string behind = ChangesBehindText(check);
    if (!behind.empty()) absl::StrAppend(&out, "  ", CheckName(check), ": ", behind, "\n");
  }
  return out;
}

std::string GateMarkdown(const GateResult& result) {
  std::string out =
      absl::StrCat("## bubblescope gate: ", std::string(Verdict(result, false)), "\n\n",
                   Counts(result), ". Baseline ", MarkdownCode(result.baseline_source),
                   ", current ", MarkdownCode(result.current_source), ".\n\n");
  for (const std::string& note : result.notes)
    absl::StrAppend(&out, "- ", MarkdownText(note), "\n");
  if (!result.notes.empty()) out += "\n";
  out += "| check | baseline | current | delta | limit | result |\n";
  out += "|---|---:|---:|---:|---|---|\n";
  for (const Check& check : result.checks) {
    const CheckCells cells = CheckCellsOf(check);
    std::string outcome =
        check.outcome == CheckOutcome::kFail || check.outcome == CheckOutcome::kError
            ? absl::StrCat("**", OutcomeText(check.outcome), "**")
            : std::string(compare::CheckOutcomeName(check.outcome));
    if (!check.note.empty()) absl::StrAppend(&outcome, " (", MarkdownText(check.note), ")");
    absl::StrAppend(&out, "| ", MarkdownText(CheckName(check)), " | ", MarkdownText(cells.baseline),
                    " | ", MarkdownText(cells.current), " | ", MarkdownText(cells.delta), " | ",
                    MarkdownText(cells.limit), " | ", outcome, " |\n");
  }
  // Under the table (a table row cannot hold a list): each failed check's changes in the diff.
  bool heading = false;
  for (const Check& check : result.checks) {
    if (check.behind.empty()) continue;
    if (!heading) out += "\n### What changed behind the failed checks\n\n";
    heading = true;
    absl::StrAppend(&out, "- **", MarkdownText(CheckName(check)), "**\n");
    for (const compare::ChangeBehind& change : check.behind) {
      absl::StrAppend(&out, "  - ", MarkdownText(ChangeBehindText(change)), "\n");
    }
  }
  return out;
}

std::string GateJunit(const GateResult& result) {
  const std::string counts = absl::StrCat(" tests=\"", result.checks.size(), "\" failures=\"",
                                          result.Count(CheckOutcome::kFail), "\" errors=\"",
                                          result.Count(CheckOutcome::kError), "\" skipped=\"",
                                          result.Count(CheckOutcome::kSkipped), "\"");
  std::string out = absl::StrCat("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n",
                                 "<testsuites name=\"bubblescope gate\"", counts, ">\n",
                                 "  <testsuite name=\"bubblescope gate\"", counts, ">\n");
  for (const Check& check : result.checks) {
    const CheckCells cells = CheckCellsOf(check);
    const std::string figures = absl::StrCat(
        "baseline ", cells.baseline, ", current ", cells.current, ", delta ", cells.delta,
        ", limit ", cells.limit, check.note.empty() ? "" : absl::StrCat("; ", check.note));
    absl::StrAppend(&out, "    <testcase classname=\"bubblescope.gate\" name=\"",
                    XmlEscaped(CheckName(check)), "\"");
    switch (check.outcome) {
      case CheckOutcome::kPass:
        absl::StrAppend(&out, ">\n      <system-out>", XmlEscaped(figures),
                        "</system-out>\n    </testcase>\n");
        break;
      case CheckOutcome::kFail:
        absl::StrAppend(&out, ">\n      <failure type=\"regression\" message=\"",
                        XmlEscaped(figures), "\">", XmlEscaped(figures));
        if (const std::string behind = ChangesBehindText(check); !behind.empty()) {
          absl::StrAppend(&out, "&#10;", XmlEscaped(behind));
        }
        absl::StrAppend(&out, "</failure>\n    </testcase>\n");
        break;
      case CheckOutcome::kError:
        absl::StrAppend(&out, ">\n      <error type=\"no_figure\" message=\"",
                        XmlEscaped(check.note), "\">", XmlEscaped(figures),
                        "</error>\n    </testcase>\n");
        break;
      case CheckOutcome::kSkipped:
        absl::StrAppend(&out, ">\n      <skipped message=\"", XmlEscaped(check.note),
                        "\"/>\n    </testcase>\n");
        break;
    }
  }
  absl::StrAppend(&out, "  </testsuite>\n</testsuites>\n");
  return out;
}

}  // namespace bubblescope
