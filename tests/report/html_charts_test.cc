// The HTML report's drawing helpers on hand-made figures: axis steps, byte units, escaping in
// table rows, and stacked bars whose segments meet without gaps at integer coordinates.
#include "report/html_charts.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "report/html_parse.h"
#include "report/html_svg.h"

namespace bubblescope::html {
namespace {

using ::testing::HasSubstr;

TEST(HtmlSvgTest, NiceStepIsOneTwoOrFiveTimesAPowerOfTen) {
  EXPECT_DOUBLE_EQ(NiceStep(54.9, 10), 10.0);  // 5.49 per tick -> 10
  EXPECT_DOUBLE_EQ(NiceStep(54.9, 14), 5.0);   // 3.92 -> 5
  EXPECT_DOUBLE_EQ(NiceStep(1.0, 5), 0.2);
  EXPECT_DOUBLE_EQ(NiceStep(0.07, 3), 0.05);  // 0.023 -> 0.05
  EXPECT_DOUBLE_EQ(NiceStep(0.0, 5), 1.0);
  EXPECT_DOUBLE_EQ(NiceStep(-3.0, 5), 1.0);
}

TEST(HtmlSvgTest, ByteUnitIsTheLargestThatKeepsThePeakAtOneOrMore) {
  EXPECT_STREQ(ByteUnitFor(int64_t{3} << 30).name, "GiB");
  EXPECT_STREQ(ByteUnitFor(int64_t{1} << 30).name, "GiB");
  EXPECT_STREQ(ByteUnitFor((int64_t{1} << 30) - 1).name, "MiB");
  EXPECT_DOUBLE_EQ(ByteUnitFor(int64_t{5} << 20).bytes, 1024.0 * 1024.0);
  EXPECT_STREQ(ByteUnitFor(4096).name, "KiB");
  EXPECT_STREQ(ByteUnitFor(0).name, "KiB");
}

TEST(HtmlSvgTest, RowCellsAreWrittenAsGiven) {
  EXPECT_EQ(Row({"a", Esc("<b>")}), "<tr><td>a<td>&lt;b&gt;\n");
  EXPECT_EQ(Row({"1"}, "slow"), "<tr class=slow><td>1\n");
}

TEST(HtmlChartsTest, StackedSegmentsMeetWithoutGaps) {
  // Thirds of the full width: rounded ends must still meet exactly and end at the full width.
  const std::string svg =
      StackedBars({{.label = "stage 0 <r>",
                    .segments = {{.css_class = "cp", .value = 1.0 / 3, .tooltip = "a"},
                                 {.css_class = "fi", .value = 1.0 / 3, .tooltip = "b & c"},
                                 {.css_class = "dr", .value = 1.0 / 3, .tooltip = "d"}}}},
                  1.0, [](double v) { return std::to_string(static_cast<int>(100 * v)); });
  EXPECT_THAT(svg, HasSubstr(">stage 0 &lt;r&gt;</text>"));
  EXPECT_THAT(svg, HasSubstr("<title>b &amp; c</title>"));
  // The bars start after the 120 px label column and span 560 px: 120-307, 307-493, 493-680.
  EXPECT_THAT(svg, HasSubstr("<rect class=cp x=120 y=0 width=187 "));
  EXPECT_THAT(svg, HasSubstr("<rect class=fi x=307 y=0 width=186 "));
  EXPECT_THAT(svg, HasSubstr("<rect class=dr x=493 y=0 width=187 "));
  // Ticks every NiceStep(1, 560 / 80 = 7) = 0.2 of the width: 0, 20, ..., 100.
  EXPECT_EQ(html_testing::Count(svg, "v4\"/>"), 6u);
}

TEST(HtmlChartsTest, LogLinesPlaceEveryPointAndTheMarkedOne) {
  const std::string svg = LogLines({{.name = "1f1b",
                                     .css_class = "s0",
                                     .points = {{.x = 4, .y = 50, .tooltip = "m=4"},
                                                {.x = 8, .y = 40, .tooltip = "m=8"},
                                                {.x = 16, .y = 30, .tooltip = "m=16"}}}},
                                   {.x = 8, .y = 45, .tooltip = "measured"}, "m", "bubble %",
                                   [](double v) { return std::to_string(static_cast<int>(v)); });
  EXPECT_EQ(html_testing::Count(svg, "<circle cx="), 3u);
  EXPECT_EQ(html_testing::Count(svg, "<circle class=mk "), 1u);
  // log2 x: 4, 8 and 16 sit at the left end, the middle and the right end of the 340 px span
  // that starts 70 px in.
  EXPECT_THAT(svg, HasSubstr("<polyline points=\"70,"));
  EXPECT_THAT(svg, HasSubstr(" 240,"));
  EXPECT_THAT(svg, HasSubstr(" 410,"));
}

TEST(HtmlChartsTest, NoPointsNoChart) {
  EXPECT_EQ(LogLines({}, {}, "m", "bubble %", [](double) { return std::string(); }), "");
}

}  // namespace
}  // namespace bubblescope::html
