// Runs one fuzz target over saved inputs without libFuzzer, so every target's seed corpus and
// regressions are replayed in every build, under the sanitizers too. One main for every target:
// each replay binary links it with its target's LLVMFuzzerTestOneInput.
//
//   <target>_replay [--trailer-bytes N] PATH...
//
// Each PATH is an input file or a directory whose files (recursively) are inputs; each must give
// at least one. With --trailer-bytes N every input also runs with each byte 0 .. N-1 appended,
// for plain files (tests/malformed/corpus) given to a target that reads its choices from the end.
// An input that breaks a contract aborts; the exit status is 0 only when every input ran.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

bool RunFile(const std::filesystem::path& path, int trailer_bytes) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "cannot read %s\n", path.c_str());
    return false;
  }
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (int trailer = -1; trailer < trailer_bytes; ++trailer) {  // -1: as it is
    std::string input = bytes;
    if (trailer >= 0) input += static_cast<char>(trailer);
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(input.data()), input.size());
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  int trailer_bytes = 0;
  int first_path = 1;
  if (argc > 2 && std::string_view(argv[1]) == "--trailer-bytes") {
    trailer_bytes = std::atoi(argv[2]);
    first_path = 3;
    if (trailer_bytes < 1 || trailer_bytes > 256) {
      std::fprintf(stderr, "--trailer-bytes takes 1 to 256\n");
      return 2;
    }
  }
  if (first_path >= argc) {
    std::fprintf(stderr, "usage: %s [--trailer-bytes N] PATH...\n", argv[0]);
    return 2;
  }
  int failures = 0;
  size_t inputs = 0;
  for (int i = first_path; i < argc; ++i) {
    const std::filesystem::path arg(argv[i]);
    size_t from_arg = 0;
    std::error_code error;
    if (std::filesystem::is_directory(arg, error)) {
      for (const auto& entry : std::filesystem::recursive_directory_iterator(arg)) {
        if (!entry.is_regular_file()) continue;
        failures += RunFile(entry.path(), trailer_bytes) ? 0 : 1;
        ++from_arg;
      }
    } else {
      failures += RunFile(arg, trailer_bytes) ? 0 : 1;
      ++from_arg;
    }
    if (from_arg == 0) {
      std::fprintf(stderr, "%s holds no input\n", argv[i]);
      ++failures;
    }
    inputs += from_arg;
  }
  std::printf("replayed %zu inputs, %d problems\n", inputs, failures);
  return failures == 0 ? 0 : 1;
}
