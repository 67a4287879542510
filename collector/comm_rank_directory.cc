#include "comm_rank_directory.h"

#include <fcntl.h>
#include <unistd.h>

#include <cinttypes>
#include <cstdio>

#include "trace_writer.h"

namespace bubblescope::collector {

std::string CommRankDirectory::EntryPath(uint64_t comm_id, int comm_rank) const {
  char name[64];
  std::snprintf(name, sizeof(name), "/%016" PRIx64 "-%d", comm_id, comm_rank);
  return dir_ + "/.bubblescope-comms" + name;
}

bool CommRankDirectory::Publish(uint64_t comm_id, int comm_rank, int global_rank) {
  std::string error;
  if (!MakeDirectories(dir_ + "/.bubblescope-comms", &error)) return false;
  const std::string path = EntryPath(comm_id, comm_rank);
  const std::string temporary = path + ".tmp" + std::to_string(getpid());
  const int fd = open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return false;
  const std::string text = std::to_string(global_rank) + "\n";
  const bool written = write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  const bool closed = close(fd) == 0;
  if (!written || !closed || rename(temporary.c_str(), path.c_str()) != 0) {
    unlink(temporary.c_str());
    return false;
  }
  std::lock_guard<std::mutex> lock(mutex_);
  cache_[{comm_id, comm_rank}] = global_rank;
  return true;
}

int CommRankDirectory::Lookup(uint64_t comm_id, int comm_rank) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (const auto it = cache_.find({comm_id, comm_rank}); it != cache_.end()) return it->second;
  const int fd = open(EntryPath(comm_id, comm_rank).c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  char text[32] = {};
  const ssize_t n = read(fd, text, sizeof(text) - 1);
  close(fd);
  int global_rank = -1;
  if (n <= 0 || std::sscanf(text, "%d", &global_rank) != 1 || global_rank < 0) return -1;
  cache_[{comm_id, comm_rank}] = global_rank;
  return global_rank;
}

}  // namespace bubblescope::collector
