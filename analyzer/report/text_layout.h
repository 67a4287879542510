// How the text report keeps to a screen's width (docs/analyze.md, "The text report"): long
// sentences wrapped onto indented lines, and sources named by the shortest part of their path
// that tells them apart (the JSON report keeps the full paths).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace bubblescope {

// The widest line the text report's first screen writes.
inline constexpr size_t kTextReportWidth = 120;

// `line` (one line, no newline) broken at spaces into lines of at most `width` characters, each
// continuation starting with `indent`; a word longer than a line stays whole, and a unit or a
// one-word qualifier in parentheses stays with the word before it ("45.806 ms (median)" is
// never split). Every line ends with '\n'.
std::string Wrap(std::string_view line, size_t width, std::string_view indent);

// Every line of `text` wrapped as above, continuations indented two spaces past the line's own
// leading spaces.
std::string WrapLines(std::string_view text, size_t width);

// For each path, its shortest '/'-separated suffix that no other path of `paths` ends with
// (the whole path when that is the only one that tells it apart).
std::vector<std::string> ShortestUniqueSuffixes(const std::vector<std::string>& paths);

}  // namespace bubblescope
