#include "common/parallel_for.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

namespace bubblescope {

size_t WorkerCount(int jobs, size_t items) {
  const size_t wanted = jobs > 0 ? static_cast<size_t>(jobs) : std::thread::hardware_concurrency();
  return std::clamp<size_t>(wanted, 1, std::max<size_t>(items, 1));
}

void ParallelFor(size_t count, size_t workers,
                 absl::FunctionRef<void(size_t worker, size_t index)> body) {
  workers = std::clamp<size_t>(workers, 1, std::max<size_t>(count, 1));
  if (workers == 1) {
    for (size_t i = 0; i < count; ++i) body(0, i);
    return;
  }
  std::atomic<size_t> next{0};
  std::atomic<bool> failed{false};
  std::exception_ptr first_error;
  std::mutex error_mutex;
  auto work = [&](size_t worker) {
    for (;;) {
      const size_t index = next.fetch_add(1);
      if (index >= count || failed.load()) return;
      try {
        body(worker, index);
      } catch (...) {
        const std::lock_guard<std::mutex> lock(error_mutex);
        if (!first_error) first_error = std::current_exception();
        failed.store(true);
        return;
      }
    }
  };
  {
    std::vector<std::jthread> helpers;
    helpers.reserve(workers - 1);
    for (size_t worker = 1; worker < workers; ++worker) {
      try {
        helpers.emplace_back(work, worker);
      } catch (const std::system_error&) {
        break;
      }
    }
    work(0);
  }  // the helpers join here
  if (first_error) std::rethrow_exception(first_error);
}

}  // namespace bubblescope
