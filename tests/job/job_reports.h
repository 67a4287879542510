// The reports of one job result, for tests that analyse the same job two ways (threads, parts)
// and compare what a user would read.
#pragma once

#include <cstddef>
#include <string>

#include "absl/status/statusor.h"
#include "gtest/gtest.h"
#include "job/job.h"
#include "report/html_report.h"
#include "report/pipeline_report.h"

namespace bubblescope::job {

struct JobReports {
  size_t pipelines = 0;
  std::string text;
  std::string json;
  std::string html;  // empty unless asked for
};

inline JobReports ReportsOf(const Result& result, bool with_html) {
  const SummaryReportOptions report_options;
  absl::StatusOr<std::string> json = AnalyzeJson(result, report_options);
  EXPECT_TRUE(json.ok()) << json.status();
  return {result.pipelines.size(), AnalyzeText(result, report_options), json.value_or(""),
          with_html ? AnalyzeHtml(result, report_options) : std::string()};
}

}  // namespace bubblescope::job
