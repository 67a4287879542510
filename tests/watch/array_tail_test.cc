#include "watch/array_tail.h"

#include <string>
#include <string_view>
#include <vector>

#include "gtest/gtest.h"

namespace bubblescope::watch {
namespace {

std::vector<std::string> Texts(const ArrayTailScan& scan) {
  return {scan.elements.begin(), scan.elements.end()};
}

TEST(ArrayTailTest, TakesWholeElementsAndStopsAtTheOneBeingWritten) {
  const std::string text = "[\n{\"a\":1},\n{\"b\":[1,2]},\n{\"c\":";
  const ArrayTailScan scan = ScanArrayTail(text, false);
  EXPECT_TRUE(scan.opened);
  EXPECT_FALSE(scan.closed);
  EXPECT_FALSE(scan.damaged);
  EXPECT_EQ(Texts(scan), (std::vector<std::string>{"{\"a\":1}", "{\"b\":[1,2]}"}));
  // Through the second element's closing brace: 2 + 7 + 2 + 11 bytes.
  EXPECT_EQ(scan.consumed, 22u);
}

TEST(ArrayTailTest, ResumesWhereTheLastScanStopped) {
  // A view: the elements found are views into the text scanned.
  const std::string_view text = "[{\"a\":1},{\"b\":2}";
  const ArrayTailScan first = ScanArrayTail(text.substr(0, 12), false);  // `[{"a":1},{"b`
  ASSERT_EQ(first.elements.size(), 1u);
  const ArrayTailScan second = ScanArrayTail(text.substr(first.consumed), true);
  EXPECT_EQ(Texts(second), (std::vector<std::string>{"{\"b\":2}"}));
  EXPECT_EQ(first.consumed + second.consumed, text.size());
}

TEST(ArrayTailTest, BracketsAndQuotesInsideStringsDoNotCount) {
  const std::string text = R"j([{"name":"f(]}{\"x\")"},{"n":"\\"}])j";
  const ArrayTailScan scan = ScanArrayTail(text, false);
  EXPECT_EQ(Texts(scan),
            (std::vector<std::string>{R"j({"name":"f(]}{\"x\")"})j", R"({"n":"\\"})"}));
  EXPECT_TRUE(scan.closed);
  EXPECT_EQ(scan.consumed, text.size());
}

TEST(ArrayTailTest, ClosingBracketFinishesTheFileEvenAfterATrailingComma) {
  const ArrayTailScan scan = ScanArrayTail("{\"a\":1},\n]\n", true);
  EXPECT_EQ(scan.elements.size(), 1u);
  EXPECT_TRUE(scan.closed);
  EXPECT_EQ(scan.consumed, 10u);
}

TEST(ArrayTailTest, DamageStopsTheScanWhereItIs) {
  const ArrayTailScan missing_comma = ScanArrayTail("[{\"a\":1} {\"b\":2}]", false);
  EXPECT_TRUE(missing_comma.damaged);
  EXPECT_EQ(missing_comma.damage_at, 9u);
  EXPECT_EQ(missing_comma.elements.size(), 1u);
  const ArrayTailScan no_array = ScanArrayTail("  {\"traceEvents\":[]}", false);
  EXPECT_TRUE(no_array.damaged);
  EXPECT_EQ(no_array.damage_at, 2u);
  EXPECT_TRUE(no_array.elements.empty());
}

TEST(ArrayTailTest, EmptyAndWhitespaceTextTakesNothing) {
  EXPECT_EQ(ScanArrayTail("", false).consumed, 0u);
  const ArrayTailScan spaces = ScanArrayTail("  \n", false);
  EXPECT_FALSE(spaces.opened);
  EXPECT_EQ(spaces.consumed, 0u);
}

TEST(ArrayTailTest, MetadataEventsAreToldByTheirPhase) {
  EXPECT_TRUE(IsMetadataEvent(R"({"ph":"M","name":"bubblescope_process"})"));
  EXPECT_TRUE(IsMetadataEvent(R"({"name": "thread_name", "ph" : "M"})"));
  EXPECT_FALSE(IsMetadataEvent(R"({"ph":"X","name":"M"})"));
  EXPECT_FALSE(IsMetadataEvent(R"({"name":"ph","ph":"X"})"));
  EXPECT_FALSE(IsMetadataEvent(R"({"cat":"kernel"})"));
}

}  // namespace
}  // namespace bubblescope::watch
