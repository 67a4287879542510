#include "loader/rank_from_name.h"

#include <optional>
#include <string_view>

#include "gtest/gtest.h"

namespace bubblescope {
namespace {

struct NameCase {
  std::string_view path;
  std::optional<int32_t> rank;
};

TEST(RankFromNameTest, Table) {
  const NameCase cases[] = {
      {"sampled_rank-0.json.gz", 0},
      {"worker7_step_12.1694128201553.pt.trace.json.gz", 7},
      {"trace_rank12.json", 12},
      {"rank3.json", 3},
      {"rank_3.json", 3},
      {"rank.3.json", 3},
      {"worker3.json", 3},
      {"worker_3.json", 3},
      {"worker-3.json", 3},
      {"RANK5.json", 5},
      {"Worker_11.pt.trace.json", 11},
      {"rank007.json", 7},
      {"myrank.json", std::nullopt},
      {"myrank", std::nullopt},
      {"rank.json", std::nullopt},
      {"rank--3.json", std::nullopt},  // at most one separator
      {"ranking.json", std::nullopt},
      {"host_12345.1694128201553.pt.trace.json", std::nullopt},
      {"", std::nullopt},
      // The last match wins.
      {"rank3_worker5.json", 5},
      {"worker2-rank9.json", 9},
      {"rank1_rank2_rank30.json", 30},
      // Only the file name counts, not the directories above it.
      {"/runs/rank4/trace.json", std::nullopt},
      {"/runs/rank4/worker6.json", 6},
      // A number too big for an int32 is no rank; an earlier match still is.
      {"rank99999999999.json", std::nullopt},
      {"rank2_rank99999999999.json", 2},
      {"rank2147483647.json", 2147483647},
  };
  for (const NameCase& c : cases) {
    SCOPED_TRACE(c.path);
    EXPECT_EQ(RankFromFileName(c.path), c.rank);
  }
}

}  // namespace
}  // namespace bubblescope
