#include "report/text_layout.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"

namespace bubblescope {
namespace {

// `text` cut at every `separator` (n separators give n + 1 pieces, empty ones kept).
std::vector<std::string_view> Pieces(std::string_view text, char separator) {
  std::vector<std::string_view> out;
  size_t start = 0;
  for (size_t at = text.find(separator); at != std::string_view::npos;
       at = text.find(separator, start)) {
    out.push_back(text.substr(start, at - start));
    start = at + 1;
  }
  out.push_back(text.substr(start));
  return out;
}

// Whether `word` belongs with the word before it, so that a line never starts with it: a unit
// ("ms", "%", "GiB", with any punctuation after it) or a qualifier in parentheses of one word
// ("(median)"), which alone on a line would say nothing ("45.806 ms (median)" stays whole).
bool BindsToPrevious(std::string_view word) {
  if (word.size() > 2 && word.front() == '(' && word.find(')') != std::string_view::npos) {
    return true;
  }
  const size_t end = word.find_last_not_of(",;:.)");
  const std::string_view bare = word.substr(0, end == std::string_view::npos ? 0 : end + 1);
  for (std::string_view unit : {"ms", "us", "\xC2\xB5s", "ns", "%", "KiB", "MiB", "GiB", "pt"}) {
    if (bare == unit) return true;
  }
  return false;
}

// The line's words, each with the words that bind to it (BindsToPrevious): the pieces a
// wrapped line may break between.
std::vector<std::string> Unbreakable(std::string_view text) {
  std::vector<std::string> out;
  for (std::string_view word : Pieces(text, ' ')) {
    if (word.empty()) continue;
    if (!out.empty() && BindsToPrevious(word)) {
      out.back().push_back(' ');
      out.back().append(word);
    } else {
      out.emplace_back(word);
    }
  }
  return out;
}

}  // namespace

std::string Wrap(std::string_view line, size_t width, std::string_view indent) {
  std::string out;
  std::string current;
  size_t lead = line.find_first_not_of(' ');
  if (lead == std::string_view::npos) lead = line.size();
  current.assign(line.substr(0, lead));
  const size_t fresh_size = current.size();
  bool fresh = true;  // `current` holds no word yet
  for (const std::string& word : Unbreakable(line.substr(lead))) {
    if (!fresh && current.size() + 1 + word.size() > width) {
      out.append(current).push_back('\n');
      current.assign(indent);
      fresh = true;
    }
    if (!fresh) current.push_back(' ');
    current.append(word);
    fresh = false;
  }
  if (!fresh || current.size() > fresh_size || out.empty()) out.append(current).push_back('\n');
  return out;
}

std::string WrapLines(std::string_view text, size_t width) {
  std::string out;
  for (std::string_view line : Pieces(text, '\n')) {
    if (line.empty()) {
      out.push_back('\n');
      continue;
    }
    const size_t lead = std::min(line.find_first_not_of(' '), line.size());
    out.append(Wrap(line, width, std::string(lead + 2, ' ')));
  }
  // StrSplit yields one empty piece after a final newline: drop the newline it added.
  if (!text.empty() && text.back() == '\n' && !out.empty()) out.pop_back();
  return out;
}

std::vector<std::string> ShortestUniqueSuffixes(const std::vector<std::string>& paths) {
  // Where each path's last k parts start, from the end: found by scanning back for separators.
  const auto suffix = [&](size_t i, size_t k) -> std::string_view {
    std::string_view path = paths[i];
    size_t start = path.size();
    for (size_t part = 0; part < k; ++part) {
      const size_t slash = start == 0 ? std::string_view::npos : path.rfind('/', start - 1);
      if (slash == std::string_view::npos) return path;
      start = slash;
    }
    return path.substr(start + 1);
  };
  std::vector<std::string> out(paths.size());
  std::vector<bool> done(paths.size(), false);
  size_t left = paths.size();
  for (size_t k = 1; left > 0; ++k) {
    absl::flat_hash_map<std::string_view, size_t> count;
    for (size_t i = 0; i < paths.size(); ++i) ++count[suffix(i, k)];
    for (size_t i = 0; i < paths.size(); ++i) {
      if (done[i]) continue;
      const std::string_view name = suffix(i, k);
      // Unique, or the whole path already (the same path twice stays whole).
      if (count[name] == 1 || name.size() == paths[i].size()) {
        out[i] = std::string(name);
        done[i] = true;
        --left;
      }
    }
  }
  return out;
}

}  // namespace bubblescope
