#include "distributed/part_exchange.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "distributed/bundle_bytes.h"

namespace bubblescope::distributed {
namespace {

constexpr std::string_view kRequestMagic = "bubblescope-mpi-part-request-1\n";
constexpr std::string_view kAnswerMagic = "bubblescope-mpi-part-answer-1\n";
constexpr size_t kOriginBytes = 2 * 8;

void PutOrigin(const RankOrigin& origin, std::string* out) {
  PutNumber(origin.file, out);
  PutNumber(origin.slot, out);
}

RankOrigin ReadOrigin(ByteReader& in) {
  RankOrigin origin;
  origin.file = in.Number();
  origin.slot = in.Number();
  return origin;
}

}  // namespace

std::string PackRequest(const std::vector<RankOrigin>& ranks) {
  std::string out(kRequestMagic);
  PutNumber(ranks.size(), &out);
  for (const RankOrigin& origin : ranks) PutOrigin(origin, &out);
  return out;
}

absl::StatusOr<std::string> AnswerRequest(const HeldDigests& held, std::string_view request) {
  ByteReader in(request, "process 0", "part request");
  in.Expect(kRequestMagic);
  std::vector<RankOrigin> ranks(in.Count(kOriginBytes));
  for (RankOrigin& origin : ranks) origin = ReadOrigin(in);
  in.ExpectEnd();
  BUBBLESCOPE_RETURN_IF_ERROR(in.error());
  std::string out(kAnswerMagic);
  std::vector<std::pair<RankOrigin, const std::string*>> mine;
  for (const RankOrigin& origin : ranks) {
    const auto file = held.find(origin.file);
    if (file == held.end() || origin.slot >= file->second.size()) continue;
    mine.emplace_back(origin, &file->second[origin.slot]);
  }
  PutNumber(mine.size(), &out);
  for (const auto& [origin, digest] : mine) {
    PutOrigin(origin, &out);
    PutString(*digest, &out);
  }
  return out;
}

absl::StatusOr<std::vector<std::string>> CollectAnswers(std::vector<std::string> answers,
                                                        const std::vector<RankOrigin>& ranks) {
  std::map<std::pair<size_t, size_t>, size_t> wanted;  // (file, slot) -> place in `ranks`
  for (size_t k = 0; k < ranks.size(); ++k) wanted[{ranks[k].file, ranks[k].slot}] = k;
  std::vector<std::string> digests(ranks.size());
  std::vector<char> arrived(ranks.size(), 0);
  for (size_t process = 0; process < answers.size(); ++process) {
    ByteReader in(answers[process], absl::StrCat("process ", process), "part answer");
    in.Expect(kAnswerMagic);
    const uint64_t count = in.Count(kOriginBytes + 8);
    for (uint64_t i = 0; i < count && in.error().ok(); ++i) {
      const RankOrigin origin = ReadOrigin(in);
      const std::string_view digest = in.String();
      const auto place = wanted.find({origin.file, origin.slot});
      if (place == wanted.end() || arrived[place->second] != 0) {
        in.Fail(absl::StrCat("a rank not asked for, or sent twice (file ", origin.file, ", rank ",
                             origin.slot, ")"));
        break;
      }
      arrived[place->second] = 1;
      digests[place->second] = std::string(digest);
    }
    in.ExpectEnd();
    BUBBLESCOPE_RETURN_IF_ERROR(in.error());
    std::string().swap(answers[process]);
  }
  for (size_t k = 0; k < ranks.size(); ++k) {
    if (arrived[k] == 0) {
      return absl::InternalError(
          absl::StrCat("no process sent rank ", ranks[k].slot, " of file ", ranks[k].file));
    }
  }
  return digests;
}

}  // namespace bubblescope::distributed
