#include "report/evidence_report.h"

#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace bubblescope {
namespace {

using inference_evidence::Fact;
using inference_evidence::Strength;

// How a fact's strength reads in text: a weak one is a guess.
std::string_view StrengthWord(Strength strength) {
  switch (strength) {
    case Strength::kRead:
      return "read";
    case Strength::kStrong:
      return "inferred";
    case Strength::kWeak:
      return "guess";
    case Strength::kNone:
      return "unknown";
  }
  return "unknown";
}

// The words a fact's source reads as in text.
std::string SourceWords(std::string_view source) {
  static constexpr std::pair<std::string_view, std::string_view> kWords[] = {
      {"recorded_peers", "recorded peer ranks"},
      {"transfer_timing", "when transfers completed"},
      {"batched_transfer_rhythm", "the rhythm of batched transfers"},
      {"rank_order", "nothing (rank order)"},
      {"recorded", "the trace's peer args"},
      {"pp_action", "the runtime's PP: transfer names"},
      {"inferred", "the stage order and what each transfer carries"},
      {"only_neighbour", "the only other rank"},
      {"p2p", "p2p traffic"},
      // Schedule family rules.
      {"split_backward", "weight-gradient ops"},
      {"no_backward", "no backward"},
      {"one_microbatch", "one microbatch"},
      {"forwards_first", "every forward before the first backward"},
      {"backward_before_last_forward", "a backward before the last forward"},
  };
  for (const auto& [name, words] : kWords) {
    if (name == source) return std::string(words);
  }
  return std::string(source);  // "annotations", "none", "unknown"
}

std::string FactText(std::string_view what, const Fact& fact) {
  return absl::StrCat(std::string(what), " from ", SourceWords(fact.source), " (",
                      std::string(StrengthWord(fact.strength)), ")");
}

void WriteFactMembers(const Fact& fact, JsonWriter& json) {
  json.StringMember("source", fact.source);
  json.StringMember("strength", inference_evidence::StrengthName(fact.strength));
}

void WriteFact(std::string_view key, const Fact& fact, JsonWriter& json) {
  json.Key(key);
  json.BeginObject();
  WriteFactMembers(fact, json);
  json.EndObject();
}

constexpr std::pair<p2p_graph::PeerSource, std::string_view> kPeerSources[] = {
    {p2p_graph::PeerSource::kRecorded, "recorded"},
    {p2p_graph::PeerSource::kPpAction, "pp_action"},
    {p2p_graph::PeerSource::kInferred, "inferred"},
    {p2p_graph::PeerSource::kUnknown, "unknown"},
};

}  // namespace

std::string EvidenceText(const inference_evidence::Evidence& evidence) {
  std::vector<std::string> counts;
  for (const auto& [source, name] : kPeerSources) {
    const int64_t count = evidence.peers_by_source[static_cast<size_t>(source)];
    if (count > 0) counts.push_back(absl::StrCat(count, " ", std::string(name)));
  }
  std::string peers = FactText("peers", evidence.peers);
  if (!counts.empty()) absl::StrAppend(&peers, " [p2p ops: ", absl::StrJoin(counts, ", "), "]");
  std::string family = FactText("schedule family", evidence.schedule_family);
  if (!evidence.schedule_family_rule.empty()) {
    absl::StrAppend(&family, " [", SourceWords(evidence.schedule_family_rule), "]");
  }
  return absl::StrCat("  evidence: ", FactText("stage order", evidence.stage_order), "; ", peers,
                      "; ", family, "\n");
}

void WriteEvidenceMember(const inference_evidence::Evidence& evidence, JsonWriter& json) {
  json.Key("evidence");
  json.BeginObject();
  WriteFact("stage_order", evidence.stage_order, json);
  json.Key("peers");
  json.BeginObject();
  WriteFactMembers(evidence.peers, json);
  json.Key("p2p_ops");
  json.BeginObject();
  for (const auto& [source, name] : kPeerSources) {
    json.IntMember(name, evidence.peers_by_source[static_cast<size_t>(source)]);
  }
  json.EndObject();
  json.EndObject();
  json.Key("schedule_family");
  json.BeginObject();
  WriteFactMembers(evidence.schedule_family, json);
  if (!evidence.schedule_family_rule.empty()) {
    json.StringMember("rule", evidence.schedule_family_rule);
  }
  json.EndObject();
  json.EndObject();
}

}  // namespace bubblescope
