#include "analysis/collectives.h"

#include <algorithm>
#include <map>
#include <utility>

namespace bubblescope::collectives {

std::vector<Summary> Analyze(const Trace& trace, const index::TraceIndex& index) {
  std::map<std::string, Summary> kinds;
  for (size_t r = 0; r < trace.ranks.size(); ++r) {
    const Rank& rank = trace.ranks[r];
    for (const index::DeviceOp& op : index.ranks[r].ops) {
      if (op.op_class != index::OpClass::kComm || op.is_p2p()) continue;
      const CommInfo* info = rank.comm(rank.timelines[op.timeline].intervals[op.interval]);
      std::string kind = "unknown";
      if (op.comm != CommKind::kUnknown) {
        kind = std::string(CommKindName(op.comm));
      } else if (info != nullptr && info->collective != kNoName) {
        kind = std::string(rank.name(info->collective));
      }
      Summary& summary = kinds[kind];
      summary.kind = kind;
      ++summary.count;
      if (op.bytes > 0) {
        summary.bytes = SaturatingAdd(summary.bytes, op.bytes);
        ++summary.sized;
      }
      summary.time_ns = SaturatingAdd(summary.time_ns, op.end - op.start);
    }
  }
  std::vector<Summary> out;
  for (auto& [kind, summary] : kinds) out.push_back(std::move(summary));
  std::stable_sort(out.begin(), out.end(),
                   [](const Summary& a, const Summary& b) { return a.time_ns > b.time_ns; });
  return out;
}

}  // namespace bubblescope::collectives
