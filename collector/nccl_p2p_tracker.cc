#include "nccl_p2p_tracker.h"

#include <algorithm>
#include <array>
#include <cinttypes>
#include <cstdio>
#include <utility>

#include "chrome_json.h"
#include "nccl_profiler_abi.h"

namespace bubblescope::collector {

// Synthetic CPU thread ids of the p2p records, one per communicator.
constexpr int64_t kP2pThreadBase = 1'000'000'000;
// Communicators larger than this are not looked up rank by rank for "Process Group Ranks".
constexpr int kMaxGroupLookup = 64;

struct NcclP2pTracker::Comm {
  NcclCommInfo info;
  int64_t tid = 0;
  std::string group_ranks;  // "[0,2]" once every member was found
};

struct NcclP2pTracker::Event {
  Comm* comm = nullptr;
  Event* parent = nullptr;  // for children of a p2p event
  bool is_p2p = false;
  bool stopped = false;
  bool had_children = false;
  int open_children = 0;
  std::string func;
  std::string datatype;
  uint64_t count = 0;
  int peer = -1;
  int64_t start = 0;
  int64_t stop = 0;
  int64_t last_activity = 0;
};

std::string_view TorchDtypeName(std::string_view nccl_datatype) {
  static constexpr std::array<std::pair<std::string_view, std::string_view>, 14> kNames = {{
      {"ncclInt8", "Char"},
      {"ncclChar", "Char"},
      {"ncclUint8", "Byte"},
      {"ncclInt32", "Int"},
      {"ncclInt", "Int"},
      {"ncclUint32", "UInt32"},
      {"ncclInt64", "Long"},
      {"ncclUint64", "UInt64"},
      {"ncclFloat16", "Half"},
      {"ncclFloat32", "Float"},
      {"ncclFloat64", "Double"},
      {"ncclBfloat16", "BFloat16"},
      {"ncclFloat8e4m3", "Float8_e4m3fn"},
      {"ncclFloat8e5m2", "Float8_e5m2"},
  }};
  for (const auto& [nccl, torch] : kNames) {
    if (nccl_datatype == nccl) return torch;
  }
  return {};
}

NcclP2pTracker::NcclP2pTracker(NcclTrackerOptions options) : options_(std::move(options)) {}
NcclP2pTracker::~NcclP2pTracker() = default;

void* NcclP2pTracker::InitComm(const NcclCommInfo& info) {
  if (options_.directory != nullptr && options_.global_rank >= 0) {
    options_.directory->Publish(info.id, info.rank, options_.global_rank);
  }
  std::lock_guard<std::mutex> lock(mutex_);
  auto comm = std::make_unique<Comm>();
  comm->info = info;
  comm->tid = kP2pThreadBase + next_comm_index_++;
  comms_.push_back(std::move(comm));
  return comms_.back().get();
}

void* NcclP2pTracker::Start(void* context, const NcclEventStart& start) {
  if (context == nullptr) return nullptr;
  const int64_t now = options_.clock();
  std::lock_guard<std::mutex> lock(mutex_);
  Event* parent = nullptr;
  if (start.type != nccl_abi::kProfileP2p) {
    if (start.type != nccl_abi::kProfileProxyOp && start.type != nccl_abi::kProfileKernelCh) {
      return nullptr;
    }
    const auto it = events_.find(static_cast<const Event*>(start.parent));
    if (it == events_.end() || !it->second->is_p2p) return nullptr;  // a collective's child
    parent = it->second.get();
  }
  if (events_.size() >= options_.max_events) {
    ++dropped_events_;
    return nullptr;
  }
  auto event = std::make_unique<Event>();
  event->comm = static_cast<Comm*>(context);
  event->start = now;
  event->last_activity = now;
  if (parent != nullptr) {
    event->parent = parent;
    ++parent->open_children;
    parent->had_children = true;
  } else {
    event->is_p2p = true;
    event->func = start.func == nullptr ? "" : start.func;
    event->datatype = start.datatype == nullptr ? "" : start.datatype;
    event->count = start.count;
    event->peer = start.peer;
  }
  Event* handle = event.get();
  events_.emplace(handle, std::move(event));
  return handle;
}

void NcclP2pTracker::RecordState(void* handle) {
  if (handle == nullptr) return;
  const int64_t now = options_.clock();
  std::lock_guard<std::mutex> lock(mutex_);
  const auto it = events_.find(static_cast<const Event*>(handle));
  if (it != events_.end()) it->second->last_activity = now;
}

void NcclP2pTracker::Stop(void* handle) {
  if (handle == nullptr) return;
  const int64_t now = options_.clock();
  std::lock_guard<std::mutex> lock(mutex_);
  const auto it = events_.find(static_cast<const Event*>(handle));
  if (it == events_.end()) return;
  Event* event = it->second.get();
  if (event->is_p2p) {
    event->stopped = true;
    event->stop = std::max(event->stop, now);
    return;
  }
  Event* parent = event->parent;
  parent->stop = std::max(parent->stop, now);
  --parent->open_children;
  events_.erase(it);
}

std::string NcclP2pTracker::GroupRanksLocked(Comm& comm) {
  if (!comm.group_ranks.empty() || options_.directory == nullptr ||
      comm.info.nranks > kMaxGroupLookup) {
    return comm.group_ranks;
  }
  std::string ranks = "[";
  for (int member = 0; member < comm.info.nranks; ++member) {
    const int global = options_.directory->Lookup(comm.info.id, member);
    if (global < 0) return {};
    if (member > 0) ranks += ',';
    ranks += std::to_string(global);
  }
  comm.group_ranks = ranks + "]";
  return comm.group_ranks;
}

void NcclP2pTracker::EmitLocked(const Event& event, std::string* out) {
  Comm& comm = *event.comm;
  std::string collective;
  for (char c : event.func) {
    collective += (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
  }
  const bool is_send = collective == "send";
  const int peer_global =
      options_.directory == nullptr ? -1 : options_.directory->Lookup(comm.info.id, event.peer);
  const int src = is_send ? options_.global_rank : peer_global;
  const int dst = is_send ? peer_global : options_.global_rank;
  char comm_id[24];
  std::snprintf(comm_id, sizeof(comm_id), "%016" PRIx64, comm.info.id);
  const std::string_view torch_dtype = TorchDtypeName(event.datatype);
  const int64_t count = static_cast<int64_t>(event.count);
  ChromeEvent text(out, "X", "cpu_op", "nccl:" + collective);
  text.Int("pid", options_.pid)
      .Int("tid", comm.tid)
      .Micros("ts", event.start)
      .Micros("dur", std::max<int64_t>(event.stop - event.start, 0))
      .Args()
      .Text("Collective name", collective)
      .Int("In msg nelems", count)
      .Int("Out msg nelems", count)
      .Text("dtype", torch_dtype.empty() ? std::string_view(event.datatype) : torch_dtype)
      .Int("Group size", comm.info.nranks)
      .Text("Process Group Name", comm.info.name.empty() ? std::string(comm_id) : comm.info.name);
  if (src >= 0) text.Int("Src Rank", src);
  if (dst >= 0) text.Int("Dst Rank", dst);
  if (const std::string ranks = GroupRanksLocked(comm); !ranks.empty()) {
    text.Raw("Process Group Ranks", ranks);
  }
  text.Int("comm rank", comm.info.rank).Int("peer comm rank", event.peer).Text("comm id", comm_id);
  text.Finish();
  ++written_records_;
}

void NcclP2pTracker::CollectLocked(bool force, const Comm* only, std::string* out) {
  const int64_t now = options_.clock();
  std::vector<Event*> done;
  for (const auto& [key, event] : events_) {
    if (!event->is_p2p || (only != nullptr && event->comm != only)) continue;
    const bool over = event->stopped && event->open_children == 0 &&
                      (event->had_children || now - event->stop >= options_.grace_ns);
    if (force || over) done.push_back(event.get());
  }
  // Oldest first, so the file reads in time order within a collection.
  std::sort(done.begin(), done.end(),
            [](const Event* a, const Event* b) { return a->start < b->start; });
  for (Event* event : done) {
    EmitLocked(*event, out);
    ReleaseLocked(event);
  }
}

void NcclP2pTracker::ReleaseLocked(Event* event) {
  // Children still open (only when forced out) are forgotten with their parent.
  if (event->open_children > 0) {
    std::erase_if(events_, [event](const auto& entry) { return entry.second->parent == event; });
  }
  events_.erase(event);
}

void NcclP2pTracker::Collect(bool force, EventSink& sink) {
  std::string out;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    CollectLocked(force, nullptr, &out);
  }
  if (!out.empty()) sink.Append(out);
}

void NcclP2pTracker::FinalizeComm(void* context, EventSink& sink) {
  if (context == nullptr) return;
  std::string out;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    const Comm* comm = static_cast<const Comm*>(context);
    CollectLocked(true, comm, &out);
    std::erase_if(comms_,
                  [comm](const std::unique_ptr<Comm>& entry) { return entry.get() == comm; });
  }
  if (!out.empty()) sink.Append(out);
}

uint64_t NcclP2pTracker::dropped_events() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return dropped_events_;
}

uint64_t NcclP2pTracker::written_records() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return written_records_;
}

}  // namespace bubblescope::collector
