// The analyzer's layers point one way (docs/architecture.md): a file may include headers of its
// own folder and of lower layers only. This walks every source file of the analyzer, the model,
// the collector, the benchmark and the Python module and fails on the first #include that points up
// or sideways.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace bubblescope {
namespace {

namespace fs = std::filesystem;

// Layer of each folder; folders of one layer may not include each other.
const std::map<std::string, int>& Layers() {
  static const auto* layers = new std::map<std::string, int>{
      {"bubblescope", 0},  // include/bubblescope: the model (analyzer/model implements it)
      {"text", 1},
      {"common", 1},
      {"schedule_engine", 2},
      {"readers", 3},
      {"writers", 3},
      {"loader", 4},
      {"index", 5},
      {"analysis", 6},
      {"pipeline", 7},
      {"crossrank", 8},
      {"whatif", 9},
      {"findings", 10},
      {"job", 11},
      {"distributed", 12},
      // `watch`: a running job followed iteration by iteration through the job driver.
      {"watch", 12},
      {"compare", 12},
      {"report", 13},
      {"perfetto", 13},
      {"report_view", 12},
      {"cli", 14},
      {"bench", 14},
      // The Python module (python/module.cc): over the command line, whose verbs it runs.
      {"python", 15},
      // The collector is injected into other people's processes: it may use the text helpers
      // and nothing else of the analyzer.
      {"collector", 2},
      // `record`'s process handling (the job, its watchdog, the files it wrote): reads only the
      // text helpers and the record format, and only cli/ uses it.
      {"record_process", 2},
      // The form of a record run id, shared by the collector, record and the Kineto reader.
      {"record_format", 1},
      // Synthetic jobs: traces of what the schedule engine ran, written as sets by the writers.
      {"synth", 4},
  };
  return *layers;
}

// The quoted includes of a source text ("x/y.h" -> "x/y.h"); <...> includes are third-party.
std::vector<std::string> QuotedIncludes(const std::string& source) {
  std::vector<std::string> includes;
  std::istringstream lines(source);
  std::string line;
  while (std::getline(lines, line)) {
    const size_t hash = line.find_first_not_of(" \t");
    if (hash == std::string::npos || line.compare(hash, 8, "#include") != 0) continue;
    const size_t open = line.find('"', hash);
    const size_t close = open == std::string::npos ? open : line.find('"', open + 1);
    if (close != std::string::npos) includes.push_back(line.substr(open + 1, close - open - 1));
  }
  return includes;
}

// The layers that read the model and nothing of any input format (what a name means is
// bubblescope/op_names.h): the layers that analyse, so the ranks of every reader are analysed
// alike, and the reports and the comparison of runs, which read results, never inputs (the
// Perfetto overlay, which streams the inputs again, is a layer of its own beside report/).
bool IsFormatFree(const std::string& folder) {
  static const auto* folders =
      new std::set<std::string>{"index",    "analysis", "pipeline",    "crossrank", "whatif",
                                "findings", "job",      "report_view", "compare",   "report"};
  return folders->contains(folder);
}

// The top folders of the project's own code: under analyzer/ and include/ each folder is a
// layer, and the others are one layer each. A folder of these missing from Layers() is an
// error, never taken for third-party.
constexpr const char* kOwnTops[] = {"analyzer", "include", "collector", "bench", "python"};

// Why a folder of the project's own code has no place in the layers, or nullopt when it has one.
std::optional<std::string> Unlayered(const std::string& folder) {
  if (Layers().contains(folder)) return std::nullopt;
  return absl::StrCat("folder ", folder,
                      " has no layer: add it to Layers() here and to docs/architecture.md");
}

// Why `include` may not be included from `file` of `folder`, or nullopt when it may. Includes
// without a folder are the including file's neighbours. An include names a folder of the
// project when that folder exists under one of its tops (`own_folders`, found by the walk);
// others are third-party (absl/, re2/, CLI/, gtest/) and allowed. A folder of the project with
// no layer is an error, so a new folder cannot slip past the rule.
std::optional<std::string> Violation(const std::string& folder, const std::string& include,
                                     const std::string& file = "",
                                     const std::set<std::string>& own_folders = {}) {
  const size_t slash = include.find('/');
  if (slash == std::string::npos) return std::nullopt;
  const std::string target = include.substr(0, slash);
  // The including file is the project's own: its folder must have a layer.
  if (std::optional<std::string> why = Unlayered(folder); why.has_value()) return why;
  if (IsFormatFree(folder) && (target == "readers" || target == "writers" || target == "loader")) {
    return absl::StrCat(folder, " reads the model only, not a format's ", include);
  }
  if (own_folders.contains(target)) {
    if (std::optional<std::string> why = Unlayered(target); why.has_value()) return why;
  }
  // Predictions come from the schedule engine; the synthetic jobs the tests check them on are
  // written above it, so a change to how a test job is written never moves a prediction.
  if (IsFormatFree(folder) && target == "synth") {
    return absl::StrCat(folder, " predicts with schedule_engine/, not the test jobs' ", include);
  }
  // The loader knows readers through their interface; only its list of readers names them.
  if (folder == "loader" && target == "readers" && include != "readers/trace_reader.h" &&
      file != "trace_readers.cc") {
    return absl::StrCat("the loader reads files through readers/trace_reader.h; ", include,
                        " belongs in its list of readers (loader/trace_readers.cc)");
  }
  const auto to = Layers().find(target);
  const auto from = Layers().find(folder);
  if (to == Layers().end() || from == Layers().end() || target == folder) return std::nullopt;
  if (folder == "collector" && target != "text" && target != "record_format") {
    return absl::StrCat("the collector may include only text/ and record_format/, not ", include);
  }
  if (to->second > from->second) {
    return absl::StrCat(folder, " (layer ", from->second, ") includes ", include, " (layer ",
                        to->second, ")");
  }
  if (to->second == from->second) {
    return absl::StrCat(folder, " and ", target, " are one layer and must not include each other");
  }
  return std::nullopt;
}

TEST(IncludeOrderTest, TheRuleCatchesUpwardAndSidewaysIncludes) {
  EXPECT_EQ(Violation("analysis", "bubblescope/trace.h"), std::nullopt);
  EXPECT_EQ(Violation("job", "pipeline/stage_order.h"), std::nullopt);
  EXPECT_EQ(Violation("analysis", "absl/status/status.h"), std::nullopt);
  EXPECT_EQ(Violation("collector", "text/utf8.h"), std::nullopt);
  EXPECT_NE(Violation("analysis", "pipeline/schedule_inference.h"), std::nullopt);
  EXPECT_NE(Violation("schedule_engine", "report/units.h"), std::nullopt);
  EXPECT_NE(Violation("schedule_engine", "synth/trace_builder.h"), std::nullopt);
  EXPECT_EQ(Violation("pipeline", "schedule_engine/engine.h"), std::nullopt);
  EXPECT_NE(Violation("pipeline", "synth/synthetic_job.h"), std::nullopt);
  EXPECT_NE(Violation("whatif", "synth/truth_json.h"), std::nullopt);
  EXPECT_EQ(Violation("synth", "writers/kineto_writer.h"), std::nullopt);
  EXPECT_NE(Violation("writers", "synth/simulated_set.h"), std::nullopt);
  EXPECT_EQ(Violation("collector", "record_format/record_run_id.h"), std::nullopt);
  EXPECT_NE(Violation("record_format", "record_process/record_outputs.h"), std::nullopt);
  EXPECT_NE(Violation("readers", "writers/kineto_writer.h"), std::nullopt);
  EXPECT_NE(Violation("collector", "readers/json_tokens.h"), std::nullopt);
  EXPECT_NE(Violation("index", "readers/event_classifier.h"), std::nullopt);
  EXPECT_EQ(Violation("index", "bubblescope/op_names.h"), std::nullopt);
  EXPECT_NE(Violation("loader", "readers/kineto_reader.h", "trace_loader.cc"), std::nullopt);
  EXPECT_EQ(Violation("loader", "readers/kineto_reader.h", "trace_readers.cc"), std::nullopt);
  EXPECT_EQ(Violation("loader", "readers/trace_reader.h", "trace_loader.cc"), std::nullopt);
  EXPECT_EQ(QuotedIncludes("#include <vector>\n  #include \"a/b.h\"\n// #include \"c/d.h\"\n"),
            std::vector<std::string>{"a/b.h"});
}

TEST(IncludeOrderTest, ReportsAndComparisonReadNoInputFormat) {
  EXPECT_NE(Violation("report", "readers/merged_trace.h"), std::nullopt);
  EXPECT_NE(Violation("report", "loader/trace_readers.h"), std::nullopt);
  EXPECT_NE(Violation("report", "writers/kineto_writer.h"), std::nullopt);
  EXPECT_NE(Violation("compare", "readers/json_tokens.h"), std::nullopt);
  EXPECT_NE(Violation("report_view", "loader/file_source.h"), std::nullopt);
  // The Perfetto overlay streams the inputs again: it may, from its own layer beside report/.
  EXPECT_EQ(Violation("perfetto", "readers/raw_events.h"), std::nullopt);
  EXPECT_EQ(Violation("perfetto", "loader/trace_readers.h"), std::nullopt);
  EXPECT_NE(Violation("perfetto", "report/units.h"), std::nullopt);  // one layer, sideways
  EXPECT_EQ(Violation("report", "report_view/report_view.h"), std::nullopt);
  EXPECT_EQ(Violation("report", "text/json_tokens.h"), std::nullopt);
}

TEST(IncludeOrderTest, AFolderOfTheProjectWithoutALayerFails) {
  const std::set<std::string> own = {"report", "job", "newfolder"};
  // Included: a folder of the project's own code that the table does not name.
  EXPECT_NE(Violation("report", "newfolder/thing.h", "", own), std::nullopt);
  EXPECT_NE(Violation("newfolder", "job/job.h", "", own), std::nullopt);
  // Third-party folders stay allowed: they are not folders of the project.
  EXPECT_EQ(Violation("report", "absl/strings/str_cat.h", "", own), std::nullopt);
  EXPECT_EQ(Violation("report", "job/job.h", "", own), std::nullopt);
  // Including: a file in a folder with no layer.
  EXPECT_NE(Unlayered("newfolder"), std::nullopt);
  EXPECT_EQ(Unlayered("report"), std::nullopt);
  EXPECT_EQ(Unlayered("bubblescope"), std::nullopt);
}

// The layer name of a folder of the project: analyzer/model implements include/bubblescope.
std::string LayerName(const std::string& folder) {
  return folder == "model" ? "bubblescope" : folder;
}

// Every folder of the project's own code, as includes name them: the folders directly under
// analyzer/ and include/, and the other tops themselves.
std::set<std::string> OwnFolders(const fs::path& root) {
  std::set<std::string> folders;
  for (const char* top : kOwnTops) {
    if (std::string(top) != "analyzer" && std::string(top) != "include") {
      folders.insert(top);
      continue;
    }
    for (const fs::directory_entry& entry : fs::directory_iterator(root / top)) {
      if (entry.is_directory()) folders.insert(LayerName(entry.path().filename().string()));
    }
  }
  return folders;
}

TEST(IncludeOrderTest, EveryIncludePointsDown) {
  const fs::path root = BUBBLESCOPE_SOURCE_DIR;
  const std::set<std::string> own_folders = OwnFolders(root);
  int files = 0;
  for (const char* top : kOwnTops) {
    for (const fs::directory_entry& entry : fs::recursive_directory_iterator(root / top)) {
      const std::string extension = entry.path().extension().string();
      if (!entry.is_regular_file() ||
          (extension != ".h" && extension != ".cc" && extension != ".cu")) {
        continue;
      }
      // The folder that names the layer: the first under analyzer/ or include/, else the top.
      const fs::path relative = fs::relative(entry.path(), root / top);
      std::string folder = top;
      if (std::string(top) == "analyzer" || std::string(top) == "include") {
        folder = relative.begin()->string();
      }
      folder = LayerName(folder);
      const std::optional<std::string> unlayered = Unlayered(folder);
      EXPECT_EQ(unlayered, std::nullopt) << entry.path().string() << ": " << unlayered.value_or("");
      std::ifstream in(entry.path());
      std::stringstream text;
      text << in.rdbuf();
      for (const std::string& include : QuotedIncludes(text.str())) {
        const std::optional<std::string> why =
            Violation(folder, include, entry.path().filename().string(), own_folders);
        EXPECT_EQ(why, std::nullopt) << entry.path().string() << ": " << why.value_or("");
      }
      ++files;
    }
  }
  EXPECT_GT(files, 100);  // the walk found the tree
}

}  // namespace
}  // namespace bubblescope
