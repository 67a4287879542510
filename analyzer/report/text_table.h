// A plain-text table with aligned columns, for the human-readable reports.
#pragma once

#include <string>
#include <vector>

namespace bubblescope {

enum class Align { kLeft, kRight };

struct TextColumn {
  std::string header;
  Align align = Align::kRight;
};

class TextTable {
 public:
  explicit TextTable(std::vector<TextColumn> columns);

  // A row with one cell per column; missing cells print empty, extra cells are dropped.
  void AddRow(std::vector<std::string> cells);

  // Header and rows, each line indented by `indent` spaces and ended by '\n'. Columns are two
  // spaces apart; the last column is not padded so lines carry no trailing blanks.
  std::string Render(int indent = 0) const;

 private:
  std::vector<TextColumn> columns_;
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace bubblescope
