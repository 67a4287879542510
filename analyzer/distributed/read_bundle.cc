#include "distributed/read_bundle.h"

#include <cstddef>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "distributed/bundle_bytes.h"

namespace bubblescope::distributed {
namespace {

constexpr std::string_view kMagic = "bubblescope-mpi-bundle-2\n";

// The smallest an encoded read can be: index, read, status code and message size, merged and
// rank count.
constexpr size_t kReadBytes = 6 * 8;
// The smallest an encoded rank can be: its header's size, three flags and two counts.
constexpr size_t kRankBytes = 6 * 8;
constexpr size_t kStepBytes = 3 * 8;

void PutFacts(const job::RankFacts& facts, std::string* out) {
  PutNumber(facts.has_p2p ? 1 : 0, out);
  PutNumber(facts.cut_short ? 1 : 0, out);
  PutNumber(facts.repeats ? 1 : 0, out);
  PutNumber(facts.recorded_peers.size(), out);
  for (int32_t peer : facts.recorded_peers) PutNumber(static_cast<uint64_t>(int64_t{peer}), out);
  PutNumber(facts.own_steps.size(), out);
  for (const iterations::StepStart& step : facts.own_steps) {
    PutNumber(static_cast<uint64_t>(step.number), out);
    PutNumber(static_cast<uint64_t>(step.start), out);
    PutNumber(step.partial ? 1 : 0, out);
  }
}

job::RankFacts ReadFacts(ByteReader& in) {
  job::RankFacts facts;
  facts.has_p2p = in.Number() != 0;
  facts.cut_short = in.Number() != 0;
  facts.repeats = in.Number() != 0;
  facts.recorded_peers.resize(in.Count(8));
  for (int32_t& peer : facts.recorded_peers) peer = static_cast<int32_t>(in.Signed());
  facts.own_steps.resize(in.Count(kStepBytes));
  for (iterations::StepStart& step : facts.own_steps) {
    step.number = in.Signed();
    step.start = in.Signed();
    step.partial = in.Number() != 0;
  }
  return facts;
}

}  // namespace

std::string PackBundle(const ReadBundle& bundle) {
  std::string out(kMagic);
  PutStatus(bundle.list_status, &out);
  PutNumber(bundle.list_fingerprint, &out);
  PutNumber(bundle.list_size, &out);
  PutNumber(bundle.reads.size(), &out);
  for (const EncodedRead& read : bundle.reads) {
    PutNumber(read.index, &out);
    PutNumber(read.read ? 1 : 0, &out);
    PutStatus(read.status, &out);
    PutNumber(read.merged ? (read.bubblescope_merged ? 2 : 1) : 0, &out);
    PutNumber(read.ranks.size(), &out);
    for (const EncodedRank& rank : read.ranks) {
      PutString(rank.header, &out);
      PutFacts(rank.facts, &out);
    }
  }
  return out;
}

absl::StatusOr<ReadBundle> UnpackBundle(std::string_view bytes, int process) {
  ByteReader in(bytes, absl::StrCat("process ", process), "bundle");
  in.Expect(kMagic);
  ReadBundle bundle;
  bundle.list_status = in.Status();
  bundle.list_fingerprint = in.Number();
  bundle.list_size = in.Number();
  bundle.reads.resize(in.Count(kReadBytes));
  for (EncodedRead& read : bundle.reads) {
    read.index = in.Number();
    read.read = in.Number() != 0;
    read.status = in.Status();
    const uint64_t merged = in.Number();
    read.merged = merged != 0;
    read.bubblescope_merged = merged == 2;
    read.ranks.resize(in.Count(kRankBytes));
    for (EncodedRank& rank : read.ranks) {
      rank.header = std::string(in.String());
      rank.facts = ReadFacts(in);
    }
  }
  in.ExpectEnd();
  BUBBLESCOPE_RETURN_IF_ERROR(in.error());
  return bundle;
}

}  // namespace bubblescope::distributed
