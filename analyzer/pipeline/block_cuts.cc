#include "pipeline/block_cuts.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "pipeline/segment_ops.h"

namespace bubblescope::pipeline {
namespace {

// Sequences kept per op type: the most frequent.
constexpr size_t kMaxSignatures = 8;

template <typename Name>
std::vector<std::vector<Name>> MostFrequent(const std::map<std::vector<Name>, int64_t>& counts,
                                            std::vector<int64_t>* frequencies) {
  std::vector<std::pair<int64_t, std::vector<Name>>> sorted;
  for (const auto& [names, count] : counts) sorted.emplace_back(count, names);
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<std::vector<Name>> out;
  for (size_t i = 0; i < sorted.size() && i < kMaxSignatures; ++i) {
    out.push_back(std::move(sorted[i].second));
    if (frequencies != nullptr) frequencies->push_back(sorted[i].first);
  }
  return out;
}

// Phase-hint runs that follow the ops' types in order; nothing when they do not. With
// `bookkeeping`, unhinted runs the ops do not account for are left out (buffer allocation, the loss
// seed around a lone backward); without, every run must be one op's, so that a backward whose
// kernels only partly carry a hint is not cut short.
std::optional<std::vector<std::vector<size_t>>> CutByHints(const IssuedTimeline& timeline,
                                                           const std::vector<size_t>& block,
                                                           const std::vector<OpType>& types,
                                                           bool bookkeeping) {
  std::vector<std::pair<OpType, std::vector<size_t>>> runs;
  for (size_t index : block) {
    const OpType type = HintedType(timeline.items[index]);
    if (runs.empty() || runs.back().first != type) runs.push_back({type, {}});
    runs.back().second.push_back(index);
  }
  std::vector<std::vector<size_t>> out;
  for (auto& [type, members] : runs) {
    if (out.size() < types.size() && types[out.size()] == type) {
      out.push_back(std::move(members));
    } else if (type != OpType::kForward || !bookkeeping) {
      return std::nullopt;  // a run the ops do not account for
    }
  }
  if (out.size() != types.size()) return std::nullopt;
  return out;
}

// Length of the first listed signature that `block` holds from `pos` on, leaving at least `reserve`
// items; 0 when none does.
template <typename Name, typename NameAt>
size_t SignatureAt(const std::vector<std::vector<Name>>& signatures,
                   const std::vector<size_t>& block, size_t pos, size_t reserve, NameAt name_at) {
  for (const std::vector<Name>& signature : signatures) {
    if (signature.empty() || pos + signature.size() + reserve > block.size()) continue;
    bool equal = true;
    for (size_t i = 0; i < signature.size() && equal; ++i) {
      equal = name_at(block[pos + i]) == signature[i];
    }
    if (equal) return signature.size();
  }
  return 0;
}

// A lone op's block, less what surrounds the kernel names most of the rank's lone ops of its type
// run (an optimizer step after the last backward, data loading before the first forward): the first
// such sequence, seen at least twice, that starts or ends the block.
template <typename NameAt>
std::optional<Cut> TrimLone(const std::vector<size_t>& block, const Signatures& own, size_t type,
                            NameAt name_at) {
  const std::vector<std::vector<NameId>>& signatures = own.own[type];
  for (size_t s = 0; s < signatures.size(); ++s) {
    const std::vector<NameId>& signature = signatures[s];
    if (own.own_counts[type][s] < 2 || signature.size() > block.size()) continue;
    const size_t extra = block.size() - signature.size();
    bool prefix = true;
    bool suffix = true;
    for (size_t i = 0; i < signature.size(); ++i) {
      prefix = prefix && name_at(block[i]) == signature[i];
      suffix = suffix && name_at(block[extra + i]) == signature[i];
    }
    if (prefix || suffix) {
      const auto first = block.begin() + static_cast<std::ptrdiff_t>(prefix ? 0 : extra);
      return Cut{{first, first + static_cast<std::ptrdiff_t>(signature.size())},
                 extra == 0 ? FitEvidence::kTransfers : FitEvidence::kOwnNames};
    }
  }
  return std::nullopt;
}

// Cuts a block shared by several ops, one cut after another: after a kernel-name signature of the
// op's type (the rank's own, then, unless `own_only`, other stages'), else, unless `own_only`,
// where the hints change type (a bound, not a proof) or halfway, counted weak. Nothing when
// `own_only` and some cut has no own signature.
std::optional<std::vector<Cut>> CutInTurn(const IssuedTimeline& timeline,
                                          const std::vector<size_t>& block,
                                          const std::vector<OpType>& types,
                                          const Signatures& signatures, bool own_only) {
  const auto own_name = [&](size_t i) { return timeline.items[i].name; };
  const auto string_name = [&](size_t i) { return timeline.names->Get(timeline.items[i].name); };
  std::vector<Cut> cuts;
  size_t pos = 0;
  for (size_t j = 0; j + 1 < types.size(); ++j) {
    const size_t reserve = types.size() - 1 - j;  // an item at least for each op after it
    const size_t t = static_cast<size_t>(types[j]);
    FitEvidence evidence = FitEvidence::kOwnNames;
    size_t length = SignatureAt(signatures.own[t], block, pos, reserve, own_name);
    if (length == 0 && own_only) return std::nullopt;
    if (length == 0 && timeline.names != nullptr) {
      evidence = FitEvidence::kOtherNames;
      length = SignatureAt(signatures.named[t], block, pos, reserve, string_name);
    }
    if (length == 0) {
      evidence = FitEvidence::kWeak;
      // Fewer items than ops (a damaged trace) leave the last ops with none.
      const size_t end = std::max(pos, block.size() > reserve ? block.size() - reserve : 0);
      const bool next_hinted = types[j + 1] != OpType::kForward;
      size_t cut = pos + (end - pos) / (reserve + 1);
      for (size_t i = pos + 1; i < end; ++i) {
        const bool hinted = HintedType(timeline.items[block[i]]) != OpType::kForward;
        if (next_hinted && hinted) {
          cut = i;
          break;
        }
        if (!next_hinted && hinted) cut = i + 1;
      }
      length = std::min(std::max<size_t>(cut, pos + 1), block.size()) - pos;
    }
    cuts.push_back({{block.begin() + static_cast<std::ptrdiff_t>(pos),
                     block.begin() + static_cast<std::ptrdiff_t>(pos + length)},
                    evidence});
    pos += length;
  }
  cuts.push_back(
      {{block.begin() + static_cast<std::ptrdiff_t>(pos), block.end()}, cuts.back().evidence});
  return cuts;
}

}  // namespace

std::string_view FitEvidenceName(FitEvidence evidence) {
  switch (evidence) {
    case FitEvidence::kTransfers:
      return "transfers";
    case FitEvidence::kPhaseHints:
      return "phase hints";
    case FitEvidence::kOwnNames:
      return "kernel names";
    case FitEvidence::kOtherNames:
      return "other stages' kernel names";
    case FitEvidence::kWeak:
      return "weak";
  }
  return "unknown";
}

void SignatureTally::Add(const IssuedTimeline& timeline, OpType type,
                         const std::vector<size_t>& items) {
  const size_t t = static_cast<size_t>(type);
  std::vector<NameId> ids;
  std::vector<std::string_view> names;
  for (size_t i : items) {
    ids.push_back(timeline.items[i].name);
    if (timeline.names != nullptr) names.push_back(timeline.names->Get(timeline.items[i].name));
  }
  ++ids_[t][ids];
  if (timeline.names != nullptr) ++names_[t][names];
}

Signatures SignatureTally::Combine(const SignatureTally& own, const SignatureTally& everywhere) {
  Signatures signatures;
  for (size_t t = 0; t < 3; ++t) {
    signatures.own[t] = MostFrequent(own.ids_[t], &signatures.own_counts[t]);
    signatures.named[t] = MostFrequent(everywhere.names_[t], nullptr);
  }
  return signatures;
}

std::vector<Cut> CutBlock(const IssuedTimeline& timeline, const std::vector<size_t>& block,
                          const std::vector<OpType>& types, const Signatures& signatures) {
  const auto own_name = [&](size_t i) { return timeline.items[i].name; };
  const bool lone = types.size() == 1;
  if (lone) {
    if (auto trimmed = TrimLone(block, signatures, static_cast<size_t>(types.front()), own_name)) {
      return {*std::move(trimmed)};
    }
  } else if (auto by_names = CutInTurn(timeline, block, types, signatures, true)) {
    return *by_names;
  }
  if (auto by_hints = CutByHints(timeline, block, types, lone)) {
    std::vector<Cut> cuts;
    for (std::vector<size_t>& items : *by_hints) {
      cuts.push_back({std::move(items), lone ? FitEvidence::kTransfers : FitEvidence::kPhaseHints});
    }
    return cuts;
  }
  if (lone) return {Cut{block, FitEvidence::kTransfers}};
  return *CutInTurn(timeline, block, types, signatures, false);
}

}  // namespace bubblescope::pipeline
