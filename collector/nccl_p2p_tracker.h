// Bookkeeping behind NCCL's profiler-plugin entry points: keeps each point-to-point event (and the
// proxy-op and kernel-channel events NCCL starts under it) until it is over, then writes one
// Kineto-style "nccl:send" / "nccl:recv" CPU op with the peer's global rank and the message size.
// Version-independent: the v4 and v5 entry points (nccl_plugin.cc) translate their descriptors
// into NcclEventStart. Plain C++; thread-safe (NCCL calls from user and proxy threads).
//
// Timing: a p2p record spans from NCCL's P2p start to the last stop among the P2p event and its
// children, on the collector's clock. NCCL stops the P2p event once it is enqueued, before its
// proxy ops and kernel channels run, so a stopped event with no children yet is written only after
// `grace_ns` (or at Collect(force) / the communicator's finalize).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "comm_rank_directory.h"
#include "trace_writer.h"

namespace bubblescope::collector {

struct NcclCommInfo {
  uint64_t id = 0;
  std::string name;
  int nodes = 0;
  int nranks = 0;
  int rank = 0;  // this process's rank in the communicator
};

struct NcclEventStart {
  uint64_t type = 0;  // nccl_abi::kProfile* bit
  void* parent = nullptr;
  // For kProfileP2p:
  const char* func = nullptr;      // "Send" / "Recv"
  const char* datatype = nullptr;  // "ncclFloat32", ...
  uint64_t count = 0;
  int peer = -1;  // communicator rank
};

struct NcclTrackerOptions {
  int global_rank = -1;  // this process's rank in the job, -1 unknown
  int64_t pid = 0;
  int64_t grace_ns = 2'000'000'000;
  size_t max_events = 65536;               // live events; more are dropped and counted
  std::function<int64_t()> clock;          // ns on the collector's clock
  CommRankDirectory* directory = nullptr;  // nullptr: peers' global ranks stay unknown
};

// Torch's dtype name for an NCCL datatype name ("ncclFloat32" -> "Float"), empty if unknown.
std::string_view TorchDtypeName(std::string_view nccl_datatype);

class NcclP2pTracker {
 public:
  explicit NcclP2pTracker(NcclTrackerOptions options);
  ~NcclP2pTracker();
  NcclP2pTracker(const NcclP2pTracker&) = delete;
  NcclP2pTracker& operator=(const NcclP2pTracker&) = delete;

  // A communicator starts: returns its context (publishes this process's global rank for it).
  void* InitComm(const NcclCommInfo& info);
  // An event starts: its handle, or nullptr for events not tracked (NCCL then never stops them).
  void* Start(void* context, const NcclEventStart& start);
  // A tracked event makes progress (recordEventState) or stops.
  void RecordState(void* handle);
  void Stop(void* handle);
  // Writes the records that are over (all remaining ones when `force`) to `sink`.
  void Collect(bool force, EventSink& sink);
  // Writes every remaining record of the communicator and forgets it.
  void FinalizeComm(void* context, EventSink& sink);

  uint64_t dropped_events() const;
  uint64_t written_records() const;

 private:
  struct Comm;
  struct Event;

  void EmitLocked(const Event& event, std::string* out);
  std::string GroupRanksLocked(Comm& comm);
  void CollectLocked(bool force, const Comm* only, std::string* out);
  void ReleaseLocked(Event* event);

  NcclTrackerOptions options_;
  mutable std::mutex mutex_;
  std::vector<std::unique_ptr<Comm>> comms_;
  std::unordered_map<const Event*, std::unique_ptr<Event>> events_;
  uint64_t dropped_events_ = 0;
  uint64_t written_records_ = 0;
  int next_comm_index_ = 0;
};

}  // namespace bubblescope::collector
