// One On-Demand pass over a whole Kineto document: the top-level members (object form) or the
// bare event array, each event handed to its rank's RankBuilder as it is read. A per-rank trace
// fills one rank; a merged trace (readers/merged_trace.h) one per rank it names.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bubblescope/trace.h"
#include "readers/kineto_metadata.h"
#include "readers/merged_trace.h"
#include "readers/rank_builder.h"
#include "simdjson.h"

namespace bubblescope::kineto {

// Where the document being walked sits in the file that names offsets in messages: byte i of
// the document is byte i + bias of the file (a skipped BOM).
struct DocumentView {
  simdjson::padded_string_view json;
  int64_t bias = 0;
};

// The ranks one document fills, each with its builder: one to start with; a merged trace's
// layout replaces it with one per rank entry.
class RankSet : public MergedRankSink {
 public:
  RankSet();
  RankSet(const RankSet&) = delete;
  RankSet& operator=(const RankSet&) = delete;

  Rank* AddMergedRank() override;
  RankBuilder* BuilderOf(size_t slot) override { return builders_[slot].get(); }
  Rank& rank(size_t slot) { return *ranks_[slot]; }
  size_t size() const { return ranks_.size(); }
  // Drops every rank so far: a merged trace's entries follow.
  void Clear();
  size_t usable_events() const;
  // `keep_empty_steps`: FinishOptions' (bubblescope/rank_finish.h).
  void Finish(bool keep_empty_steps = false);
  // Moves the ranks out, in slot order.
  std::vector<Rank> Take();

 private:
  // Ranks stay where they are while their builders point at them.
  std::vector<std::unique_ptr<Rank>> ranks_;
  std::vector<std::unique_ptr<RankBuilder>> builders_;
};

struct WalkResult {
  // The document is JSON but not a trace (e.g. traceEvents is not an array): offset and what.
  std::optional<std::pair<int64_t, std::string>> not_a_trace;
  // True when not_a_trace is a JSON object without any traceEvents key (other JSON, not a
  // damaged trace).
  bool not_a_trace_is_other_json = false;
  // Broken JSON syntax that stopped the walk, at file offset `syntax_offset`.
  simdjson::error_code syntax = simdjson::SUCCESS;
  int64_t syntax_offset = -1;
  size_t events_read = 0;          // elements of the events array walked to their end
  int64_t events_offset = -1;      // the events array's '['
  int64_t last_event_offset = -1;  // start of the element being read when the walk stopped
  // Where non-whitespace content follows the end of the document (a second document appended to
  // the first, as `cat a.json b.json` makes), or -1.
  int64_t trailing_offset = -1;
  // The document is a merged trace; `ranks` gives each slot's rank id.
  std::optional<MergedLayout> merged;
  // The document is an object (the form with metadata members), and whether it gave its
  // baseTimeNanoseconds: Kineto writes that member last, so a file cut short loses it.
  bool object_form = false;
  bool saw_base_time = false;
  // The collector said another profiler held CUPTI (its first such event).
  std::optional<CuptiUnavailable> cupti_unavailable;
};

WalkResult WalkDocument(simdjson::ondemand::parser& parser, const DocumentView& view,
                        RankSet* ranks);

}  // namespace bubblescope::kineto
