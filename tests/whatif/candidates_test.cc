// Which candidates `whatif` predicts, by hand: the user's one (each part as measured where not
// given), or the defaults.
#include "whatif/candidates.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "gtest/gtest.h"

namespace bubblescope::whatif {
namespace {

Model Measured(sim::Schedule schedule, int32_t v) {
  Model model;
  model.schedule = schedule;
  model.p = 4;
  model.m = 8;
  model.v = v;
  return model;
}

CandidateChoice Choice(std::string schedule, int32_t microbatches = 0, int32_t v = 0,
                       bool same_global_batch = false) {
  CandidateChoice choice;
  choice.schedule = std::move(schedule);
  choice.microbatches = microbatches;
  choice.virtual_stages = v;
  choice.same_global_batch = same_global_batch;
  return choice;
}

TEST(CandidatesTest, NothingChosenGivesTheDefaults) {
  const Model model = Measured(sim::Schedule::k1F1B, 1);
  absl::StatusOr<std::vector<Candidate>> candidates =
      CandidatesToPredict(model, CandidateChoice{}, {});
  ASSERT_TRUE(candidates.ok()) << candidates.status();
  EXPECT_EQ(*candidates, DefaultCandidates(model));
  // m x2 and x4 with more samples per step; 1f1b m=8 with p=4 also tries interleaved v=2.
  ASSERT_GE(candidates->size(), 3u);
  EXPECT_EQ(candidates->at(0), (Candidate{sim::Schedule::k1F1B, 16, 1, false, {}}));
  EXPECT_EQ(candidates->at(1), (Candidate{sim::Schedule::k1F1B, 32, 1, false, {}}));
  EXPECT_EQ(candidates->at(2), (Candidate{sim::Schedule::kInterleaved1F1B, 8, 2, false, {}}));
  // With a layer move known, it is the last default.
  candidates = CandidatesToPredict(model, CandidateChoice{}, {5, 3, 4, 4});
  ASSERT_TRUE(candidates.ok());
  EXPECT_EQ(candidates->back(), (Candidate{sim::Schedule::k1F1B, 8, 1, false, {5, 3, 4, 4}}));
}

TEST(CandidatesTest, TheChosenOneKeepsWhatIsNotGiven) {
  const Model model = Measured(sim::Schedule::k1F1B, 1);
  absl::StatusOr<std::vector<Candidate>> candidates =
      CandidatesToPredict(model, Choice("", 32), {5, 3, 4, 4});
  ASSERT_TRUE(candidates.ok());
  EXPECT_EQ(*candidates, (std::vector<Candidate>{{sim::Schedule::k1F1B, 32, 1, false, {}}}));
  // Interleaved from one chunk takes v = 2; from looped GPipe's v = 3 keeps it; any other
  // schedule runs one chunk.
  EXPECT_EQ(*ChosenCandidate(model, Choice("interleaved")),
            (Candidate{sim::Schedule::kInterleaved1F1B, 8, 2, false, {}}));
  EXPECT_EQ(*ChosenCandidate(Measured(sim::Schedule::kGpipe, 3), Choice("interleaved")),
            (Candidate{sim::Schedule::kInterleaved1F1B, 8, 3, false, {}}));
  EXPECT_EQ(*ChosenCandidate(Measured(sim::Schedule::kInterleaved1F1B, 2), Choice("zb-h1")),
            (Candidate{sim::Schedule::kZeroBubbleH1, 8, 1, false, {}}));
  EXPECT_EQ(*ChosenCandidate(model, Choice("interleaved", 0, 4, true)),
            (Candidate{sim::Schedule::kInterleaved1F1B, 8, 4, true, {}}));
}

TEST(CandidatesTest, AnUnknownScheduleIsRefused) {
  absl::StatusOr<std::vector<Candidate>> candidates =
      CandidatesToPredict(Measured(sim::Schedule::k1F1B, 1), Choice("2f2b"), {});
  EXPECT_EQ(candidates.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(candidates.status().message().find("'2f2b'"), std::string::npos);
}

}  // namespace
}  // namespace bubblescope::whatif
