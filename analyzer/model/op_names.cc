#include "bubblescope/op_names.h"

#include <array>
#include <charconv>
#include <string>
#include <system_error>
#include <utility>

namespace bubblescope::op_names {
namespace {

char ToLower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

bool StartsWith(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

// Lower-case letters and digits only, so "all_to_allv", "AllToAll" and "alltoall" compare equal.
std::string Normalize(std::string_view name) {
  std::string out;
  out.reserve(name.size());
  for (char c : name) {
    const char lower = ToLower(c);
    if ((lower >= 'a' && lower <= 'z') || (lower >= '0' && lower <= '9')) out.push_back(lower);
  }
  return out;
}

}  // namespace

bool IsCommKernelName(std::string_view kernel_name) {
  // find() runs on memchr, so scanning long template names for the three spellings of "ccl" is
  // cheaper than a byte-by-byte case-insensitive loop.
  for (std::string_view ccl :
       {std::string_view("ccl"), std::string_view("CCL"), std::string_view("Ccl")}) {
    for (size_t at = kernel_name.find(ccl, 1); at != std::string_view::npos;
         at = kernel_name.find(ccl, at + 1)) {
      const char before = ToLower(kernel_name[at - 1]);
      if (before == 'n' || before == 'r' || before == 'h') return true;
    }
  }
  return false;
}

namespace {

bool IsIdentifierChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

// The function a kernel name names right after `at` (where a namespace prefix ended): the
// identifier up to its template arguments or parameters.
std::string_view FunctionAfter(std::string_view kernel_name, size_t at) {
  size_t end = at;
  while (end < kernel_name.size() && IsIdentifierChar(kernel_name[end])) ++end;
  return kernel_name.substr(at, end - at);
}

}  // namespace

std::optional<CommKind> CommKernelKind(std::string_view kernel_name) {
  // DeepEP's token-moving kernels live in these namespaces (DeepSeek's own build spells the
  // library dpsk::ep). A scope counts only where its name starts (DeepSeek's traces also hold
  // CUB kernels under cdpsk::ep::, which are not DeepEP's).
  static constexpr std::string_view kExpertParallelScopes[] = {
      "deep_ep::intranode::",  "deep_ep::internode::",  "deep_ep::internode_ll::",
      "dpsk::ep::intranode::", "dpsk::ep::internode::", "dpsk::ep::internode_ll::"};
  for (std::string_view scope : kExpertParallelScopes) {
    for (size_t at = kernel_name.find(scope); at != std::string_view::npos;
         at = kernel_name.find(scope, at + 1)) {
      if (at > 0 && IsIdentifierChar(kernel_name[at - 1])) continue;
      // get_dispatch_layout only counts tokens per rank and expert from the router's choice:
      // compute. Early DeepEP releases kept it in internode::, later ones in layout:: (and
      // DeepSeek's in dpsk::ep::cuda::, which no scope above covers).
      if (FunctionAfter(kernel_name, at + scope.size()) == "get_dispatch_layout") break;
      return CommKind::kAllToAll;
    }
  }
  if (IsCommKernelName(kernel_name)) return CommKindFromName(kernel_name);
  return std::nullopt;
}

CommKind CommKindFromName(std::string_view name) {
  const std::string normalized = Normalize(name);
  // Longer names first: "allreduce" and "reducescatter" contain "reduce", "sendrecv" contains both
  // "send" and "recv".
  static constexpr std::array<std::pair<std::string_view, CommKind>, 11> kKinds = {{
      {"sendrecv", CommKind::kSendRecv},
      {"alltoall", CommKind::kAllToAll},
      {"allreduce", CommKind::kAllReduce},
      {"allgather", CommKind::kAllGather},
      {"reducescatter", CommKind::kReduceScatter},
      {"broadcast", CommKind::kBroadcast},
      {"barrier", CommKind::kBarrier},
      {"send", CommKind::kSend},
      {"recv", CommKind::kRecv},
      {"reduce", CommKind::kReduce},
      {"bcast", CommKind::kBroadcast},
  }};
  for (const auto& [needle, kind] : kKinds) {
    if (normalized.find(needle) != std::string::npos) return kind;
  }
  return CommKind::kUnknown;
}

bool IsOperatorName(std::string_view name) { return name.find("::") != std::string_view::npos; }

std::optional<CommKind> CpuCommOpKind(std::string_view op_name) {
  if (StartsWith(op_name, "gloo:") || StartsWith(op_name, "nccl:")) {
    return CommKindFromName(op_name.substr(5));
  }
  if (op_name == "record_param_comms") return CommKind::kUnknown;  // kind from its args
  if (!StartsWith(op_name, "c10d::")) return std::nullopt;
  // c10d ops are named after their collective with optional '_' decorations
  // (c10d::allreduce_, c10d::_allgather_base_, c10d::recv_any_source_); everything else in the
  // namespace (process-group registration, work objects) is bookkeeping.
  std::string_view op = op_name.substr(6);
  while (!op.empty() && op.front() == '_') op.remove_prefix(1);
  while (!op.empty() && op.back() == '_') op.remove_suffix(1);
  static constexpr std::array<std::string_view, 22> kCommOps = {"send",
                                                                "recv",
                                                                "recv_any_source",
                                                                "allreduce",
                                                                "allreduce_coalesced",
                                                                "allgather",
                                                                "allgather_base",
                                                                "allgather_coalesced",
                                                                "allgather_into_tensor_coalesced",
                                                                "reduce_scatter",
                                                                "reduce_scatter_base",
                                                                "reduce_scatter_tensor_coalesced",
                                                                "alltoall",
                                                                "alltoall_base",
                                                                "broadcast",
                                                                "reduce",
                                                                "gather",
                                                                "scatter",
                                                                "barrier",
                                                                "monitored_barrier",
                                                                "coalesced",
                                                                "all_to_all"};
  for (std::string_view comm_op : kCommOps) {
    if (op == comm_op) return CommKindFromName(op);
  }
  return std::nullopt;
}

int DtypeSize(std::string_view dtype) {
  static constexpr std::array<std::pair<std::string_view, int>, 25> kSizes = {{
      {"Float", 4},
      {"BFloat16", 2},
      {"Half", 2},
      {"Double", 8},
      {"Int", 4},
      {"Long", 8},
      {"Short", 2},
      {"Char", 1},
      {"Byte", 1},
      {"Bool", 1},
      {"ComplexHalf", 4},
      {"ComplexFloat", 8},
      {"ComplexDouble", 16},
      {"QInt8", 1},
      {"QUInt8", 1},
      {"QInt32", 4},
      {"Float8_e5m2", 1},
      {"Float8_e4m3fn", 1},
      {"Float8_e5m2fnuz", 1},
      {"Float8_e4m3fnuz", 1},
      {"UInt16", 2},
      {"UInt32", 4},
      {"UInt64", 8},
      {"Int8", 1},
      {"UInt8", 1},
  }};
  for (const auto& [name, size] : kSizes) {
    if (dtype == name) return size;
  }
  return -1;
}

bool IsDeviceLaunchName(std::string_view runtime_name) {
  if (!StartsWith(runtime_name, "cu") && !StartsWith(runtime_name, "hip")) return false;
  for (const std::string_view launch : {"LaunchKernel", "LaunchCooperativeKernel", "GraphLaunch"}) {
    if (runtime_name.find(launch) != std::string_view::npos) return true;
  }
  return false;
}

std::optional<int64_t> ProfilerStepNumber(std::string_view name) {
  constexpr std::string_view kPrefix = "ProfilerStep#";
  if (!StartsWith(name, kPrefix)) return std::nullopt;
  const std::string_view digits = name.substr(kPrefix.size());
  if (digits.empty() || digits.find_first_not_of("0123456789") != std::string_view::npos) {
    return std::nullopt;
  }
  int64_t number = 0;
  const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), number);
  if (error != std::errc() || end != digits.data() + digits.size()) return std::nullopt;
  return number;
}

}  // namespace bubblescope::op_names
