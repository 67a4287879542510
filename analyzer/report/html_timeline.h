// The schedule picture of one pipeline in the HTML report (docs/html-report.md, "Timeline"):
// one row per stage in stage order, time to the right on the pipeline's reference clock; each
// measured op a cell coloured by its type (forward, backward, weight-grad) with its microbatch
// as a label where the cell is wide enough and in a tooltip on every cell; each idle span of the
// bubble (fill, drain, comm_wait, empty) a cell of its own. One iteration is shown, any other is
// a choice away (kept in <template> elements the page's script swaps in); the schedule's own
// run at the mean stage times (pipeline::IdealBubble::schedule) is drawn below on the same
// time scale, so the two compare by eye.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "job/job.h"
#include "report_view/report_view.h"

namespace bubblescope::html {

// A rank of the pipeline as a row of its pictures.
struct StageRow {
  // Its stage (report_view::RankPlace::stage); -1 where the order does not place it ("stage ?").
  int32_t stage = -1;
  int32_t rank = -1;
  size_t figures = 0;  // index into bubble::Result::per_rank and IterationFigures::ranks
};

// The pipeline's ranks in stage order (ranks the order does not place last, in the bubble's
// order), placed as the report view places them: the rows of the timeline and of every
// per-stage chart.
std::vector<StageRow> StageRows(const job::Pipeline& pipeline,
                                const report_view::RankPlaces& places);

// The script that fits every timeline to the window and zooms and pans it (wheel, drag, the keys
// + - 0 and the arrows, the buttons TimelineSection writes), for the end of the page; it does
// nothing on a page without timelines.
const char* TimelineScript();

// What a pipeline's timelines draw beyond forward and backward cells and the idle kinds, so the
// page's legend names only what its pictures hold (a 1F1B job's has no weight-grad, chunk or
// overlap entry).
struct DrawnMarks {
  bool weight_grad = false;  // W cells (zero-bubble schedules)
  bool odd_chunks = false;   // lighter cells of an odd chunk (interleaved schedules)
  bool overlapped = false;   // half-height cells of two ops at once (DualPipeV)

  DrawnMarks& operator|=(const DrawnMarks& other);
};
DrawnMarks MarksOf(const job::Pipeline& pipeline);

// The iteration chooser, the chosen iteration's SVG, the others' in templates, and the
// theoretical schedule's SVG, for pipeline `index` of the job (ids are made from it).
std::string TimelineSection(const job::Pipeline& pipeline, const report_view::PipelineView& view,
                            size_t index);

}  // namespace bubblescope::html
