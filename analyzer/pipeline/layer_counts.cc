#include "pipeline/layer_counts.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace bubblescope::layer_counts {
namespace {

constexpr int32_t kMaxLayers = 1'000'000;

const Rank* FindRank(const Trace& trace, int32_t id) {
  auto it = std::lower_bound(trace.ranks.begin(), trace.ranks.end(), id,
                             [](const Rank& rank, int32_t value) { return rank.rank < value; });
  return it != trace.ranks.end() && it->rank == id ? &*it : nullptr;
}

// What one rank declares: the count, 0 for none, or a problem.
struct RankDeclaration {
  int32_t layers = 0;
  std::string problem;
};

RankDeclaration Declared(const Rank& rank) {
  RankDeclaration out;
  for (const Annotation& annotation : rank.annotations) {
    std::string_view name = rank.name(annotation.name);
    if (!name.starts_with(kAnnotationPrefix)) continue;
    int32_t layers = ParseLayerAnnotation(name);
    if (layers < 1) {
      out.problem = absl::StrCat("rank ", rank.rank, " has the annotation '", std::string(name),
                                 "', whose count is not a whole number from 1 to ", kMaxLayers);
      return out;
    }
    if (out.layers != 0 && out.layers != layers) {
      out.problem = absl::StrCat("rank ", rank.rank, " declares both ", out.layers, " and ", layers,
                                 " layers");
      return out;
    }
    out.layers = layers;
  }
  return out;
}

}  // namespace

int32_t ParseLayerAnnotation(std::string_view name) {
  if (!name.starts_with(kAnnotationPrefix)) return -1;
  std::string_view digits = name.substr(kAnnotationPrefix.size());
  if (digits.empty() || digits.size() > 7) return 0;
  int32_t value = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return 0;
    value = value * 10 + (c - '0');
  }
  return value >= 1 && value <= kMaxLayers ? value : 0;
}

Result Analyze(const Trace& trace, const Options& options) {
  Result result;
  std::vector<int32_t> layers;
  std::vector<int32_t> silent;  // ranks of the pipeline that declare nothing
  for (int32_t rank_id : options.stage_order) {
    const Rank* rank = FindRank(trace, rank_id);
    RankDeclaration declared = rank == nullptr ? RankDeclaration{} : Declared(*rank);
    if (!declared.problem.empty()) {
      result.problem = std::move(declared.problem);
      return result;
    }
    if (declared.layers == 0) silent.push_back(rank_id);
    layers.push_back(declared.layers);
  }
  if (silent.size() == layers.size()) return result;  // nothing declared: no counts, no problem
  if (!silent.empty()) {
    result.problem =
        absl::StrCat("rank ", silent.front(), " declares no '", std::string(kAnnotationPrefix),
                     "N' annotation while other ranks of the pipeline do");
    return result;
  }
  result.layers_per_stage = std::move(layers);
  return result;
}

}  // namespace bubblescope::layer_counts
