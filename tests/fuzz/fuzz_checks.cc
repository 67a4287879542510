#include "fuzz_checks.h"

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "loader/gzip_inflate.h"
#include "report/pipeline_report.h"
#include "simdjson.h"

namespace bubblescope::fuzz {
namespace {

bool ValidName(const Rank& rank, NameId id) { return id == kNoName || id < rank.names.size(); }

void CheckTime(TimeNs time, std::string_view what) {
  if (!InTimeRange(time)) {
    Fail(absl::StrCat(std::string(what), " at ", time, " ns, outside ±kMaxTimeNs"));
  }
}

void CheckTimeline(const Rank& rank, const Timeline& timeline) {
  const Interval* previous = nullptr;
  for (const Interval& interval : timeline.intervals) {
    CheckTime(interval.start, "an interval starts");
    CheckTime(interval.end, "an interval ends");
    if (interval.end < interval.start) Fail("an interval ends before it starts");
    if (!ValidName(rank, interval.name)) Fail("an interval's name id is out of range");
    if (interval.comm != kNoIndex && interval.comm >= rank.comms.size()) {
      Fail("an interval's comm index is out of range");
    }
    if (previous != nullptr &&
        (interval.start < previous->start ||
         (interval.start == previous->start && interval.end > previous->end))) {
      Fail("a timeline's intervals are not sorted by start, longer first");
    }
    previous = &interval;
  }
}

// Sorted by the time `time_of` reads, each within range.
template <typename T, typename TimeOf>
void CheckSorted(const std::vector<T>& items, TimeOf time_of, std::string_view what) {
  for (size_t i = 0; i < items.size(); ++i) {
    CheckTime(time_of(items[i]), what);
    if (i > 0 && time_of(items[i]) < time_of(items[i - 1])) {
      Fail(std::string(what) + ": not sorted by time");
    }
  }
}

simdjson::error_code ReadNumbers(simdjson::ondemand::value value) {
  namespace ondemand = simdjson::ondemand;
  ondemand::json_type type;
  if (auto error = value.type().get(type)) return error;
  switch (type) {
    case ondemand::json_type::array:
      for (auto element : value.get_array()) {
        ondemand::value child;
        if (auto error = element.get(child)) return error;
        if (auto error = ReadNumbers(child)) return error;
      }
      return simdjson::SUCCESS;
    case ondemand::json_type::object:
      for (auto field : value.get_object()) {
        ondemand::value child;
        if (auto error = field.value().get(child)) return error;
        if (auto error = ReadNumbers(child)) return error;
      }
      return simdjson::SUCCESS;
    case ondemand::json_type::number: {
      double ignored = 0.0;
      return value.get_double().get(ignored);
    }
    default:
      return simdjson::SUCCESS;
  }
}

}  // namespace

void CheckNumbersReadBack(std::string_view json, std::string_view what) {
  simdjson::ondemand::parser parser;
  const simdjson::padded_string padded(json);
  simdjson::ondemand::document document;
  simdjson::ondemand::value root;
  simdjson::error_code error = parser.iterate(padded).get(document);
  if (!error) error = document.get_value().get(root);
  if (!error) error = ReadNumbers(root);
  if (error) {
    Fail(absl::StrCat(std::string(what), " does not read back: ", simdjson::error_message(error)));
  }
}

void Fail(std::string_view what) {
  std::fprintf(stderr, "fuzz contract broken: %s\n", std::string(what).c_str());
  std::abort();
}

void RequireOk(const absl::Status& status, std::string_view what) {
  if (!status.ok()) Fail(std::string(what) + " failed: " + status.ToString());
}

void CheckFileError(const absl::Status& status, std::string_view file) {
  const std::string prefix = std::string(file) + ": byte ";
  std::string_view message(status.message().data(), status.message().size());
  if (message.substr(0, prefix.size()) == prefix) {
    message.remove_prefix(prefix.size());
    size_t digits = 0;
    while (digits < message.size() && std::isdigit(static_cast<unsigned char>(message[digits]))) {
      ++digits;
    }
    if (digits > 0 && message.substr(digits, 2) == ": " && message.size() > digits + 2) return;
  }
  Fail(absl::StrCat("a whole-file error without \"<file>: byte <N>: \": ", status.ToString()));
}

void CheckRank(const Rank& rank) {
  for (const Timeline& timeline : rank.timelines) CheckTimeline(rank, timeline);
  for (const CommInfo& comm : rank.comms) {
    if (comm.process_group != kNoIndex && comm.process_group >= rank.process_groups.size()) {
      Fail("a comm's process group index is out of range");
    }
    if (!ValidName(rank, comm.collective) || !ValidName(rank, comm.dtype)) {
      Fail("a comm's name id is out of range");
    }
  }
  for (const Annotation& annotation : rank.annotations) {
    CheckTime(annotation.end, "an annotation ends");
    if (annotation.end < annotation.start) Fail("an annotation ends before it starts");
    if (!ValidName(rank, annotation.name)) Fail("an annotation's name id is out of range");
  }
  CheckSorted(
      rank.annotations, [](const Annotation& a) { return a.start; }, "annotations");
  for (const ProfilerStep& step : rank.steps) {
    CheckTime(step.end, "a profiler step ends");
    if (step.end < step.start) Fail("a profiler step ends before it starts");
  }
  CheckSorted(
      rank.steps, [](const ProfilerStep& s) { return s.start; }, "profiler steps");
  CheckSorted(
      rank.memory, [](const MemorySample& m) { return m.time; }, "memory samples");
}

absl::StatusOr<Rank> ReadRank(KinetoReader& reader, std::string_view file, std::string_view bytes,
                              int64_t max_text_bytes) {
  simdjson::padded_string text;
  if (LooksLikeGzip(bytes)) {
    absl::StatusOr<InflatedText> inflated = InflateGzip(file, bytes, max_text_bytes);
    if (!inflated.ok()) {
      CheckFileError(inflated.status(), file);
      return inflated.status();
    }
    text = std::move(inflated->text);
  } else {
    text = simdjson::padded_string(bytes);
  }
  Rank rank;
  if (absl::Status status = reader.Read(file, text, &rank); !status.ok()) {
    CheckFileError(status, file);
    return status;
  }
  CheckRank(rank);
  return rank;
}

absl::Status AnalyzeAndReport(const Trace& trace, const job::Options& options) {
  absl::StatusOr<job::Result> job = job::Analyze(trace, options);
  if (!job.ok()) {
    if (!absl::IsInvalidArgument(job.status())) {
      Fail(absl::StrCat("job::Analyze failed with other than InvalidArgument: ",
                        job.status().ToString()));
    }
    return job.status();
  }
  const SummaryReportOptions report_options;
  if (AnalyzeText(*job, report_options).empty()) Fail("the text report is empty");
  absl::StatusOr<std::string> json = AnalyzeJson(*job, report_options);
  RequireOk(json.status(), "writing the JSON report");
  static simdjson::dom::parser* parser = new simdjson::dom::parser();  // reused, never freed
  const simdjson::padded_string padded(*json);
  if (simdjson::error_code error = parser->parse(padded).error(); error != simdjson::SUCCESS) {
    Fail(absl::StrCat("the JSON report is not JSON: ", simdjson::error_message(error)));
  }
  return absl::OkStatus();
}

}  // namespace bubblescope::fuzz
