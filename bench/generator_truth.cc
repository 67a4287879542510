#include "generator_truth.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "simdjson.h"

namespace bubblescope::bench {
namespace {

// Total length covered by the ranges; sorts its argument.
TimeNs CoveredLength(std::vector<DeviceOp>& ranges) {
  std::sort(ranges.begin(), ranges.end(),
            [](const DeviceOp& a, const DeviceOp& b) { return a.start < b.start; });
  TimeNs total = 0;
  bool open = false;
  TimeNs run_start = 0;
  TimeNs run_end = 0;
  for (const DeviceOp& op : ranges) {
    if (op.end <= op.start) continue;
    if (open && op.start <= run_end) {
      run_end = std::max(run_end, op.end);
      continue;
    }
    if (open) total += run_end - run_start;
    run_start = op.start;
    run_end = op.end;
    open = true;
  }
  if (open) total += run_end - run_start;
  return total;
}

// The keys of truth.json, in the order they are written.
struct Field {
  const char* key;
  int64_t RankTruth::*member;
};
constexpr Field kFields[] = {
    {"kernels", &RankTruth::kernels},
    {"comm_ops", &RankTruth::comm_ops},
    {"memcpys", &RankTruth::memcpys},
    {"steps", &RankTruth::steps},
    {"span_ns", &RankTruth::span},
    {"compute_ns", &RankTruth::compute},
    {"comm_ns", &RankTruth::comm},
    {"memcpy_ns", &RankTruth::memcpy},
    {"idle_ns", &RankTruth::idle},
    {"peak_allocated_bytes", &RankTruth::peak_allocated_bytes},
    {"peak_reserved_bytes", &RankTruth::peak_reserved_bytes},
};

}  // namespace

RankTruth TruthFromDeviceOps(int32_t rank, const std::vector<DeviceOp>& ops) {
  RankTruth truth;
  truth.rank = rank;
  std::vector<DeviceOp> compute;
  std::vector<DeviceOp> comm;
  std::vector<DeviceOp> copies;
  for (const DeviceOp& op : ops) {
    if (op.kind == DeviceOpKind::kCompute) compute.push_back(op);
    if (op.kind == DeviceOpKind::kComm) comm.push_back(op);
    if (op.kind == DeviceOpKind::kCopy) copies.push_back(op);
  }
  truth.kernels = static_cast<int64_t>(compute.size() + comm.size());
  truth.comm_ops = static_cast<int64_t>(comm.size());
  truth.memcpys = static_cast<int64_t>(copies.size());
  truth.compute = CoveredLength(compute);
  truth.comm = CoveredLength(comm);
  truth.memcpy = CoveredLength(copies);
  if (ops.empty()) return truth;
  TimeNs first = ops.front().start;
  TimeNs last = ops.front().end;
  for (const DeviceOp& op : ops) {
    first = std::min(first, op.start);
    last = std::max(last, op.end);
  }
  std::vector<DeviceOp> all = ops;
  truth.span = last - first;
  truth.idle = truth.span - CoveredLength(all);
  return truth;
}

std::string TruthJson(const std::vector<RankTruth>& ranks) {
  std::string out = "{\n  \"ranks\": [";
  for (size_t i = 0; i < ranks.size(); ++i) {
    absl::StrAppend(&out, i == 0 ? "\n" : ",\n", "    {\"rank\": ", ranks[i].rank);
    for (const Field& field : kFields) {
      absl::StrAppend(&out, ", \"", field.key, "\": ", ranks[i].*field.member);
    }
    out.append("}");
  }
  out.append("\n  ]\n}\n");
  return out;
}

absl::StatusOr<std::vector<RankTruth>> ParseTruthJson(const std::string& text) {
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  if (parser.parse(text).get(root)) return absl::InvalidArgumentError("truth: not JSON");
  simdjson::dom::array ranks;
  if (root["ranks"].get(ranks)) return absl::InvalidArgumentError("truth: no \"ranks\" array");
  std::vector<RankTruth> result;
  for (simdjson::dom::element entry : ranks) {
    RankTruth truth;
    int64_t rank = 0;
    if (entry["rank"].get(rank)) return absl::InvalidArgumentError("truth: entry without rank");
    truth.rank = static_cast<int32_t>(rank);
    for (const Field& field : kFields) {
      if (entry[field.key].get(truth.*field.member)) {
        return absl::InvalidArgumentError(absl::StrCat("truth: rank ", rank, " lacks ", field.key));
      }
    }
    result.push_back(truth);
  }
  return result;
}

}  // namespace bubblescope::bench
