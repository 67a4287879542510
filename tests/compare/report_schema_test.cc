// The schema table of the analyze report's compared figures (compare/report_schema.h): each
// RunFigures member filled by one row, the rows found where the enum says, a wrong type refused
// with the member's name, a row's value written, stored and refused alike, and the reference
// rows of docs/json-report.md as the table generates them.
#include "compare/report_schema.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compare/report_reader.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace bubblescope::compare::schema {
namespace {

// The address a slot points at, as an opaque key (nullptr for monostate).
const void* Address(const Slot& slot) {
  return std::visit(
      [](auto held) -> const void* {
        if constexpr (std::is_same_v<decltype(held), std::monostate>) {
          return nullptr;
        } else {
          return held;
        }
      },
      slot);
}

// How many rows of `fields` fill each member of `figures`.
template <typename Source, typename Figures>
void CountSlots(std::span<const Field<Source, Figures>> fields, Figures& figures,
                std::map<const void*, int>* count) {
  for (const Field<Source, Figures>& field : fields) {
    if (field.slot != nullptr) ++(*count)[Address(field.slot(figures))];
  }
}

// Each listed member (written out here, by hand) is filled by exactly one row, and no row fills
// anything else: a figure added to RunFigures without a row, or given two, fails here.
void ExpectEachOnce(const std::map<const void*, int>& count,
                    const std::vector<const void*>& members, std::string_view what) {
  std::set<const void*> listed(members.begin(), members.end());
  EXPECT_EQ(listed.size(), members.size()) << what;
  for (size_t i = 0; i < members.size(); ++i) {
    const auto found = count.find(members[i]);
    EXPECT_TRUE(found != count.end() && found->second == 1)
        << what << ": member " << i << " is filled by "
        << (found == count.end() ? 0 : found->second) << " rows";
  }
  for (const auto& [address, rows] : count) {
    EXPECT_TRUE(listed.contains(address)) << what << ": a row fills a member not listed";
  }
}

TEST(ReportSchemaTest, EveryComparedMemberIsFilledByExactlyOneRow) {
  PipelineFigures pipeline;
  std::map<const void*, int> count;
  CountSlots(kPipelineFields, pipeline, &count);
  CountSlots(kLatencyFields, pipeline, &count);
  CountSlots(kRebalanceFields, pipeline, &count);
  ExpectEachOnce(
      count,
      {&pipeline.ranks, &pipeline.stages, &pipeline.microbatches, &pipeline.virtual_stages,
       &pipeline.schedule, &pipeline.bubble_fraction, &pipeline.theoretical_bubble_fraction,
       &pipeline.excess_bubble_fraction, &pipeline.latency_p50_us, &pipeline.latency_p90_us,
       &pipeline.latency_max_us, &pipeline.complete_iterations, &pipeline.no_complete_iteration,
       &pipeline.whatif_model_problem, &pipeline.rebalance_layers_after},
      "pipelines[]");

  IterationFigures iteration;
  count.clear();
  CountSlots(kIterationFields, iteration, &count);
  ExpectEachOnce(
      count,
      {&iteration.step, &iteration.complete, &iteration.window_us, &iteration.bubble_fraction},
      "iterations[]");

  StageFigures stage;
  count.clear();
  CountSlots(kRankStatFields, stage, &count);
  ExpectEachOnce(
      count,
      {&stage.rank, &stage.stage, &stage.bubble_fraction, &stage.peak_allocated_bytes,
       &stage.peak_reserved_bytes, &stage.forward_us, &stage.backward_us, &stage.weight_grad_us},
      "rank_stats[]");

  LinkFigures link;
  count.clear();
  CountSlots(kLinkFields, link, &count);
  ExpectEachOnce(count,
                 {&link.src, &link.dst, &link.transfer_us_median, &link.gbps_median, &link.wait_us,
                  &link.slow},
                 "links[]");

  FindingFigures finding;
  count.clear();
  CountSlots(kFindingFields, finding, &count);
  ExpectEachOnce(
      count, {&finding.kind, &finding.severity, &finding.message, &finding.ranks, &finding.cost_us},
      "findings[]");

  whatif::Model model;
  count.clear();
  CountSlots(kWhatIfModelFields, model, &count);
  ExpectEachOnce(count,
                 {&model.schedule, &model.p, &model.m, &model.v, &model.separate_weight_grad,
                  &model.multi_chunk_zero_bubble, &model.batched_p2p, &model.measured_iteration_ns,
                  &model.measured_bubble_fraction},
                 "whatif_model");

  whatif::StageModel model_stage;
  count.clear();
  CountSlots(kWhatIfStageFields, model_stage, &count);
  ExpectEachOnce(
      count,
      {&model_stage.rank, &model_stage.forward_ns, &model_stage.backward_ns,
       &model_stage.weight_grad_ns, &model_stage.recompute_ns, &model_stage.memory_floor_bytes,
       &model_stage.memory_peak_bytes, &model_stage.memory_headroom_bytes, &model_stage.layers},
      "whatif_model.stages[]");

  whatif::LinkCost model_link;
  count.clear();
  CountSlots(kWhatIfLinkFields, model_link, &count);
  ExpectEachOnce(count, {&model_link.src_stage, &model_link.dst_stage, &model_link.transfer_ns},
                 "whatif_model.links[]");
}

TEST(ReportSchemaTest, APipelineMemberFindsItsOwnRow) {
  const std::vector<std::pair<PipelineMember, std::string_view>> expected = {
      {PipelineMember::kStages, "stages"},
      {PipelineMember::kMicrobatches, "microbatches"},
      {PipelineMember::kVirtualStages, "virtual_stages"},
      {PipelineMember::kSchedule, "schedule"},
      {PipelineMember::kBubbleFraction, "bubble_fraction"},
      {PipelineMember::kTheoreticalBubbleFraction, "theoretical_bubble_fraction"},
      {PipelineMember::kExcessBubbleFraction, "excess_bubble_fraction"},
      {PipelineMember::kLatency, "latency_us"},
      {PipelineMember::kRanks, "ranks"},
      {PipelineMember::kCompleteIterations, "complete_iterations"},
      {PipelineMember::kNoCompleteIteration, "no_complete_iteration"},
      {PipelineMember::kIterations, "iterations"},
      {PipelineMember::kRankStats, "rank_stats"},
      {PipelineMember::kRebalance, "rebalance"},
      {PipelineMember::kLinks, "links"},
      {PipelineMember::kWhatIfModel, "whatif_model"},
      {PipelineMember::kWhatIfModelProblem, "whatif_model_problem"},
  };
  ASSERT_EQ(kPipelineFields.size(), expected.size());
  for (const auto& [member, key] : expected) EXPECT_EQ(Member(member).key, key);
}

// A report of one pipeline with its required members, its what-if model `model` and the members
// `pipeline_extra` (JSON text).
std::string ReportWith(const std::string& pipeline_extra, const std::string& model = "null") {
  return absl::StrCat(R"({"schema": "bubblescope.analyze/1", "pipelines": [{"ranks": [0, 1], )",
                      R"("bubble_fraction": 0.5, "latency_us": {"p50": 1, "p90": 2, "max": 3}, )",
                      R"("whatif_model": )", model, pipeline_extra.empty() ? "" : ", ",
                      pipeline_extra, "}]}");
}

std::string ErrorOf(const std::string& json) {
  absl::StatusOr<RunFigures> read = ReadAnalyzeReport("r.json", json);
  return read.ok() ? "read without error" : std::string(read.status().message());
}

// The byte offset of `token`'s first occurrence after `after` in `json`.
size_t At(const std::string& json, std::string_view token, std::string_view after = "") {
  return json.find(token, after.empty() ? 0 : json.find(after));
}

TEST(ReportSchemaTest, AWrongTypeIsRefusedNamingTheMemberWhereItStands) {
  struct WrongType {
    std::string json;
    std::string_view token;  // the value refused
    std::string_view after;  // where to look for it
    std::string what;        // the message past "r.json: byte N: "
  };
  const std::string model =
      R"({"schedule": "1f1b", "p": 2, "m": 4, "v": 1, "measured_iteration_ns": 100, )"
      R"("measured_bubble_fraction": 0.1, "stages": [{"rank": 0, "forward_ns": "x"}]})";
  const std::vector<WrongType> cases = {
      {ReportWith(R"("stages": "4")"), R"("4")", "stages",
       R"("stages" is a string, expected a whole number in range)"},
      {ReportWith(R"("theoretical_bubble_fraction": true)"), "true", "theoretical",
       R"("theoretical_bubble_fraction" is a boolean, expected a number or null)"},
      {ReportWith(R"("complete_iterations": -1)"), "-1", "complete_iterations",
       R"("complete_iterations" is a number, expected a whole number not below 0)"},
      {ReportWith(R"("iterations": [{"step": 0, "complete": 1, "window_us": 1, )"
                  R"("bubble_fraction": 0}])"),
       "1,", "complete", R"("complete" is a number, expected true or false)"},
      {ReportWith(R"("rank_stats": [{"rank": 0, "bubble_fraction": 0, )"
                  R"("peak_allocated_bytes": "1"}])"),
       R"("1")", "peak_allocated",
       R"("peak_allocated_bytes" is a string, expected a number or null)"},
      {ReportWith(R"("links": [{"src": 0, "dst": 1, "wait_us": [], "slow": false}])"), "[]",
       "wait_us", R"("wait_us" is an array, expected a number)"},
      {ReportWith(R"("rebalance": {"layers_after": {}})"), "{}", "layers_after",
       R"("rebalance.layers_after" is an object, expected an array)"},
      {ReportWith("", model), R"("x")", "forward_ns",
       R"("stages[].forward_ns" is a string, expected a number)"},
  };
  for (const WrongType& c : cases) {
    EXPECT_EQ(ErrorOf(c.json),
              absl::StrCat("r.json: byte ", At(c.json, c.token, c.after), ": ", c.what))
        << c.json;
  }
}

// A table of two rows over a source of its own: what a new row gets from being declared.
struct Sample {
  int64_t wait_ns = 0;
  double share = 0.0;
  int32_t stage = -1;
};
struct SampleFigures {
  double wait_us = 0.0;
  double share = 0.0;
  std::optional<int32_t> stage;
};
constexpr Field<Sample, SampleFigures> kSampleRows[] = {
    {.key = "wait_us",
     .unit = Unit::kMicroseconds,
     .required = true,
     .meaning = "a wait",
     .value = [](const Sample& s) { return Value::Micros(s.wait_ns); },
     .slot = [](SampleFigures& f) -> Slot { return &f.wait_us; }},
    {.key = "share",
     .unit = Unit::kFraction,
     .meaning = "a share",
     .value = [](const Sample& s) { return Value::Double(s.share); },
     .slot = [](SampleFigures& f) -> Slot { return &f.share; }},
    {.key = "stage",
     .unit = Unit::kNumber,
     .nullable = true,
     .meaning = "a stage",
     .value = [](const Sample& s) { return Value::IntOrNull(s.stage); },
     .slot = [](SampleFigures& f) -> Slot { return &f.stage; }},
};

TEST(ReportSchemaTest, ARowIsWrittenAndStoredAsTheReaderReadsIt) {
  const Sample sample{.wait_ns = 1234567, .share = 0.1, .stage = -1};
  JsonWriter json(JsonWriterOptions{.indent = 0});
  json.BeginObject();
  WriteFields(std::span<const Field<Sample, SampleFigures>>(kSampleRows), sample, json);
  json.EndObject();
  absl::StatusOr<std::string> text = json.Finish();
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(*text, R"({"wait_us":1234.567,"share":0.1,"stage":null})");

  SampleFigures figures;
  figures.stage = 7;
  EXPECT_EQ(FillFields(std::span<const Field<Sample, SampleFigures>>(kSampleRows), sample, figures),
            std::nullopt);
  EXPECT_EQ(figures.wait_us, 1234.567);  // the double "1234.567" reads as
  EXPECT_EQ(figures.share, 0.1);
  EXPECT_EQ(figures.stage, std::nullopt);

  // Out of its range the figure is refused by name, as the reader would refuse the report.
  const Sample bad{.wait_ns = 0, .share = 1.5, .stage = 2};
  EXPECT_EQ(FillFields(std::span<const Field<Sample, SampleFigures>>(kSampleRows), bad, figures),
            "share");
}

TEST(ReportSchemaTest, AStringIsStoredAsTheWriterWritesIt) {
  EXPECT_EQ(AsWritten("stage 2 (rank 2)"), "stage 2 (rank 2)");
  EXPECT_EQ(AsWritten("r\xC3\xA9sum\xC3\xA9"), "r\xC3\xA9sum\xC3\xA9");
  EXPECT_EQ(AsWritten("a\xFF"
                      "b\xC3"),
            "a\xEF\xBF\xBD"
            "b\xEF\xBF\xBD");
}

// The path a reference row names: "pipelines[].ranks" of "| `pipelines[].ranks` | ...".
std::string PathOf(const std::string& row) { return row.substr(3, row.find("` |") - 3); }

// docs/json-report.md holds the row the table generates for every member it declares, as a
// line of its own; a row that drifted shows both lines. BUBBLESCOPE_REGENERATE_DOCS=1 rewrites
// the page instead: drifted rows in place, a new member's row after its object's rows.
TEST(ReportSchemaTest, TheReferenceTableHoldsEveryGeneratedRow) {
  const std::string path = std::string(BUBBLESCOPE_SOURCE_DIR) + "/docs/json-report.md";
  std::ifstream file(path);
  ASSERT_TRUE(file) << path;
  std::vector<std::string> lines;
  for (std::string line; std::getline(file, line);) lines.push_back(line);
  file.close();

  const bool regenerate = std::getenv("BUBBLESCOPE_REGENERATE_DOCS") != nullptr;
  bool rewritten = false;
  const std::vector<std::string> rows = ReferenceRows();
  EXPECT_GT(rows.size(), 60u);
  for (const std::string& row : rows) {
    const std::string head = absl::StrCat("| `", PathOf(row), "` |");
    std::vector<size_t> found;
    for (size_t i = 0; i < lines.size(); ++i) {
      if (lines[i].starts_with(head)) found.push_back(i);
    }
    if (regenerate && found.size() <= 1) {
      if (found.size() == 1) {
        rewritten |= lines[found[0]] != row;
        lines[found[0]] = row;
        continue;
      }
      // After the row of the object that holds it and the rows of its members already there.
      const std::string object = PathOf(row).substr(0, PathOf(row).rfind('.'));
      const auto parent = std::find_if(lines.begin(), lines.end(), [&](const std::string& line) {
        return line.starts_with(absl::StrCat("| `", object, "` |"));
      });
      ASSERT_NE(parent, lines.end()) << "no row for " << object << " to place this after:\n" << row;
      auto place = parent + 1;
      while (place != lines.end() && place->starts_with(absl::StrCat("| `", object, "."))) ++place;
      lines.insert(place, row);
      rewritten = true;
      continue;
    }
    EXPECT_EQ(found.size(), 1u) << "docs/json-report.md needs this row once:\n" << row;
    if (found.size() == 1) {
      EXPECT_EQ(lines[found[0]], row) << "docs/json-report.md drifted from the schema table";
    }
  }
  if (rewritten) {
    std::ofstream out(path);
    out << absl::StrJoin(lines, "\n") << "\n";
  }
}

}  // namespace
}  // namespace bubblescope::compare::schema
