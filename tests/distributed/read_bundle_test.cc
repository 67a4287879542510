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
  good.digests = {std::string("digest\0one", 10), ""};
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
    EXPECT_EQ(got->reads[i].digests, sent.reads[i].digests);
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
