#include "loader/trace_readers.h"

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"
#include "readers/digest_reader.h"
#include "readers/kineto_reader.h"
#include "readers/nsys_reader.h"

namespace bubblescope {

std::vector<std::unique_ptr<TraceReader>> MakeTraceReaders() {
  std::vector<std::unique_ptr<TraceReader>> readers;
  readers.push_back(std::make_unique<digest::DigestTraceReader>());
  readers.push_back(std::make_unique<NsysTraceReader>());
  readers.push_back(std::make_unique<KinetoTraceReader>());
  return readers;
}

TraceReader* ClaimingReader(const std::vector<std::unique_ptr<TraceReader>>& readers,
                            std::string_view head, std::string_view path) {
  for (std::string_view name : {std::string_view(), path}) {
    for (const std::unique_ptr<TraceReader>& reader : readers) {
      if (reader->Sniff(head, name)) return reader.get();
    }
  }
  return nullptr;
}

std::string TraceFormatNames(const std::vector<std::unique_ptr<TraceReader>>& readers) {
  std::string names;
  for (const std::unique_ptr<TraceReader>& reader : readers) {
    if (!names.empty()) names += ", ";
    names += reader->format_name();
  }
  return names;
}

absl::StatusOr<TraceReader*> ReaderOf(const std::vector<std::unique_ptr<TraceReader>>& readers,
                                      std::string_view head, const std::string& path) {
  TraceReader* reader = ClaimingReader(readers, head, path);
  if (reader == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": not a trace of a format bubblescope reads (", TraceFormatNames(readers), ")"));
  }
  return reader;
}

}  // namespace bubblescope
