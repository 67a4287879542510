// Layer counts from the ranks' own `bubblescope:layers=N` annotations: the name's grammar, and
// when a pipeline's counts are usable, by stage rather than by rank id.
#include "pipeline/layer_counts.h"

#include <string>
#include <utility>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace bubblescope::layer_counts {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

TEST(ParseLayerAnnotationTest, Grammar) {
  EXPECT_EQ(ParseLayerAnnotation("bubblescope:layers=8"), 8);
  EXPECT_EQ(ParseLayerAnnotation("bubblescope:layers=1000000"), 1'000'000);
  EXPECT_EQ(ParseLayerAnnotation("bubblescope:layers=007"), 7);
  // The prefix is there but the count is not usable.
  EXPECT_EQ(ParseLayerAnnotation("bubblescope:layers="), 0);
  EXPECT_EQ(ParseLayerAnnotation("bubblescope:layers=0"), 0);
  EXPECT_EQ(ParseLayerAnnotation("bubblescope:layers=-3"), 0);
  EXPECT_EQ(ParseLayerAnnotation("bubblescope:layers=+3"), 0);
  EXPECT_EQ(ParseLayerAnnotation("bubblescope:layers=8 "), 0);
  EXPECT_EQ(ParseLayerAnnotation("bubblescope:layers=1000001"), 0);
  EXPECT_EQ(ParseLayerAnnotation("bubblescope:layers=99999999999"), 0);
  // Not the annotation at all.
  EXPECT_EQ(ParseLayerAnnotation("layers=8"), -1);
  EXPECT_EQ(ParseLayerAnnotation("Bubblescope:layers=8"), -1);
  EXPECT_EQ(ParseLayerAnnotation("PP:0F1"), -1);
}

void Annotate(Rank& rank, const std::string& name, TimeNs start,
              AnnotationScope scope = AnnotationScope::kCpu) {
  Annotation annotation;
  annotation.start = start;
  annotation.end = start + 10;
  annotation.name = rank.names.Intern(name);
  annotation.scope = scope;
  rank.annotations.push_back(annotation);
}

// Ranks 0..3; rank r declares layers[r] (0: no annotation), among unrelated annotations.
Trace Declaring(const std::vector<int32_t>& layers) {
  Trace trace;
  for (size_t r = 0; r < layers.size(); ++r) {
    Rank rank;
    rank.rank = static_cast<int32_t>(r);
    Annotate(rank, "ProfilerStep#0", 0);
    if (layers[r] != 0) Annotate(rank, "bubblescope:layers=" + std::to_string(layers[r]), 5);
    Annotate(rank, "PP:0F1", 20);
    trace.ranks.push_back(std::move(rank));
  }
  return trace;
}

TEST(LayerCountsTest, ByStageNotByRankId) {
  Trace trace = Declaring({6, 7, 8, 9});
  // Stage 0 is rank 2, stage 1 rank 0, ...
  Result result = Analyze(trace, {.stage_order = {2, 0, 3, 1}});
  EXPECT_THAT(result.layers_per_stage, ElementsAre(8, 6, 9, 7));
  EXPECT_THAT(result.problem, IsEmpty());
  EXPECT_TRUE(result.declared());
}

TEST(LayerCountsTest, NothingDeclaredIsNoProblem) {
  Result result = Analyze(Declaring({0, 0, 0}), {.stage_order = {0, 1, 2}});
  EXPECT_THAT(result.layers_per_stage, IsEmpty());
  EXPECT_THAT(result.problem, IsEmpty());
  EXPECT_FALSE(result.declared());
}

TEST(LayerCountsTest, OnlyThePipelinesRanksCount) {
  // Ranks 2 and 3 are another pipeline of the job and declare nothing.
  Result result = Analyze(Declaring({4, 5, 0, 0}), {.stage_order = {1, 0}});
  EXPECT_THAT(result.layers_per_stage, ElementsAre(5, 4));
  // A stage whose rank is not in the trace declares nothing.
  result = Analyze(Declaring({4, 5}), {.stage_order = {0, 1, 7}});
  EXPECT_THAT(result.layers_per_stage, IsEmpty());
  EXPECT_THAT(result.problem, HasSubstr("rank 7 declares no 'bubblescope:layers=N' annotation"));
}

TEST(LayerCountsTest, ARankWithoutACountSpoilsThePipeline) {
  Result result = Analyze(Declaring({8, 8, 0, 8}), {.stage_order = {0, 1, 2, 3}});
  EXPECT_THAT(result.layers_per_stage, IsEmpty());
  EXPECT_EQ(result.problem,
            "rank 2 declares no 'bubblescope:layers=N' annotation while other ranks of the "
            "pipeline do");
  EXPECT_TRUE(result.declared());
}

TEST(LayerCountsTest, RepeatsAgreeConflictsAndBadCountsAreProblems) {
  Trace trace = Declaring({8, 8});
  // Declared again each iteration, once on the GPU: the same count is fine.
  Annotate(trace.ranks[1], "bubblescope:layers=8", 100);
  Annotate(trace.ranks[1], "bubblescope:layers=8", 200, AnnotationScope::kGpu);
  EXPECT_THAT(Analyze(trace, {.stage_order = {0, 1}}).layers_per_stage, ElementsAre(8, 8));

  Annotate(trace.ranks[1], "bubblescope:layers=9", 300);
  Result result = Analyze(trace, {.stage_order = {0, 1}});
  EXPECT_THAT(result.layers_per_stage, IsEmpty());
  EXPECT_EQ(result.problem, "rank 1 declares both 8 and 9 layers");

  Trace zero = Declaring({8, 8});
  Annotate(zero.ranks[0], "bubblescope:layers=0", 50);
  result = Analyze(zero, {.stage_order = {0, 1}});
  EXPECT_THAT(result.layers_per_stage, IsEmpty());
  EXPECT_EQ(result.problem,
            "rank 0 has the annotation 'bubblescope:layers=0', whose count is not a whole number "
            "from 1 to 1000000");
}

}  // namespace
}  // namespace bubblescope::layer_counts
