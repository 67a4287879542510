#include "bubblescope/name_pool.h"

#include <string>

#include "gtest/gtest.h"

namespace bubblescope {
namespace {

TEST(NamePoolTest, EmptyStringIsIdZero) {
  NamePool pool;
  EXPECT_EQ(pool.Intern(""), kNoName);
  EXPECT_EQ(pool.Get(kNoName), "");
  EXPECT_EQ(pool.size(), 1u);
}

TEST(NamePoolTest, SameNameSameIdDifferentNameDifferentId) {
  NamePool pool;
  NameId a = pool.Intern("aten::mm");
  NameId b = pool.Intern("ncclDevKernel_SendRecv");
  EXPECT_NE(a, b);
  EXPECT_EQ(pool.Intern(std::string("aten::") + "mm"), a);
  EXPECT_EQ(pool.Get(a), "aten::mm");
  EXPECT_EQ(pool.Get(b), "ncclDevKernel_SendRecv");
  EXPECT_EQ(pool.Find("aten::mm"), a);
  EXPECT_EQ(pool.Find("aten::add"), kNoName);
  EXPECT_EQ(pool.size(), 3u);
}

TEST(NamePoolTest, ViewsSurviveGrowthAndMove) {
  NamePool pool;
  std::string long_name(40000, 'k');  // bigger than a quarter block: stored on its own
  NameId long_id = pool.Intern(long_name);
  const std::string_view first_long = pool.Get(long_id);
  std::string_view first = pool.Get(pool.Intern("name0"));
  for (int i = 1; i < 20000; ++i) pool.Intern("name" + std::to_string(i));
  // More long names than the first capacity of the vector holding them: it reallocates.
  for (char c = 'a'; c < 'a' + 20; ++c) pool.Intern(std::string(20000, c));
  NamePool moved = std::move(pool);
  EXPECT_EQ(first, "name0");
  EXPECT_EQ(first_long.data(), moved.Get(long_id).data());  // the characters never moved
  EXPECT_TRUE(moved.Get(long_id) == long_name);  // not EXPECT_EQ: a failure would print 40 kB
  EXPECT_EQ(moved.Get(moved.Find("name19999")), "name19999");
  EXPECT_EQ(moved.size(), 20022u);
  EXPECT_GT(moved.MemoryBytes(), 20000u * 5);
}

// Move assignment hands the names over too, and a pool moved from starts again empty when it is
// used (its index went with the move).
TEST(NamePoolTest, MoveAssignmentAndAPoolMovedFrom) {
  NamePool pool;
  const NameId gemm = pool.Intern("gemm");
  NamePool other;
  other.Intern("old");
  other = std::move(pool);
  EXPECT_EQ(other.Find("gemm"), gemm);
  EXPECT_EQ(other.Find("old"), kNoName);
  EXPECT_EQ(pool.Find("gemm"), kNoName);  // NOLINT(bugprone-use-after-move): what is tested
  EXPECT_EQ(pool.Intern("again"), 1u);
  EXPECT_EQ(pool.Get(kNoName), "");
  EXPECT_EQ(pool.size(), 2u);
}

// A pool holds memory in proportion to its names: one short name costs a small first block,
// not a 64 KiB one (40,000 tiny rank files took 2.8 GB that way), and blocks grow as names come.
TEST(NamePoolTest, AFewNamesHoldAFewBytes) {
  NamePool pool;
  pool.Intern("aten::mm");
  EXPECT_LT(pool.MemoryBytes(), 1024u);
  for (int i = 0; i < 20000; ++i) pool.Intern("name_" + std::to_string(i));
  const size_t characters = 20000 * 10;  // "name_" plus up to 5 digits
  // Per name: its 10 bytes, a 16-byte view in the list, and in the index (a std table, whose
  // growth unwinds when memory runs out) a 40-byte node and an 8-byte bucket: 74 bytes, with
  // the list's and the blocks' doubling up to 10 per character.
  EXPECT_LT(pool.MemoryBytes(), 10 * characters);
  EXPECT_EQ(pool.Get(pool.Find("name_19999")), "name_19999");
}

TEST(NamePoolTest, NamesWithNulAndUnicode) {
  NamePool pool;
  std::string with_nul("a\0b", 3);
  NameId id = pool.Intern(with_nul);
  NameId unicode = pool.Intern("stage\xc3\xa9\xe2\x86\x92");
  EXPECT_EQ(pool.Get(id).size(), 3u);
  EXPECT_NE(pool.Find("a"), id);
  EXPECT_EQ(pool.Get(unicode), "stage\xc3\xa9\xe2\x86\x92");
}

}  // namespace
}  // namespace bubblescope
