#include "report/text_table.h"

#include <algorithm>
#include <utility>

namespace bubblescope {
namespace {

// Display width: counts UTF-8 code points rather than bytes, so paths with accents still align.
size_t DisplayWidth(const std::string& text) {
  return static_cast<size_t>(std::count_if(text.begin(), text.end(), [](char c) {
    return (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  }));
}

}  // namespace

TextTable::TextTable(std::vector<TextColumn> columns) : columns_(std::move(columns)) {}

void TextTable::AddRow(std::vector<std::string> cells) {
  cells.resize(columns_.size());
  rows_.push_back(std::move(cells));
}

std::string TextTable::Render(int indent) const {
  std::vector<size_t> widths(columns_.size());
  for (size_t c = 0; c < columns_.size(); ++c) {
    widths[c] = DisplayWidth(columns_[c].header);
    for (const auto& row : rows_) widths[c] = std::max(widths[c], DisplayWidth(row[c]));
  }
  std::string out;
  auto render_line = [&](auto cell_at) {
    std::string line(static_cast<size_t>(std::max(indent, 0)), ' ');
    for (size_t c = 0; c < columns_.size(); ++c) {
      const std::string& cell = cell_at(c);
      size_t pad = widths[c] - DisplayWidth(cell);
      bool last = c + 1 == columns_.size();
      if (c > 0) line.append("  ");
      if (columns_[c].align == Align::kRight) line.append(pad, ' ');
      line.append(cell);
      if (columns_[c].align == Align::kLeft && !last) line.append(pad, ' ');
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out.append(line);
    out.push_back('\n');
  };
  render_line([&](size_t c) -> const std::string& { return columns_[c].header; });
  for (const auto& row : rows_) {
    render_line([&](size_t c) -> const std::string& { return row[c]; });
  }
  return out;
}

}  // namespace bubblescope
