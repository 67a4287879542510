// The evidence line and member of a pipeline from hand-built evidence: a weak fact reads as a
// guess in text, and JSON carries every fact's source and strength and the peer counts.
#include "report/evidence_report.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "simdjson.h"
#include "text/json_writer.h"

namespace bubblescope {
namespace {

using inference_evidence::Evidence;
using inference_evidence::Strength;
using ::testing::HasSubstr;

Evidence GlooRunWithoutNames() {
  Evidence evidence;
  evidence.stage_order = {"transfer_timing", Strength::kWeak};
  evidence.peers = {"inferred", Strength::kWeak};
  evidence.schedule_family = {"p2p", Strength::kStrong};
  evidence.peers_by_source = {0, 0, 190, 2};
  return evidence;
}

// The evidence member alone, as JSON text.
std::string EvidenceJson(const Evidence& evidence) {
  JsonWriter json;
  json.BeginObject();
  WriteEvidenceMember(evidence, json);
  json.EndObject();
  absl::StatusOr<std::string> text = json.Finish();
  EXPECT_TRUE(text.ok()) << text.status();
  return text.ok() ? *text : "";
}

TEST(EvidenceReportTest, WeakFactsReadAsGuesses) {
  EXPECT_EQ(EvidenceText(GlooRunWithoutNames()),
            "  evidence: stage order from when transfers completed (guess); peers from the stage "
            "order and what each transfer carries (guess) [p2p ops: 190 inferred, 2 unknown]; "
            "schedule family from p2p traffic (inferred)\n");
  Evidence named;
  named.stage_order = {"annotations", Strength::kRead};
  named.peers = {"pp_action", Strength::kStrong};
  named.schedule_family = {"annotations", Strength::kRead};
  named.schedule_family_rule = "forwards_first";
  named.peers_by_source = {0, 192, 0, 0};
  const std::string text = EvidenceText(named);
  EXPECT_THAT(text, HasSubstr("schedule family from annotations (read) [every forward before the "
                              "first backward]"));
  EXPECT_THAT(text, HasSubstr("stage order from annotations (read)"));
  EXPECT_THAT(text, HasSubstr("peers from the runtime's PP: transfer names (inferred) [p2p ops: "
                              "192 pp_action]"));
  EXPECT_THAT(text, ::testing::Not(HasSubstr("guess")));
}

TEST(EvidenceReportTest, JsonMemberCarriesSourcesStrengthsAndCounts) {
  const std::string text = EvidenceJson(GlooRunWithoutNames());
  simdjson::dom::parser parser;
  simdjson::dom::element evidence = parser.parse(text)["evidence"];
  EXPECT_EQ(std::string_view(evidence["stage_order"]["source"]), "transfer_timing");
  EXPECT_EQ(std::string_view(evidence["stage_order"]["strength"]), "weak");
  EXPECT_EQ(std::string_view(evidence["peers"]["source"]), "inferred");
  EXPECT_EQ(std::string_view(evidence["peers"]["strength"]), "weak");
  EXPECT_EQ(int64_t(evidence["peers"]["p2p_ops"]["recorded"]), 0);
  EXPECT_EQ(int64_t(evidence["peers"]["p2p_ops"]["pp_action"]), 0);
  EXPECT_EQ(int64_t(evidence["peers"]["p2p_ops"]["inferred"]), 190);
  EXPECT_EQ(int64_t(evidence["peers"]["p2p_ops"]["unknown"]), 2);
  EXPECT_EQ(std::string_view(evidence["schedule_family"]["source"]), "p2p");
  EXPECT_EQ(std::string_view(evidence["schedule_family"]["strength"]), "strong");
  // Without a rule (no shape) the member is left out.
  EXPECT_EQ(evidence["schedule_family"]["rule"].error(), simdjson::NO_SUCH_FIELD);
}

TEST(EvidenceReportTest, JsonMemberCarriesTheFamilyRule) {
  Evidence evidence = GlooRunWithoutNames();
  evidence.schedule_family_rule = "backward_before_last_forward";
  const std::string text = EvidenceJson(evidence);
  simdjson::dom::parser parser;
  EXPECT_EQ(std::string_view(parser.parse(text)["evidence"]["schedule_family"]["rule"]),
            "backward_before_last_forward");
  EXPECT_THAT(EvidenceText(evidence),
              HasSubstr("schedule family from p2p traffic (inferred) [a backward before the last "
                        "forward]\n"));
}

}  // namespace
}  // namespace bubblescope
