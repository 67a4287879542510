#include "distributed/read_bundle.h"

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace bubblescope::distributed {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

ReadBundle TwoFiles() {
  ReadBundle bundle;
  bundle.list_fingerprint = 0x0123456789abcdefull;
  bundle.list_size = 7;
  EncodedRead good;
  good.index = 3;
  good.read = true;
  good.merged = true;
  job::RankFacts facts;
  facts.has_p2p = true;
  facts.cut_short = true;
  facts.recorded_peers = {-1, 3, 70000};
  facts.own_steps = {{-2, -5000, false}, {7, 123456789012345, true}};
  good.ranks = {{std::string("header\0one", 10), facts}, {"", job::RankFacts{}}};
  good.ranks[1].facts.repeats = true;
  EncodedRead bad;
  bad.index = 5;
  bad.read = true;
  bad.status = absl::ResourceExhaustedError("x.json: byte 9: more than 1 MiB of text");
  EncodedRead unread;
  unread.index = 6;
  bundle.reads = {good, bad, unread};
  return bundle;
}

TEST(ReadBundleTest, UnpackGivesBackWhatWasPacked) {
  const ReadBundle sent = TwoFiles();
  absl::StatusOr<ReadBundle> got = UnpackBundle(PackBundle(sent), 2);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_TRUE(got->list_status.ok());
  EXPECT_EQ(got->list_fingerprint, sent.list_fingerprint);
  EXPECT_EQ(got->list_size, 7u);
  ASSERT_EQ(got->reads.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(got->reads[i].index, sent.reads[i].index);
    EXPECT_EQ(got->reads[i].read, sent.reads[i].read);
    EXPECT_EQ(got->reads[i].status, sent.reads[i].status);
    EXPECT_EQ(got->reads[i].merged, sent.reads[i].merged);
    ASSERT_EQ(got->reads[i].ranks.size(), sent.reads[i].ranks.size());
    for (size_t k = 0; k < sent.reads[i].ranks.size(); ++k) {
      const EncodedRank& want = sent.reads[i].ranks[k];
      const EncodedRank& rank = got->reads[i].ranks[k];
      EXPECT_EQ(rank.header, want.header);
      EXPECT_EQ(rank.facts.has_p2p, want.facts.has_p2p);
      EXPECT_EQ(rank.facts.cut_short, want.facts.cut_short);
      EXPECT_EQ(rank.facts.repeats, want.facts.repeats);
      EXPECT_EQ(rank.facts.recorded_peers, want.facts.recorded_peers);
      ASSERT_EQ(rank.facts.own_steps.size(), want.facts.own_steps.size());
      for (size_t s = 0; s < want.facts.own_steps.size(); ++s) {
        EXPECT_EQ(rank.facts.own_steps[s].number, want.facts.own_steps[s].number);
        EXPECT_EQ(rank.facts.own_steps[s].start, want.facts.own_steps[s].start);
        EXPECT_EQ(rank.facts.own_steps[s].partial, want.facts.own_steps[s].partial);
      }
    }
  }
}

TEST(ReadBundleTest, AListingErrorTravels) {
  ReadBundle sent;
  sent.list_status = absl::InvalidArgumentError("traces/: no trace files (*.json, *.json.gz)");
  absl::StatusOr<ReadBundle> got = UnpackBundle(PackBundle(sent), 1);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->list_status, sent.list_status);
  EXPECT_TRUE(got->reads.empty());
}

// Every cut of a bundle is an error naming the process and an offset, never a crash or a huge
// allocation, and so are bytes added after it.
TEST(ReadBundleTest, CutOrLengthenedBundlesAreErrors) {
  const std::string bytes = PackBundle(TwoFiles());
  for (size_t cut = 0; cut < bytes.size(); ++cut) {
    absl::StatusOr<ReadBundle> got = UnpackBundle(std::string_view(bytes).substr(0, cut), 3);
    ASSERT_FALSE(got.ok()) << cut;
    EXPECT_EQ(got.status().code(), absl::StatusCode::kInternal);
    EXPECT_THAT(std::string(got.status().message()), StartsWith("process 3: byte "));
  }
  EXPECT_THAT(std::string(UnpackBundle(bytes + "x", 1).status().message()),
              HasSubstr("bytes after the bundle"));
}

TEST(ReadBundleTest, ACountLargerThanTheBundleIsRefusedBeforeAllocating) {
  std::string bytes = PackBundle(ReadBundle{});
  // The reads count is the last number: claim 2^62 reads.
  bytes[bytes.size() - 1] = '\x40';
  absl::StatusOr<ReadBundle> got = UnpackBundle(bytes, 0);
  ASSERT_FALSE(got.ok());
  EXPECT_THAT(std::string(got.status().message()), HasSubstr("count larger than the bundle"));
}

}  // namespace
}  // namespace bubblescope::distributed
