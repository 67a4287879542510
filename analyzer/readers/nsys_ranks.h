// What NCCL's NVTX ranges in an Nsight Systems export say about ranks: each process's global
// rank and the world's size (from the communicators it created), the members of each
// communicator (where the file holds every member's process), and each send's and receive's
// peer as a global rank. Payloads exist only in exports made with --include-blobs=true; without
// them the ranges still become communication scopes, with no peer.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/functional/function_ref.h"
#include "bubblescope/trace.h"
#include "readers/nsys_nccl_payload.h"

namespace bubblescope::nsys {

class ProcessComms {
 public:
  // One range of the NCCL domain on thread `tid`: a communicator's creation, a collective or a
  // point-to-point call; other NCCL calls (group start/end, ...) are not kept.
  void Add(int64_t tid, TimeNs start, TimeNs end, std::string_view name,
           const std::optional<NcclPayload>& payload);
  bool any() const { return !ops_.empty() || !inits_.empty(); }

  // Sets the rank id and world size where known, adds the communicators as process groups and
  // each call as a communication op on its thread (`thread(tid)`).
  void Fill(Rank* rank, absl::FunctionRef<Timeline&(int64_t tid)> thread) const;

 private:
  friend void ResolveRanks(const std::vector<ProcessComms*>& processes, int32_t world_size);
  struct Init {
    TimeNs start = 0;
    uint64_t communicator = 0;
    int32_t ranks = -1;
    int32_t rank = -1;
  };
  struct Op {
    int64_t tid = 0;
    TimeNs start = 0;
    TimeNs end = 0;
    std::string name;
    CommKind kind = CommKind::kUnknown;
    std::optional<uint64_t> communicator;
    int64_t bytes = -1;
    int32_t peer = -1;  // in the communicator
  };
  struct Communicator {
    uint64_t id = 0;
    int32_t ranks = -1;
    std::vector<int32_t> members;  // global ranks by communicator rank; empty unless all known
  };
  using GlobalRanks = absl::flat_hash_map<std::pair<uint64_t, int32_t>, int32_t>;

  // The global rank of `rank` in `communicator`, -1 when the file does not tell.
  int32_t GlobalRank(uint64_t communicator, int32_t rank) const;

  std::vector<Init> inits_;
  std::vector<Op> ops_;
  // Set by ResolveRanks.
  int32_t global_rank_ = -1;
  int32_t world_size_ = -1;
  std::optional<uint64_t> world_;
  std::vector<Communicator> communicators_;
  // (communicator, rank in it) -> global rank, over every process of the file.
  std::shared_ptr<const GlobalRanks> global_;
};

// Works out every process's global rank and the communicators' members from all processes of
// one file. A process's rank is its rank in a communicator of the world's size, the first such
// one it created: `world_size` where the launcher's environment gives it (-1 when it does not).
// Without it the world is the largest communicator, believed only when it holds more than two
// ranks or every member's process is in the file: torch gives every pair of ranks that
// exchange point-to-point a two-rank communicator of their own, and in a pipeline whose first
// NCCL call is a send that pair is the largest a process has created.
void ResolveRanks(const std::vector<ProcessComms*>& processes, int32_t world_size);

// The kernel each NCCL call launched (a launch on the call's thread inside its range) gets what
// the call's payload says: the kind of a SendRecv kernel, the peer, the size, the communicator,
// as Kineto's args give them on the kernel. `rank` sorted.
void DescribeLaunchedKernels(Rank* rank);

// Several processes of one file that no NCCL record numbers, each on a GPU of its own: numbered
// by that GPU's index, as torchrun's LOCAL_RANK convention places them.
// True when it numbered them.
bool NumberByDevice(std::vector<Rank>* ranks);

}  // namespace bubblescope::nsys
