// Reading back the HTML report's own markup in tests: the iterations a pipeline's timeline
// holds, and each picture's stage rows and cells. Plain string search over the compact form
// report/html_*.cc write (unquoted integer attributes), so a change of form fails loudly here.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "gtest/gtest.h"

namespace bubblescope::html_testing {

struct Cell {
  std::string css_class;   // "F", "B", "W", "fi", "dr", "cw", "em", "bg"
  std::string title;       // the tooltip; empty for the theoretical rows' background
  std::string label;       // the text drawn on the cell; empty when none
  bool odd_chunk = false;  // drawn lighter: an op of an odd chunk
};

struct SvgRow {
  int32_t stage = -2;
  int32_t rank = -1;  // -1: the theoretical schedule's rows name no rank
  std::vector<Cell> cells;
  size_t comm_spans = 0;   // stretches of the communication line under the row
  std::string comm_title;  // its tooltip; empty without communication

  std::vector<const Cell*> Of(std::string_view css_class) const {
    std::vector<const Cell*> out;
    for (const Cell& cell : cells) {
      if (cell.css_class == css_class) out.push_back(&cell);
    }
    return out;
  }
};

// The text between `open` and the next `close` after `from`; npos-safe (empty when missing).
inline std::string_view Between(std::string_view text, std::string_view open,
                                std::string_view close, size_t from = 0) {
  const size_t begin = text.find(open, from);
  if (begin == std::string_view::npos) return {};
  const size_t start = begin + open.size();
  const size_t end = text.find(close, start);
  if (end == std::string_view::npos) return {};
  return text.substr(start, end - start);
}

inline int32_t IntAttr(std::string_view tag, std::string_view name) {
  const std::string key = std::string(" ") + std::string(name) + "=";
  const size_t at = tag.find(key);
  if (at == std::string_view::npos) return -1;
  return std::stoi(std::string(tag.substr(at + key.size())));
}

// Every stage row of one timeline <svg>, in document order.
inline std::vector<SvgRow> Rows(std::string_view svg) {
  std::vector<SvgRow> rows;
  constexpr std::string_view kRow = "<g class=sr ";
  size_t at = svg.find(kRow);
  while (at != std::string_view::npos) {
    const size_t end = svg.find("</g>", at);
    if (end == std::string_view::npos) break;
    const std::string_view body = svg.substr(at, end - at);
    SvgRow row;
    const std::string_view tag = body.substr(0, body.find('>'));
    row.stage = IntAttr(tag, "data-stage");
    row.rank = IntAttr(tag, "data-rank");
    constexpr std::string_view kRect = "<rect class=";
    for (size_t r = body.find(kRect); r != std::string_view::npos; r = body.find(kRect, r + 1)) {
      Cell cell;
      // "F" or, for an odd chunk's cell, "\"F k\"": the first class is the kind.
      size_t class_start = r + kRect.size();
      if (body[class_start] == '"') ++class_start;
      cell.css_class =
          std::string(body.substr(class_start, body.find(' ', class_start) - class_start));
      cell.odd_chunk = body.substr(class_start + cell.css_class.size(), 3) == " k\"";
      const size_t rect_end = body.find('>', r);
      if (body[rect_end - 1] != '/') {  // <rect .../> has no tooltip
        cell.title = std::string(Between(body, "<title>", "</title>", rect_end));
        const size_t after = body.find("</rect>", rect_end) + 7;
        if (body.substr(after, 6) == "<text ") {
          cell.label = std::string(Between(body, ">", "</text>", after));
        }
      }
      row.cells.push_back(std::move(cell));
    }
    const std::string_view comm = Between(body, "<path class=cm d=\"", "\"");
    row.comm_spans = static_cast<size_t>(std::count(comm.begin(), comm.end(), 'M'));
    row.comm_title = std::string(Between(body, "<path class=cm", "</title>"));
    if (!row.comm_title.empty())
      row.comm_title = row.comm_title.substr(row.comm_title.find("<title>") + 7);
    rows.push_back(std::move(row));
    at = svg.find(kRow, end);
  }
  return rows;
}

// One pipeline's <details> element.
inline std::string_view PipelineBlock(std::string_view page, size_t index) {
  const std::string open = "<details id=p" + std::to_string(index);
  const size_t begin = page.find(open);
  if (begin == std::string_view::npos) return {};
  // Up to the next pipeline's, or the job section after the last (details nest inside it).
  size_t end = page.find("<details id=p", begin + 1);
  if (end == std::string_view::npos) end = page.find("<h2>Job</h2>", begin);
  return page.substr(begin, end == std::string_view::npos ? end : end - begin);
}

// The measured timelines of a pipeline block by iteration number: the one drawn in place
// first, then those kept in templates.
struct IterationSvg {
  int64_t number = -1;
  bool shown = false;
  std::string_view svg;
};

inline std::vector<IterationSvg> IterationSvgs(std::string_view block) {
  std::vector<IterationSvg> out;
  const size_t box = block.find("<div class=tlb ");
  if (box == std::string_view::npos) return out;
  const std::string_view tag = block.substr(box, block.find('>', box) - box);
  out.push_back({.number = IntAttr(tag, "data-it"),
                 .shown = true,
                 .svg = Between(block, "<svg", "</svg>", box)});
  constexpr std::string_view kTemplate = "<template data-it=";
  for (size_t t = block.find(kTemplate); t != std::string_view::npos;
       t = block.find(kTemplate, t + 1)) {
    out.push_back({.number = std::stoll(std::string(block.substr(t + kTemplate.size()))),
                   .shown = false,
                   .svg = Between(block, "<svg", "</svg>", t)});
  }
  return out;
}

// The theoretical schedule's <svg> in a pipeline block; empty when there is none.
inline std::string_view TheoreticalSvg(std::string_view block) {
  const size_t heading = block.find("<h3>Theoretical schedule</h3>");
  if (heading == std::string_view::npos) return {};
  return Between(block, "<svg", "</svg>", heading);
}

inline size_t Count(std::string_view text, std::string_view what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string_view::npos; at = text.find(what, at + 1)) {
    ++n;
  }
  return n;
}

}  // namespace bubblescope::html_testing
