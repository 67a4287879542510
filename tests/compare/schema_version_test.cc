// The report's schema version rule (any minor of major 1 reads) and telling a report from a
// trace by its first bytes.
#include "compare/schema_version.h"

#include "gtest/gtest.h"

namespace bubblescope::compare {
namespace {

TEST(ParseAnalyzeSchemaTest, MajorAndOptionalMinor) {
  absl::StatusOr<SchemaVersion> plain = ParseAnalyzeSchema("bubblescope.analyze/1");
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->major, 1);
  EXPECT_EQ(plain->minor, 0);
  absl::StatusOr<SchemaVersion> minor = ParseAnalyzeSchema("bubblescope.analyze/12.30");
  ASSERT_TRUE(minor.ok());
  EXPECT_EQ(minor->major, 12);
  EXPECT_EQ(minor->minor, 30);
  for (const char* bad : {"bubblescope.analyze/", "bubblescope.analyze/1.", "bubblescope.analyze/a",
                          "bubblescope.analyze/-1", "bubblescope.analyze/1.2.3",
                          "bubblescope.whatif/1", "bubblescope.analyze/ 1", "analyze/1"}) {
    EXPECT_FALSE(ParseAnalyzeSchema(bad).ok()) << bad;
  }
}

TEST(LooksLikeBubblescopeReportTest, OnlyAReportOpensWithItsSchema) {
  EXPECT_TRUE(LooksLikeBubblescopeReport("{\n  \"schema\": \"bubblescope.analyze/1\",\n"));
  EXPECT_TRUE(LooksLikeBubblescopeReport(" {\"schema\":\"bubblescope.analyze/9\"}"));
  EXPECT_FALSE(LooksLikeBubblescopeReport("{\"schemaVersion\": 1, \"traceEvents\": []}"));
  EXPECT_FALSE(LooksLikeBubblescopeReport("{\"traceEvents\": [], \"schema\": \"bubblescope.x\"}"));
  EXPECT_FALSE(LooksLikeBubblescopeReport("[{\"ph\": \"X\"}]"));
  EXPECT_FALSE(LooksLikeBubblescopeReport("{\"schema\": \"other/1\"}"));
  EXPECT_FALSE(LooksLikeBubblescopeReport("\x1f\x8b\x08"));
  EXPECT_FALSE(LooksLikeBubblescopeReport(""));
}

}  // namespace
}  // namespace bubblescope::compare
