// NCCL's profiler-plugin ABI, declared here because NCCL does not install its plugin headers.
// Laid out exactly as NCCL's example plugin headers describe: profiler_v6.h (NCCL 2.29.7 and
// later, plugins/profiler/example/nccl/), profiler_v5.h and profiler_v4.h (NCCL 2.28's
// ext-profiler/example/nccl/). NCCL finds a plugin by dlsym of the struct's name
// ("ncclProfiler_v6", then "ncclProfiler_v5", then older).
// Only the members bubblescope reads are used, but every union member is declared so sizes and
// offsets match what NCCL passes. Enums are passed as int by the C ABI.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>

// NCCL's descriptors hold unnamed structs inside unions: plain C11, and in C++ an extension that
// GCC accepts silently and clang (the fuzz build's compiler) reports under -Wpedantic.
#if defined(__clang__)
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wnested-anon-types"
#endif

extern "C" {

typedef int bubblescope_ncclResult_t;  // ncclResult_t; 0 is ncclSuccess
typedef void (*bubblescope_ncclDebugLogger_t)(int level, unsigned long flags, const char* file,
                                              int line, const char* fmt, ...);
typedef int bubblescope_ncclProfilerEventState_t;  // ncclProfilerEventState_v4_t to _v6_t

// The p2p, proxyOp and kernelCh members have the same layout in v4, v5 and v6.
struct bubblescope_ncclP2pDescr {
  const char* func;  // "Send" or "Recv"
  void* buff;
  const char* datatype;  // "ncclFloat32", ...
  size_t count;
  int peer;  // communicator rank of the peer
  uint8_t nChannels;
};

struct bubblescope_ncclProxyOpDescr {
  pid_t pid;
  uint8_t channelId;
  int peer;
  int nSteps;
  int chunkSize;
  int isSend;
};

struct bubblescope_ncclKernelChDescr {
  uint8_t channelId;
  uint64_t pTimer;
};

// v6 is v5's descriptor with three copy-engine (CE) collective members added to the union; the
// rest, p2p included, is unchanged. groupApi.graphCaptured became a bool (same offsets).
typedef struct {
  uint64_t type;
  void* parentObj;
  int rank;
  union {
    struct {
      bool graphCaptured;
      int groupDepth;
    } groupApi;
    struct {
      const char* func;
      size_t count;
      const char* datatype;
      int root;
      void* stream;
      bool graphCaptured;
    } collApi;
    struct {
      const char* func;
      size_t count;
      const char* datatype;
      void* stream;
      bool graphCaptured;
    } p2pApi;
    struct {
      void* stream;
    } kernelLaunch;
    struct {
      uint64_t seqNumber;
      const char* func;
      void const* sendBuff;
      void* recvBuff;
      size_t count;
      int root;
      const char* datatype;
      uint8_t nChannels;
      uint8_t nWarps;
      const char* algo;
      const char* proto;
      void* parentGroup;
    } coll;
    struct {
      const char* func;
      void* buff;
      const char* datatype;
      size_t count;
      int peer;
      uint8_t nChannels;
      void* parentGroup;
    } p2p;
    bubblescope_ncclProxyOpDescr proxyOp;
    struct {
      int step;
    } proxyStep;
    bubblescope_ncclKernelChDescr kernelCh;
    struct {
      int64_t id;
      void* data;
    } netPlugin;
    struct {
      uint64_t seqNumber;
      const char* func;
      void const* sendBuff;
      void* recvBuff;
      size_t count;
      int root;
      const char* datatype;
      const char* syncStrategy;
      bool intraBatchSync;
      uint32_t batchSize;
      uint32_t numBatches;
      uint32_t ceSeqNum;
      void* stream;
    } ceColl;
    struct {
      bool isComplete;
      int nRanks;
    } ceCollSync;
    struct {
      int numOps;
      size_t totalBytes;
      bool useIntraSync;
    } ceCollBatch;
  };
} bubblescope_ncclProfilerEventDescr_v6_t;

typedef struct {
  uint64_t type;  // ncclProfile* bit
  void* parentObj;
  int rank;  // communicator rank of this process
  union {
    struct {
      int graphCaptured;
      int groupDepth;
    } groupApi;
    struct {
      const char* func;
      size_t count;
      const char* datatype;
      int root;
      void* stream;
      bool graphCaptured;
    } collApi;
    struct {
      const char* func;
      size_t count;
      const char* datatype;
      void* stream;
      bool graphCaptured;
    } p2pApi;
    struct {
      void* stream;
    } kernelLaunch;
    struct {
      uint64_t seqNumber;
      const char* func;
      void const* sendBuff;
      void* recvBuff;
      size_t count;
      int root;
      const char* datatype;
      uint8_t nChannels;
      uint8_t nWarps;
      const char* algo;
      const char* proto;
      void* parentGroup;
    } coll;
    struct {
      const char* func;
      void* buff;
      const char* datatype;
      size_t count;
      int peer;
      uint8_t nChannels;
      void* parentGroup;
    } p2p;
    bubblescope_ncclProxyOpDescr proxyOp;
    struct {
      int step;
    } proxyStep;
    bubblescope_ncclKernelChDescr kernelCh;
    struct {
      int64_t id;
      void* data;
    } netPlugin;
  };
} bubblescope_ncclProfilerEventDescr_v5_t;

typedef struct {
  uint8_t type;
  void* parentObj;
  int rank;
  union {
    struct {
      uint64_t seqNumber;
      const char* func;
      void const* sendBuff;
      void* recvBuff;
      size_t count;
      int root;
      const char* datatype;
      uint8_t nChannels;
      uint8_t nWarps;
      const char* algo;
      const char* proto;
    } coll;
    bubblescope_ncclP2pDescr p2p;
    bubblescope_ncclProxyOpDescr proxyOp;
    struct {
      int step;
    } proxyStep;
    bubblescope_ncclKernelChDescr kernelCh;
    struct {
      int64_t id;
      void* data;
    } netPlugin;
  };
} bubblescope_ncclProfilerEventDescr_v4_t;

typedef union {
  struct {
    size_t transSize;
  } proxyStep;
  struct {
    int appendedProxyOps;
  } proxyCtrl;
  struct {
    void* data;
  } netPlugin;
  struct {
    uint64_t pTimer;
  } kernelCh;
} bubblescope_ncclProfilerEventStateArgs_t;  // _v4_t, _v5_t and _v6_t are the same union

typedef struct {
  const char* name;
  bubblescope_ncclResult_t (*init)(void** context, uint64_t commId, int* eActivationMask,
                                   const char* commName, int nNodes, int nranks, int rank,
                                   bubblescope_ncclDebugLogger_t logfn);
  bubblescope_ncclResult_t (*startEvent)(void* context, void** eHandle,
                                         bubblescope_ncclProfilerEventDescr_v6_t* eDescr);
  bubblescope_ncclResult_t (*stopEvent)(void* eHandle);
  bubblescope_ncclResult_t (*recordEventState)(
      void* eHandle, bubblescope_ncclProfilerEventState_t eState,
      bubblescope_ncclProfilerEventStateArgs_t* eStateArgs);
  bubblescope_ncclResult_t (*finalize)(void* context);
} bubblescope_ncclProfiler_v6_t;

typedef struct {
  const char* name;
  bubblescope_ncclResult_t (*init)(void** context, uint64_t commId, int* eActivationMask,
                                   const char* commName, int nNodes, int nranks, int rank,
                                   bubblescope_ncclDebugLogger_t logfn);
  bubblescope_ncclResult_t (*startEvent)(void* context, void** eHandle,
                                         bubblescope_ncclProfilerEventDescr_v5_t* eDescr);
  bubblescope_ncclResult_t (*stopEvent)(void* eHandle);
  bubblescope_ncclResult_t (*recordEventState)(
      void* eHandle, bubblescope_ncclProfilerEventState_t eState,
      bubblescope_ncclProfilerEventStateArgs_t* eStateArgs);
  bubblescope_ncclResult_t (*finalize)(void* context);
} bubblescope_ncclProfiler_v5_t;

typedef struct {
  const char* name;
  bubblescope_ncclResult_t (*init)(void** context, int* eActivationMask, const char* commName,
                                   uint64_t commHash, int nNodes, int nranks, int rank,
                                   bubblescope_ncclDebugLogger_t logfn);
  bubblescope_ncclResult_t (*startEvent)(void* context, void** eHandle,
                                         bubblescope_ncclProfilerEventDescr_v4_t* eDescr);
  bubblescope_ncclResult_t (*stopEvent)(void* eHandle);
  bubblescope_ncclResult_t (*recordEventState)(
      void* eHandle, bubblescope_ncclProfilerEventState_t eState,
      bubblescope_ncclProfilerEventStateArgs_t* eStateArgs);
  bubblescope_ncclResult_t (*finalize)(void* context);
} bubblescope_ncclProfiler_v4_t;

// The exported plugin structs (nccl_plugin.cc).
extern bubblescope_ncclProfiler_v6_t ncclProfiler_v6;
extern bubblescope_ncclProfiler_v5_t ncclProfiler_v5;
extern bubblescope_ncclProfiler_v4_t ncclProfiler_v4;

}  // extern "C"

#if defined(__clang__)
#pragma clang diagnostic pop
#endif

namespace bubblescope::collector::nccl_abi {

inline constexpr int kSuccess = 0;
// ncclProfile* event type bits.
inline constexpr uint64_t kProfileP2p = 1u << 2;
inline constexpr uint64_t kProfileProxyOp = 1u << 3;
inline constexpr uint64_t kProfileKernelCh = 1u << 6;
// v6's copy-engine collective events; never requested, so never tracked.
inline constexpr uint64_t kProfileCeColl = 1u << 12;

// Offsets NCCL relies on; a mismatch here would misread every descriptor.
static_assert(offsetof(bubblescope_ncclProfilerEventDescr_v6_t, p2p) == 24);
static_assert(offsetof(bubblescope_ncclProfilerEventDescr_v6_t, parentObj) == 8);
static_assert(offsetof(bubblescope_ncclProfilerEventDescr_v5_t, p2p) == 24);
static_assert(offsetof(bubblescope_ncclProfilerEventDescr_v4_t, p2p) == 24);
static_assert(offsetof(bubblescope_ncclP2pDescr, count) == 24);
static_assert(offsetof(bubblescope_ncclP2pDescr, peer) == 32);

}  // namespace bubblescope::collector::nccl_abi
