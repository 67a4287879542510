// The built collector library, inspected with nm and readelf: it exports CUDA's injection entry
// point and NCCL's plugin structs, and needs libcupti but never libcuda at load time.
#include <string>

#include "gtest/gtest.h"
#include "support/subprocess.h"

namespace bubblescope::testing {
namespace {

TEST(CollectorLibraryTest, ExportsTheEntryPointsOnly) {
  const CommandResult nm =
      RunCommand({BUBBLESCOPE_NM, "-D", "--defined-only", BUBBLESCOPE_COLLECTOR_LIBRARY});
  ASSERT_EQ(nm.exit_status, 0) << nm.err;
  EXPECT_NE(nm.out.find(" T InitializeInjection\n"), std::string::npos) << nm.out;
  EXPECT_NE(nm.out.find(" D ncclProfiler_v6\n"), std::string::npos) << nm.out;
  EXPECT_NE(nm.out.find(" D ncclProfiler_v5\n"), std::string::npos) << nm.out;
  EXPECT_NE(nm.out.find(" D ncclProfiler_v4\n"), std::string::npos) << nm.out;
  size_t lines = 0;
  for (char c : nm.out) lines += c == '\n';
  EXPECT_EQ(lines, 4u) << nm.out;  // nothing else leaks into the job's symbol space
}

TEST(CollectorLibraryTest, NeedsCuptiButNotLibcuda) {
  const CommandResult readelf =
      RunCommand({BUBBLESCOPE_READELF, "-d", BUBBLESCOPE_COLLECTOR_LIBRARY});
  ASSERT_EQ(readelf.exit_status, 0) << readelf.err;
  EXPECT_NE(readelf.out.find("Shared library: [libcupti.so"), std::string::npos) << readelf.out;
  EXPECT_EQ(readelf.out.find("libcuda.so"), std::string::npos) << readelf.out;
  EXPECT_EQ(readelf.out.find("libcudart"), std::string::npos) << readelf.out;
  EXPECT_EQ(readelf.out.find("libabsl"), std::string::npos) << readelf.out;
}

}  // namespace
}  // namespace bubblescope::testing
