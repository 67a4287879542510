// Renders a compare::GateResult (`bubblescope gate`, docs/diff-and-gate.md): the verdict as text
// for the terminal, as Markdown for a pull-request comment, and as JUnit XML (one test case per
// check, failures as <failure>, skipped checks as <skipped>) for CI systems.
#pragma once

#include <string>

#include "compare/gate.h"
#include "report/compare_format.h"

namespace bubblescope {

// "pipeline 0: max-bubble", "pipeline 0 stage 2 (rank 2): max-memory-increase".
std::string CheckName(const compare::Check& check);

// The check's figures in the shared spellings: baseline, current, delta and limit.
struct CheckCells {
  std::string baseline;
  std::string current;
  std::string delta;
  std::string limit;  // "<= 25.0%", "<= +2.0 pts", "<= +5.0%", "<= 60.000 ms"
};
CheckCells CheckCellsOf(const compare::Check& check);

// "PASS" or "FAIL" and the counts: "FAIL: 2 of 7 checks failed (1 skipped)".
std::string GateVerdictLine(const compare::GateResult& result);

// The verdict line, the baseline and current, the notes (shape changes, pipelines on one side),
// then one row per check: baseline, current, delta, limit, result and note.
std::string GateText(const compare::GateResult& result);

// The same as a Markdown pull-request comment: a heading with the verdict, the notes as a list
// and the checks as a table (failures in bold).
std::string GateMarkdown(const compare::GateResult& result);

// JUnit XML: one <testsuite name="bubblescope gate">, one <testcase> per check.
std::string GateJunit(const compare::GateResult& result);

}  // namespace bubblescope
