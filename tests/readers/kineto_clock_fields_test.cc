// What the Kineto reader takes from a trace for the clocks (docs/cross-rank.md, "Clocks"): the
// machine's name at the root (`host_name`) and a collective kernel's group sequence number
// (`Seq`), both written by Kineto since 2026.
#include <string>

#include "gtest/gtest.h"
#include "reader_test_util.h"

namespace bubblescope::testing {
namespace {

TEST(KinetoClockFieldsTest, HostNameAtTheRoot) {
  const ReadResult result = ReadJson(
      R"({"host_name":"gpu-node-\u0031","traceEvents":[{"ph":"X","cat":"cpu_op","name":"a",)"
      R"("pid":1,"tid":1,"ts":1,"dur":2}]})");
  ASSERT_TRUE(result.status.ok()) << result.status;
  EXPECT_EQ(result.rank.host, "gpu-node-1");  // unescaped
  // Not a string: no host, and the damage counted at the value.
  const std::string bad =
      R"({"host_name":7,"traceEvents":[{"ph":"X","cat":"cpu_op","name":"a","pid":1,"tid":1,)"
      R"("ts":1,"dur":2}]})";
  const ReadResult damaged = ReadJson(bad);
  ASSERT_TRUE(damaged.status.ok()) << damaged.status;
  EXPECT_EQ(damaged.rank.host, "");
  EXPECT_EQ(damaged.rank.stats.count(ImportCounter::kWrongFieldType), 1u);
  EXPECT_EQ(damaged.rank.stats.first_offset(ImportCounter::kWrongFieldType),
            static_cast<int64_t>(bad.find("7,")));
}

TEST(KinetoClockFieldsTest, SeqOfACollectiveKernel) {
  const ReadResult result = ReadJson(R"j({"traceEvents":[
    {"ph":"X","cat":"kernel","name":"ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
     "pid":0,"tid":21,"ts":300,"dur":5,"args":{"device":0,"stream":21,"correlation":9,
     "Collective name":"allreduce","In msg nelems":8,"Out msg nelems":8,"dtype":"Float",
     "Group size":2,"Process Group Name":"0","Process Group Ranks":"[0, 1]","Seq":41,
     "Comms Id":18446744073709551615}},
    {"ph":"X","cat":"kernel","name":"ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
     "pid":0,"tid":21,"ts":400,"dur":5,"args":{"device":0,"stream":21,"correlation":10,
     "Collective name":"allreduce","In msg nelems":8,"Out msg nelems":8,"dtype":"Float",
     "Group size":2,"Process Group Name":"0","Process Group Ranks":"[0, 1]"}}]})j");
  ASSERT_TRUE(result.status.ok()) << result.status;
  ASSERT_EQ(result.rank.comms.size(), 2u);
  EXPECT_EQ(result.rank.comms[0].seq, 41);
  EXPECT_EQ(result.rank.comms[0].kind, CommKind::kAllReduce);
  EXPECT_EQ(result.rank.comms[1].seq, -1);  // older Kineto: none
}

}  // namespace
}  // namespace bubblescope::testing
