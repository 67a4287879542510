// NCCL's profiler-plugin entry points (NCCL_PROFILER_PLUGIN=<this library>): the exported
// ncclProfiler_v6 (NCCL 2.29.7 and later), ncclProfiler_v5 (2.28) and ncclProfiler_v4 (older
// NCCLs) structs. NCCL calls
// these; they call nothing in NCCL. Each translates its version's descriptor into NcclEventStart
// and hands it to the process's NcclP2pTracker. They never fail a NCCL call: with the collector
// off, init returns an empty activation mask and NCCL sends no events.
#include <cstdint>

#include "collector_runtime.h"
#include "nccl_p2p_tracker.h"
#include "nccl_profiler_abi.h"

namespace bubblescope::collector {
namespace {

constexpr int kActivationMask = static_cast<int>(nccl_abi::kProfileP2p | nccl_abi::kProfileProxyOp |
                                                 nccl_abi::kProfileKernelCh);

NcclP2pTracker* Tracker() { return CollectorRuntime::Instance().nccl(); }

bubblescope_ncclResult_t Init(void** context, int* activation_mask, uint64_t comm_id,
                              const char* comm_name, int nodes, int nranks, int rank) {
  *context = nullptr;
  *activation_mask = 0;
  if (!CollectorRuntime::Instance().EnsureStarted()) return nccl_abi::kSuccess;
  NcclP2pTracker* tracker = Tracker();
  if (tracker == nullptr) return nccl_abi::kSuccess;
  *context = tracker->InitComm(NcclCommInfo{.id = comm_id,
                                            .name = comm_name == nullptr ? "" : comm_name,
                                            .nodes = nodes,
                                            .nranks = nranks,
                                            .rank = rank});
  *activation_mask = kActivationMask;
  return nccl_abi::kSuccess;
}

// The members read are laid out alike in v4, v5 and v6 (nccl_profiler_abi.h).
template <typename Descriptor>
bubblescope_ncclResult_t StartEvent(void* context, void** handle, Descriptor* descriptor) {
  *handle = nullptr;
  NcclP2pTracker* tracker = Tracker();
  if (tracker == nullptr || descriptor == nullptr) return nccl_abi::kSuccess;
  NcclEventStart start;
  start.type = descriptor->type;
  start.parent = descriptor->parentObj;
  // A transfer outside the recording window is not recorded; its children then find no parent.
  if (start.type == nccl_abi::kProfileP2p && !CollectorRuntime::Instance().RecordingTransfers()) {
    return nccl_abi::kSuccess;
  }
  if (start.type == nccl_abi::kProfileP2p) {
    start.func = descriptor->p2p.func;
    start.datatype = descriptor->p2p.datatype;
    start.count = descriptor->p2p.count;
    start.peer = descriptor->p2p.peer;
  }
  *handle = tracker->Start(context, start);
  return nccl_abi::kSuccess;
}

bubblescope_ncclResult_t StopEvent(void* handle) {
  if (NcclP2pTracker* tracker = Tracker()) tracker->Stop(handle);
  return nccl_abi::kSuccess;
}

bubblescope_ncclResult_t RecordEventState(void* handle, bubblescope_ncclProfilerEventState_t,
                                          bubblescope_ncclProfilerEventStateArgs_t*) {
  if (NcclP2pTracker* tracker = Tracker()) tracker->RecordState(handle);
  return nccl_abi::kSuccess;
}

bubblescope_ncclResult_t Finalize(void* context) {
  CollectorRuntime& runtime = CollectorRuntime::Instance();
  NcclP2pTracker* tracker = Tracker();
  if (tracker == nullptr || context == nullptr) return nccl_abi::kSuccess;
  tracker->FinalizeComm(context, *runtime.sink());
  runtime.Flush(false);
  return nccl_abi::kSuccess;
}

// v6's init is v5's.
bubblescope_ncclResult_t InitV5(void** context, uint64_t comm_id, int* activation_mask,
                                const char* comm_name, int nodes, int nranks, int rank,
                                bubblescope_ncclDebugLogger_t) {
  return Init(context, activation_mask, comm_id, comm_name, nodes, nranks, rank);
}

bubblescope_ncclResult_t InitV4(void** context, int* activation_mask, const char* comm_name,
                                uint64_t comm_hash, int nodes, int nranks, int rank,
                                bubblescope_ncclDebugLogger_t) {
  return Init(context, activation_mask, comm_hash, comm_name, nodes, nranks, rank);
}

}  // namespace
}  // namespace bubblescope::collector

extern "C" {

__attribute__((visibility("default"))) bubblescope_ncclProfiler_v6_t ncclProfiler_v6 = {
    "bubblescope",
    bubblescope::collector::InitV5,
    bubblescope::collector::StartEvent<bubblescope_ncclProfilerEventDescr_v6_t>,
    bubblescope::collector::StopEvent,
    bubblescope::collector::RecordEventState,
    bubblescope::collector::Finalize};

__attribute__((visibility("default"))) bubblescope_ncclProfiler_v5_t ncclProfiler_v5 = {
    "bubblescope",
    bubblescope::collector::InitV5,
    bubblescope::collector::StartEvent<bubblescope_ncclProfilerEventDescr_v5_t>,
    bubblescope::collector::StopEvent,
    bubblescope::collector::RecordEventState,
    bubblescope::collector::Finalize};

__attribute__((visibility("default"))) bubblescope_ncclProfiler_v4_t ncclProfiler_v4 = {
    "bubblescope",
    bubblescope::collector::InitV4,
    bubblescope::collector::StartEvent<bubblescope_ncclProfilerEventDescr_v4_t>,
    bubblescope::collector::StopEvent,
    bubblescope::collector::RecordEventState,
    bubblescope::collector::Finalize};

}  // extern "C"
