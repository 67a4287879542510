// part_exchange.h: a part's ranks asked for by file and place, answered by the processes that
// hold them, put back in the order asked; a rank nobody sent, or sent twice, or a damaged answer
// is an error, never a wrong part.
#include "distributed/part_exchange.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace bubblescope::distributed {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

// Process 0 read files 0 and 2 (file 2 merged, two ranks), process 1 file 1.
std::vector<HeldDigests> TwoProcesses() {
  return {HeldDigests{{0, {"f0"}}, {2, {"f2 r0", std::string("f2\0r1", 5)}}},
          HeldDigests{{1, {"f1"}}}};
}

std::vector<std::string> Answers(const std::vector<HeldDigests>& held,
                                 const std::vector<RankOrigin>& ranks) {
  std::vector<std::string> answers;
  for (const HeldDigests& digests : held) {
    absl::StatusOr<std::string> answer = AnswerRequest(digests, PackRequest(ranks));
    EXPECT_TRUE(answer.ok()) << answer.status();
    answers.push_back(answer.value_or(""));
  }
  return answers;
}

TEST(PartExchangeTest, TheDigestsComeBackInTheOrderAskedFor) {
  const std::vector<RankOrigin> ranks = {{2, 1}, {1, 0}, {0, 0}};
  absl::StatusOr<std::vector<std::string>> digests =
      CollectAnswers(Answers(TwoProcesses(), ranks), ranks);
  ASSERT_TRUE(digests.ok()) << digests.status();
  EXPECT_EQ(*digests, (std::vector<std::string>{std::string("f2\0r1", 5), "f1", "f0"}));
}

TEST(PartExchangeTest, ARankNobodyHoldsIsAnError) {
  const std::vector<RankOrigin> ranks = {{0, 0}, {2, 2}};  // file 2 has two ranks only
  const absl::Status status = CollectAnswers(Answers(TwoProcesses(), ranks), ranks).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInternal);
  EXPECT_EQ(status.message(), "no process sent rank 2 of file 2");
}

TEST(PartExchangeTest, ARankSentTwiceIsAnError) {
  const std::vector<RankOrigin> ranks = {{1, 0}};
  std::vector<HeldDigests> held = TwoProcesses();
  held[0][1] = {"f1 again"};  // both processes claim file 1
  const absl::Status status = CollectAnswers(Answers(held, ranks), ranks).status();
  EXPECT_THAT(std::string(status.message()), StartsWith("process 1: byte "));
  EXPECT_THAT(std::string(status.message()), HasSubstr("sent twice (file 1, rank 0)"));
}

TEST(PartExchangeTest, DamagedRequestsAndAnswersAreErrors) {
  const std::vector<RankOrigin> ranks = {{0, 0}, {1, 0}};
  const std::string request = PackRequest(ranks);
  for (size_t cut = 0; cut < request.size(); ++cut) {
    const absl::Status status =
        AnswerRequest(TwoProcesses()[0], std::string_view(request).substr(0, cut)).status();
    ASSERT_EQ(status.code(), absl::StatusCode::kInternal) << cut;
    EXPECT_THAT(std::string(status.message()), StartsWith("process 0: byte ")) << cut;
  }
  const std::vector<std::string> answers = Answers(TwoProcesses(), ranks);
  for (size_t cut = 0; cut < answers[1].size(); ++cut) {
    const absl::Status status =
        CollectAnswers({answers[0], answers[1].substr(0, cut)}, ranks).status();
    ASSERT_EQ(status.code(), absl::StatusCode::kInternal) << cut;
    EXPECT_THAT(std::string(status.message()), StartsWith("process 1: byte ")) << cut;
  }
  EXPECT_THAT(std::string(CollectAnswers({answers[0], answers[1] + "x"}, ranks).status().message()),
              HasSubstr("bytes after the part answer"));
}

}  // namespace
}  // namespace bubblescope::distributed
