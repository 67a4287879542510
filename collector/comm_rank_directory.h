// Communicator rank -> global rank, shared between the processes of a job through the output
// directory: when a communicator starts, each process writes one small file naming its global rank
// under the communicator's id; a process looks its peers up there when it writes their p2p
// records. A peer that wrote no file (an unknown global rank, or an output directory not shared
// between nodes) stays unknown.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>

namespace bubblescope::collector {

class CommRankDirectory {
 public:
  // `dir` is the trace output directory; entries go to `dir`/.bubblescope-comms/.
  explicit CommRankDirectory(std::string dir) : dir_(std::move(dir)) {}

  // Records that communicator rank `comm_rank` of `comm_id` is global rank `global_rank`
  // (written to a temporary name, then renamed, so readers never see half a file). False if the
  // file could not be written.
  bool Publish(uint64_t comm_id, int comm_rank, int global_rank);

  // The global rank published for `comm_rank` of `comm_id`, or -1. Found ranks are cached.
  int Lookup(uint64_t comm_id, int comm_rank);

 private:
  std::string EntryPath(uint64_t comm_id, int comm_rank) const;

  const std::string dir_;
  std::mutex mutex_;
  std::map<std::pair<uint64_t, int>, int> cache_;
};

}  // namespace bubblescope::collector
