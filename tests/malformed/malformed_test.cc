// End-to-end checks of `bubblescope analyze` on the malformed-input corpus (corpus/, written by
// make_corpus.py): every case asserts the exit status and the message, and nothing may crash or
// hang. Offsets were worked out by hand from the corpus files (see make_corpus.py).
#include <cctype>
#include <filesystem>
#include <ostream>
#include <regex>
#include <string>
#include <string_view>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "simdjson.h"
#include "support/shared_traces.h"
#include "support/subprocess.h"
#include "support/test_files.h"

namespace bubblescope {
namespace {

using testing::CommandResult;
using ::testing::HasSubstr;
using ::testing::Not;
using testing::RunCommand;

const std::string kCorpus = std::string(BUBBLESCOPE_SOURCE_DIR) + "/tests/malformed/corpus/";

CommandResult Analyze(std::vector<std::string> args) {
  args.insert(args.begin(), {BUBBLESCOPE_BINARY, "analyze"});
  return RunCommand(args, 60);
}

// gtest case names from corpus file names ("a.json.gz" -> "a_json_gz").
template <typename Case>
std::string CaseName(const ::testing::TestParamInfo<Case>& param_info) {
  std::string name = param_info.param.file;
  for (char& ch : name) {
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  }
  return name;
}

struct ErrorCase {
  std::string file;
  std::string message_regex;  // the whole one-line stderr message must match
};

void PrintTo(const ErrorCase& c, std::ostream* os) { *os << c.file; }

class UnreadableFileTest : public ::testing::TestWithParam<ErrorCase> {};

TEST_P(UnreadableFileTest, OneLineErrorAndExitStatus2) {
  const ErrorCase& c = GetParam();
  CommandResult r = Analyze({kCorpus + c.file});
  EXPECT_FALSE(r.signaled) << r.err;
  EXPECT_EQ(r.exit_status, 2) << r.err;
  EXPECT_EQ(r.out, "");
  ASSERT_FALSE(r.err.empty());
  EXPECT_EQ(r.err.back(), '\n');
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << "more than one line: " << r.err;
  EXPECT_TRUE(
      std::regex_search(r.err, std::regex("^bubblescope: .*" + c.file + ": " + c.message_regex)))
      << r.err;
}

INSTANTIATE_TEST_SUITE_P(
    Corpus, UnreadableFileTest,
    ::testing::Values(
        ErrorCase{"empty.json", "byte 0: .*empty"},
        ErrorCase{"whitespace_only.json", "byte [0-6]: .*empty"},
        ErrorCase{"binary_garbage.json", "byte 0: not JSON"},
        ErrorCase{"plain_text.json", "byte 0: not JSON"},
        ErrorCase{"top_level_number.json", "byte 0: .*(object|array)"},
        ErrorCase{"top_level_string.json", "byte 0: .*(object|array)"},
        ErrorCase{"trace_events_is_string.json", "byte 16: traceEvents is a string"},
        ErrorCase{"trace_events_is_object.json", "byte 16: traceEvents is an object"},
        ErrorCase{"no_trace_events_key.json", "byte [0-9]+: .*traceEvents"},
        ErrorCase{"empty_trace_events.json", "byte [0-9]+: no trace events"},
        ErrorCase{"empty_array.json", "byte [0-9]+: no trace events"},
        ErrorCase{"all_events_damaged.json", "byte [0-9]+: no (usable )?trace events"},
        ErrorCase{"syntax_error_mid_event.json", "byte 54: "},
        ErrorCase{"invalid_utf8.json", "byte 153: .*UTF-8"},
        // One event that is an array nested 50000 deep: not an object, so no usable event.
        ErrorCase{"deep_nesting.json", "byte 16: no usable trace events"},
        // The NUL bytes at 40..42 read as an unquoted token; the parser fails at the '{' after.
        ErrorCase{"nul_bytes.json", "byte 43: malformed JSON"},
        ErrorCase{"bad_gzip.json.gz", "byte [0-9]+: bad gzip data"},
        ErrorCase{"bad_gzip_crc.json.gz", "byte [0-9]+: bad gzip data"}),
    CaseName<ErrorCase>);

// Parses the JSON report and returns ranks[0].
simdjson::dom::element FirstRank(simdjson::dom::parser& parser, const std::string& json) {
  simdjson::dom::element doc = parser.parse(json);
  return doc["ranks"].at(0);
}

int64_t Kernels(const std::string& json) {
  simdjson::dom::parser parser;
  return FirstRank(parser, json)["kernels"].get_int64().value();
}

struct ReadableCase {
  std::string file;
  int64_t kernels;       // compute + communication kernels the report must count
  bool warns_truncated;  // a "warning: <file>: ..." line about the cut on stderr
};

void PrintTo(const ReadableCase& c, std::ostream* os) { *os << c.file; }

class ReadableFileTest : public ::testing::TestWithParam<ReadableCase> {};

TEST_P(ReadableFileTest, ReadsWhatIsThere) {
  const ReadableCase& c = GetParam();
  CommandResult r = Analyze({"--format", "json", kCorpus + c.file});
  EXPECT_FALSE(r.signaled) << r.err;
  ASSERT_EQ(r.exit_status, 0) << r.err;
  EXPECT_EQ(Kernels(r.out), c.kernels);
  if (c.warns_truncated) {
    EXPECT_THAT(r.err, HasSubstr("warning: " + kCorpus + c.file + ": "));
    EXPECT_TRUE(std::regex_search(r.err, std::regex("byte [0-9]+"))) << r.err;
    simdjson::dom::parser parser;
    EXPECT_GE(FirstRank(parser, r.out)["import"]["truncated"]["count"].get_uint64().value(), 1u);
  } else {
    // No import warning about the file (these one-rank files of a 2-rank job still get the
    // incomplete-job warning).
    EXPECT_THAT(r.err, Not(HasSubstr("warning: " + kCorpus + c.file)));
  }
}

INSTANTIATE_TEST_SUITE_P(
    Corpus, ReadableFileTest,
    ::testing::Values(ReadableCase{"plain_json_named_gz.json.gz", 3, false},
                      ReadableCase{"array_unterminated.json", 3, false},
                      ReadableCase{"array_cut_mid_event.json", 3, true},
                      ReadableCase{"object_cut_mid_event.json", 2, true},
                      ReadableCase{"object_cut_after_events.json", 3, true},
                      // Junk in a key bubblescope has no use for: every value is read
                      // through, so the syntax error is counted (truncated, a warning) like
                      // any other after the events, never accepted in silence (issue 25).
                      ReadableCase{"syntax_error_after_events.json", 3, true}),
    CaseName<ReadableCase>);

TEST(MalformedTest, TruncatedGzipKeepsWhatDecompressed) {
  CommandResult r = Analyze({"--format", "json", kCorpus + "truncated_gzip.json.gz"});
  ASSERT_EQ(r.exit_status, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("warning: " + kCorpus + "truncated_gzip.json.gz: "));
  int64_t kernels = Kernels(r.out);
  EXPECT_GT(kernels, 300);  // 200 of ~2400 compressed bytes lost: most of the 400 events remain
  EXPECT_LT(kernels, 400);
}

TEST(MalformedTest, DamagedEventsAreSkippedCountedAndShown) {
  const std::string file = kCorpus + "damaged_events.json";
  CommandResult r = Analyze({"--format", "json", file});
  ASSERT_EQ(r.exit_status, 0) << r.err;
  simdjson::dom::parser parser;
  simdjson::dom::element rank = FirstRank(parser, r.out);
  EXPECT_EQ(rank["kernels"].get_int64().value(), 3);
  simdjson::dom::element import = rank["import"];
  EXPECT_EQ(import["event_not_object"]["count"].get_uint64().value(), 1u);
  EXPECT_EQ(import["event_not_object"]["first_offset"].get_int64().value(), 639);
  EXPECT_EQ(import["negative_duration"]["count"].get_uint64().value(), 1u);
  EXPECT_EQ(import["negative_duration"]["first_offset"].get_int64().value(), 642);
  EXPECT_EQ(import["wrong_field_type"]["count"].get_uint64().value(), 1u);
  EXPECT_EQ(import["wrong_field_type"]["first_offset"].get_int64().value(), 730);
  EXPECT_EQ(import["bad_number"]["count"].get_uint64().value(), 1u);
  EXPECT_EQ(import["bad_number"]["first_offset"].get_int64().value(), 821);
  EXPECT_EQ(std::string(import["negative_duration"]["severity"].get_string().value()), "error");

  CommandResult text = Analyze({file});
  ASSERT_EQ(text.exit_status, 0) << text.err;
  for (const char* counter :
       {"event_not_object", "negative_duration", "wrong_field_type", "bad_number"}) {
    EXPECT_THAT(text.out, HasSubstr(counter));
  }
}

TEST(MalformedTest, StrictTurnsCountersIntoAnError) {
  const std::string file = kCorpus + "damaged_events.json";
  CommandResult r = Analyze({"--strict", file});
  EXPECT_EQ(r.exit_status, 2) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_THAT(r.err, HasSubstr(file + ": byte 639: "));
  CommandResult cut = Analyze({"--strict", kCorpus + "object_cut_mid_event.json"});
  EXPECT_EQ(cut.exit_status, 2) << cut.err;
  CommandResult fine = Analyze({"--strict", kCorpus + "array_unterminated.json"});
  EXPECT_EQ(fine.exit_status, 0) << fine.err;  // info-level counters do not fail --strict
}

TEST(MalformedTest, DuplicateRankNamesBothFiles) {
  CommandResult r = Analyze({kCorpus + "dup_rank_a.json", kCorpus + "dup_rank_b.json"});
  EXPECT_EQ(r.exit_status, 2);
  EXPECT_THAT(r.err, HasSubstr("rank 3"));
  EXPECT_THAT(r.err, HasSubstr("dup_rank_a.json"));
  EXPECT_THAT(r.err, HasSubstr("dup_rank_b.json"));
}

TEST(MalformedTest, MissingPathAndEmptyDirectory) {
  CommandResult missing = Analyze({kCorpus + "no_such_file.json"});
  EXPECT_EQ(missing.exit_status, 2);
  EXPECT_THAT(missing.err, HasSubstr("no_such_file.json: "));
  testing::TempDir dir;
  dir.Write("notes.txt", "not a trace");
  CommandResult empty = Analyze({dir.path()});
  EXPECT_EQ(empty.exit_status, 2);
  EXPECT_THAT(empty.err, HasSubstr("no trace files"));
}

// A real third-party trace cut at many offsets: every cut is either read up to the cut (exit 0,
// a warning, never more kernels than a longer cut) or, before the first complete event, a
// one-line error with exit status 2. Never a crash or a hang.
TEST(MalformedTest, RealTraceCutAtManyOffsets) {
  const std::string source =
      std::string(BUBBLESCOPE_SHARED_DIR) +
      "/traces/param_dlrm_8rank/worker0_step_12.1694128201545.pt.trace.json.gz";
  BUBBLESCOPE_NEED_SHARED(source);
  const std::string json = testing::Gunzip(testing::ReadFile(source));
  ASSERT_GT(json.size(), 800000u);
  testing::TempDir dir;
  int64_t previous_kernels = 0;
  bool cut_readable = false;
  constexpr int kCuts = 24;
  for (int i = 1; i <= kCuts; ++i) {
    size_t cut = json.size() * static_cast<size_t>(i) / (kCuts + 1) + static_cast<size_t>(i * 37);
    std::string path = dir.Write("rank0_cut" + std::to_string(i) + ".json", json.substr(0, cut));
    CommandResult r = Analyze({"--format", "json", path});
    ASSERT_FALSE(r.signaled) << "cut at " << cut << ": " << r.err;
    if (r.exit_status == 2) {
      EXPECT_EQ(cut_readable, false) << "error after a readable shorter cut, at " << cut;
      EXPECT_THAT(r.err, HasSubstr(path + ": byte "));
      continue;
    }
    ASSERT_EQ(r.exit_status, 0) << r.err;
    cut_readable = true;
    EXPECT_THAT(r.err, HasSubstr("warning: " + path + ": byte "));
    EXPECT_THAT(r.err, HasSubstr("file cut short: cut at byte " + std::to_string(cut)));
    simdjson::dom::parser parser;
    simdjson::dom::element rank = FirstRank(parser, r.out);
    // The file lists CPU ops before GPU kernels: an early cut holds no GPU activity at all, and
    // the rank is then summarised from its CPU thread. Kernel counts are compared once GPU
    // kernels appear.
    if (std::string_view(rank["timeline"].get_string().value()) != "gpu") {
      EXPECT_EQ(previous_kernels, 0) << "cut at " << cut;
      continue;
    }
    int64_t kernels = rank["kernels"].get_int64().value();
    EXPECT_GE(kernels, previous_kernels) << "cut at " << cut;
    EXPECT_LE(kernels, 245);  // the whole file has 245 kernels (independent_figures.py)
    previous_kernels = kernels;
  }
  EXPECT_GT(previous_kernels, 0);
}

}  // namespace
}  // namespace bubblescope
