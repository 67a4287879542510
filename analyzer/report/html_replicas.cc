#include "report/html_replicas.h"

#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "report/html_svg.h"
#include "report/replica_report.h"

namespace bubblescope::html {
namespace {

// "min / median / max", and where they differ the pipeline holding the max (a link when that
// pipeline is drawn in full); one value where every replica has the same.
std::string SpreadCell(const std::optional<job::Spread>& spread,
                       const std::function<std::string(double)>& format,
                       const ReportLayout& layout) {
  if (!spread.has_value()) return "-";
  if (!(spread->max > spread->min)) return Esc(format(spread->min));
  const size_t at = static_cast<size_t>(spread->max_pipeline);
  const std::string name = absl::StrCat("p", spread->max_pipeline);
  return absl::StrCat(Esc(absl::StrCat(format(spread->min), " / ", format(spread->median), " / ",
                                       format(spread->max))),
                      " <span class=note>(max ",
                      at < layout.in_full.size() && layout.in_full[at]
                          ? absl::StrCat("<a href=\"#p", spread->max_pipeline, "\">", name, "</a>")
                          : name,
                      ")</span>");
}

std::string OneSet(const job::Result& result, size_t index, const ReportLayout& layout) {
  const job::ReplicaSet& set = result.replica_sets[index];
  const std::vector<std::string> headline = ReplicaSetHeadline(result, index);
  std::string out = absl::StrCat("<h3 id=r", index, ">", Esc(headline.front()), "</h3>\n<p>");
  for (size_t i = 1; i < headline.size(); ++i) absl::StrAppend(&out, Esc(headline[i]), ". ");
  const size_t worst = static_cast<size_t>(set.worst_pipeline);
  absl::StrAppend(&out, "Worst replica (largest bubble): ",
                  layout.in_full[worst]
                      ? absl::StrCat("<a href=\"#p", worst, "\">pipeline ", worst, "</a>")
                      : absl::StrCat("pipeline ", worst),
                  ".</p>\n");
  const std::vector<SpreadColumn> columns = SpreadColumns(set);
  absl::StrAppend(&out, "<div class=sc><table><tr><th>stage");
  for (const SpreadColumn& column : columns) absl::StrAppend(&out, "<th>", Esc(column.header));
  absl::StrAppend(&out, "\n");
  for (const job::StageSpread& stage : set.stages) {
    std::vector<std::string> cells = {absl::StrCat(stage.stage)};
    for (const SpreadColumn& column : columns) {
      cells.push_back(SpreadCell(column.spread(stage), column.format, layout));
    }
    absl::StrAppend(&out, Row(cells));
  }
  absl::StrAppend(&out, "</table></div>\n");
  return out;
}

}  // namespace

std::string ReplicaSetsSection(const job::Result& result, const ReportLayout& layout) {
  if (result.replica_sets.empty()) return "";
  std::string out =
      "<h2>Data-parallel replicas</h2>\n<p>Pipelines whose ranks share a data-parallel group at "
      "every stage, with the same shape, folded into one table each: every figure as min / "
      "median / max over the replicas (one value where all agree), per complete iteration (ops: "
      "per microbatch); where the replicas differ, the pipeline with the largest value.</p>\n";
  for (size_t i = 0; i < result.replica_sets.size(); ++i) {
    absl::StrAppend(&out, OneSet(result, i, layout));
  }
  return out;
}

}  // namespace bubblescope::html
