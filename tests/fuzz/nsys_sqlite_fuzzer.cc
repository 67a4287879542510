// Fuzz target for reading one Nsight Systems SQLite export (docs/nsight-systems.md): the input is
// the file, written to a scratch file (SQLite opens files by path) and read by ReadNsysSqlite
// under a reading budget, then the job driver on the ranks it holds and both reports. Checks
// (fuzz_checks.h): an error is one line that names the file; every rank read keeps the model's
// promises (CheckRank); the analysis succeeds and the JSON report is JSON. SQLite reports a
// damaged database as an error code; a crash, a hang or unbounded memory here is the reader's.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <utility>

#include "fuzz_checks.h"
#include "readers/nsys_reader.h"

namespace {

// One scratch file per process, rewritten for every input.
const std::string& ScratchPath() {
  static const std::string path = [] {
    const char* dir = std::getenv("TMPDIR");
    std::string name = std::string(dir != nullptr && *dir != '\0' ? dir : "/tmp") +
                       "/bubblescope_nsys_fuzz_XXXXXX";
    const int fd = ::mkstemp(name.data());
    if (fd < 0) bubblescope::fuzz::Fail("cannot create a scratch file");
    ::close(fd);
    return name;
  }();
  return path;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace bubblescope;  // NOLINT(build/namespaces): a fuzz entry point, no API
  const std::string& path = ScratchPath();
  FILE* file = std::fopen(path.c_str(), "wb");
  if (file == nullptr) fuzz::Fail("cannot write the scratch file");
  if (size > 0 && std::fwrite(data, 1, size, file) != size) fuzz::Fail("short scratch write");
  std::fclose(file);
  NsysReadOptions options;
  options.max_bytes = int64_t{8} << 20;
  absl::StatusOr<std::vector<Rank>> ranks = ReadNsysSqlite(path, options);
  if (!ranks.ok()) {
    const std::string message(ranks.status().message());
    if (message.substr(0, path.size()) != path || message.find('\n') != std::string::npos) {
      fuzz::Fail("an Nsight export's error is not one line naming the file: " + message);
    }
    return 0;
  }
  Trace trace;
  int32_t id = 0;
  for (Rank& rank : *ranks) {
    fuzz::CheckRank(rank);
    rank.rank = id++;
    trace.ranks.push_back(std::move(rank));
  }
  fuzz::RequireOk(fuzz::AnalyzeAndReport(trace, {}), "analysing a readable Nsight export");
  return 0;
}
