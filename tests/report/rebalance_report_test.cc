// The rebalance block of the report, text and JSON, for each outcome.
#include "report/rebalance_report.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "simdjson.h"

namespace bubblescope {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

simdjson::dom::element Parse(simdjson::dom::parser& parser, const job::RebalanceFigures& figures,
                             std::string* text) {
  JsonWriter json;
  WriteRebalanceJson(figures, json);
  absl::StatusOr<std::string> document = json.Finish();
  EXPECT_TRUE(document.ok()) << document.status();
  *text = document.ok() ? *document : "null";
  return parser.parse(*text).value();
}

TEST(RebalanceReportTest, Suggested) {
  rebalance::Result result;
  result.layers_before = {8, 8, 8, 8};
  result.before = {57000, 0.5};
  result.suggested = true;
  result.from_stage = 2;
  result.to_stage = 0;
  result.from_rank = 12;
  result.to_rank = 10;
  result.layers = 3;
  result.layers_after = {11, 8, 5, 8};
  result.after = {43875, 0.25};
  result.moves_simulated = 84;
  job::RebalanceFigures figures{
      .layers_per_stage = {8, 8, 8, 8}, .result = result, .predicted = std::nullopt};
  const std::string text = RebalanceText(figures);
  EXPECT_THAT(text,
              HasSubstr("rebalance (layers 8,8,8,8 from --layers-per-stage): move 3 layers from "
                        "stage 2 (rank 12) to stage 0 (rank 10) -> layers 11,8,5,8"));
  EXPECT_THAT(text, HasSubstr("predicted iteration 0.057 -> 0.044 ms, bubble 50.0% -> 25.0%"));
  simdjson::dom::parser parser;
  std::string json;
  simdjson::dom::element doc = Parse(parser, figures, &json);
  EXPECT_TRUE(bool(doc["suggested"]));
  EXPECT_TRUE(doc["unavailable"].is_null());
  EXPECT_EQ(std::string_view(doc["layers_source"]), "user");
  EXPECT_EQ(int64_t(doc["from_rank"]), 12);
  EXPECT_EQ(int64_t(doc["layers"]), 3);
  EXPECT_DOUBLE_EQ(double(doc["predicted_iteration_us_after"]), 43.875);
  EXPECT_DOUBLE_EQ(double(doc["predicted_bubble_fraction_before"]), 0.5);
  EXPECT_THAT(text, Not(HasSubstr("what-if model")));

  // Through the what-if model: measured, modelled and moved iterations, and the memory of the
  // stage that takes layers (stage 0 rises from 2 to 3 GiB against 0.5 GiB of headroom).
  whatif::Result predicted;
  predicted.measured_iteration_ns = 60'000'000;
  predicted.baseline.iteration_ns = 58'000'000;
  predicted.baseline.memory = {{0, 10, int64_t{2} << 30},
                               {1, 11, int64_t{2} << 30},
                               {2, 12, int64_t{2} << 30},
                               {3, 13, int64_t{2} << 30}};
  whatif::Prediction after;
  after.iteration_ns = 45'500'000;
  after.memory = {{0, 10, int64_t{3} << 30},
                  {1, 11, int64_t{2} << 30},
                  {2, 12, int64_t{1} << 30},
                  {3, 13, int64_t{2} << 30}};
  after.fits_memory = false;
  predicted.candidates = {after};
  figures.predicted = predicted;
  const std::string modelled = RebalanceText(figures);
  // One prediction quoted, the model's: the search's free-link figures are left out.
  predicted.baseline.bubble_fraction = 0.4;
  after.bubble_fraction = 0.3;
  predicted.candidates = {after};
  figures.predicted = predicted;
  const std::string quoted = RebalanceText(figures);
  EXPECT_THAT(quoted, HasSubstr("predicted iteration 58.000 ms as modelled (measured 60.000 ms) "
                                "-> 45.500 ms, bubble 40.0% -> 30.0% (the what-if model"));
  EXPECT_THAT(quoted, Not(HasSubstr("0.057 -> 0.044")));
  EXPECT_THAT(quoted, Not(HasSubstr("free links")));
  EXPECT_THAT(modelled, HasSubstr("stage 0 (rank 10) takes layers: peak 2.00 GiB -> 3.00 GiB\n"
                                  "    the move does not fit the measured memory headroom\n"));
  EXPECT_THAT(modelled, Not(HasSubstr("stage 3 (rank 13) takes")));
  simdjson::dom::parser parser3;
  doc = Parse(parser3, figures, &json);
  simdjson::dom::element links = doc["with_measured_links"];
  EXPECT_DOUBLE_EQ(double(links["measured_iteration_us"]), 60000.0);
  EXPECT_DOUBLE_EQ(double(links["iteration_us_before"]), 58000.0);
  EXPECT_DOUBLE_EQ(double(links["iteration_us_after"]), 45500.0);
  EXPECT_EQ(int64_t(simdjson::dom::array(links["peak_allocated_bytes_by_stage_after"]).at(0)),
            int64_t{3} << 30);
  EXPECT_FALSE(bool(links["fits_memory"]));
}

TEST(RebalanceReportTest, NotSuggestedAndUnavailable) {
  rebalance::Result result;
  result.before = {33056000, 0.4};
  result.moves_simulated = 84;
  result.min_gain = 0.01;
  job::RebalanceFigures quiet{
      .layers_per_stage = {8, 8, 8, 8}, .result = result, .predicted = std::nullopt};
  EXPECT_THAT(RebalanceText(quiet),
              HasSubstr("no single move of layers shortens the predicted iteration (33.056 ms) "
                        "by 1.0% or more; 84 moves simulated"));
  simdjson::dom::parser parser;
  std::string json;
  simdjson::dom::element doc = Parse(parser, quiet, &json);
  EXPECT_FALSE(bool(doc["suggested"]));
  EXPECT_EQ(doc["from_stage"].error(), simdjson::NO_SUCH_FIELD);

  job::RebalanceFigures unknown{
      .layers_per_stage = {4, 4},
      .result = absl::FailedPreconditionError("the pipeline's shape is unknown"),
      .predicted = std::nullopt};
  EXPECT_EQ(RebalanceText(unknown),
            "  rebalance (layers 4,4 from --layers-per-stage): not possible: the pipeline's "
            "shape is unknown\n");
  simdjson::dom::parser parser2;
  doc = Parse(parser2, unknown, &json);
  EXPECT_EQ(std::string_view(doc["unavailable"]), "the pipeline's shape is unknown");
  EXPECT_EQ(doc["suggested"].error(), simdjson::NO_SUCH_FIELD);
}

TEST(RebalanceReportTest, CountsFromAnnotationsSaySo) {
  rebalance::Result result;
  result.before = {33056000, 0.4};
  result.moves_simulated = 84;
  result.min_gain = 0.01;
  job::RebalanceFigures declared{.layers_per_stage = {6, 7, 8, 9},
                                 .source = job::LayerCountSource::kAnnotations,
                                 .result = result,
                                 .predicted = std::nullopt};
  EXPECT_THAT(RebalanceText(declared),
              HasSubstr("  rebalance (layers 6,7,8,9 from annotations): no single move"));
  simdjson::dom::parser parser;
  std::string json;
  simdjson::dom::element doc = Parse(parser, declared, &json);
  EXPECT_EQ(std::string_view(doc["layers_source"]), "annotations");

  // Incomplete annotations: no counts to show, only why.
  job::RebalanceFigures incomplete{
      .layers_per_stage = {},
      .source = job::LayerCountSource::kAnnotations,
      .result = absl::FailedPreconditionError("rank 3 declares no layer count"),
      .predicted = std::nullopt};
  EXPECT_EQ(RebalanceText(incomplete),
            "  rebalance (layer annotations): not possible: rank 3 declares no layer count\n");
  simdjson::dom::parser parser2;
  doc = Parse(parser2, incomplete, &json);
  EXPECT_EQ(simdjson::dom::array(doc["layers_per_stage"]).size(), 0u);
  EXPECT_EQ(std::string_view(doc["unavailable"]), "rank 3 declares no layer count");
}

}  // namespace
}  // namespace bubblescope
