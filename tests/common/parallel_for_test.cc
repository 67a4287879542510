#include "common/parallel_for.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <stdexcept>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace bubblescope {
namespace {

TEST(WorkerCountTest, JobsBoundedByTheWork) {
  EXPECT_EQ(WorkerCount(2, 8), 2u);
  EXPECT_EQ(WorkerCount(8, 3), 3u);  // never more threads than pieces of work
  EXPECT_EQ(WorkerCount(4, 0), 1u);  // and at least one
  EXPECT_EQ(WorkerCount(0, 1000),
            std::max<size_t>(1, std::min<size_t>(std::thread::hardware_concurrency(), 1000)));
}

class ParallelForTest : public ::testing::TestWithParam<size_t> {};

TEST_P(ParallelForTest, EveryIndexOnceAndWorkersWithinBounds) {
  const size_t workers = GetParam();
  constexpr size_t kCount = 1000;
  std::vector<int> calls(kCount, 0);  // each slot written by the one call of its index
  std::vector<std::atomic<int>> by_worker(workers);
  ParallelFor(kCount, workers, [&](size_t worker, size_t index) {
    ASSERT_LT(worker, workers);
    calls[index] += 1;
    by_worker[worker].fetch_add(1);
  });
  for (size_t i = 0; i < kCount; ++i) ASSERT_EQ(calls[i], 1) << i;
  int total = 0;
  for (const std::atomic<int>& count : by_worker) total += count.load();
  EXPECT_EQ(total, static_cast<int>(kCount));
}

TEST_P(ParallelForTest, NothingToDo) {
  int calls = 0;
  ParallelFor(0, GetParam(), [&](size_t, size_t) { ++calls; });
  EXPECT_EQ(calls, 0);
}

TEST_P(ParallelForTest, AnExceptionReachesTheCallerAfterEveryThreadStopped) {
  std::atomic<int> running{0};
  std::atomic<int> calls{0};
  EXPECT_THROW(ParallelFor(100, GetParam(),
                           [&](size_t, size_t index) {
                             running.fetch_add(1);
                             calls.fetch_add(1);
                             // Long enough that other threads are mid-call when index 3 fails.
                             std::this_thread::sleep_for(std::chrono::milliseconds(1));
                             running.fetch_sub(1);
                             if (index == 3) throw std::runtime_error("index 3");
                           }),
               std::runtime_error);
  EXPECT_EQ(running.load(), 0);  // no call still under way once it returned
  // One thread stops at the failing index; others stop at their next one.
  if (GetParam() == 1) {
    EXPECT_EQ(calls.load(), 4);
  }
  EXPECT_LT(calls.load(), 100);
}

INSTANTIATE_TEST_SUITE_P(Workers, ParallelForTest, ::testing::Values(1, 2, 4));

}  // namespace
}  // namespace bubblescope
