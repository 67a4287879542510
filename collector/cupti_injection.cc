// GPU-ONLY: the thin layer that calls CUPTI. CUDA loads the library through CUDA_INJECTION64_PATH
// and calls InitializeInjection at cuInit; from there CUPTI's callbacks hand completed activity
// buffers to the CollectorRuntime, which does everything else in plain, CPU-tested C++. Nothing in
// this file runs without a GPU, so it holds no logic beyond mapping CUPTI calls and results.
#include <cupti.h>
#include <dlfcn.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "activity_buffer.h"
#include "api_filter.h"
#include "collector_config.h"
#include "collector_runtime.h"
#include "cupti_cursor.h"

// NVTX's callback parameters (BUBBLESCOPE_START=steps:A:B). CUPTI's header needs NVTX's own, which
// the CUDA toolkit has and the CUDA 12 CUPTI wheels do not: without them the step window is off.
// Older CUPTI headers (CUDA 12.0) do not include NVTX's themselves.
#if __has_include(<nvtx3/nvToolsExtCudaRt.h>) && __has_include(<generated_nvtx_meta.h>)
// generated_nvtx_meta.h uses the NVTX types, so it comes after their headers.
// clang-format off
#include <nvtx3/nvToolsExt.h>
#include <nvtx3/nvToolsExtCuda.h>
#include <nvtx3/nvToolsExtCudaRt.h>
#include <nvtx3/nvToolsExtSync.h>
#include <generated_nvtx_meta.h>
// clang-format on
#define BUBBLESCOPE_NVTX_CALLBACKS 1
#endif

namespace bubblescope::collector {
namespace {

CUpti_SubscriberHandle subscriber = nullptr;

std::string ResultText(CUptiResult result) {
  const char* text = nullptr;
  if (cuptiGetResultString(result, &text) != CUPTI_SUCCESS || text == nullptr) {
    return "CUPTI error " + std::to_string(static_cast<int>(result));
  }
  return text;
}

void CUPTIAPI BufferRequested(uint8_t** buffer, size_t* size, size_t* max_records) {
  BufferPool* pool = CollectorRuntime::Instance().pool();
  *max_records = 0;
  *buffer = pool == nullptr ? nullptr : pool->Acquire();
  *size = *buffer == nullptr ? 0 : pool->buffer_bytes();
}

void CUPTIAPI BufferCompleted(CUcontext context, uint32_t stream, uint8_t* buffer, size_t,
                              size_t valid_bytes) {
  size_t dropped = 0;
  if (cuptiActivityGetNumDroppedRecords(context, stream, &dropped) != CUPTI_SUCCESS) dropped = 0;
  CollectorRuntime::Instance().QueueBuffer(buffer, valid_bytes, dropped);
}

// The CUPTI activity kinds behind each BUBBLESCOPE_KINDS bit (DEVICE is always on: it carries the
// device properties).
std::vector<CUpti_ActivityKind> ActivityKinds(uint32_t kinds) {
  static constexpr std::array<std::pair<uint32_t, CUpti_ActivityKind>, 8> kMap = {{
      {kKindKernel, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL},
      {kKindMemcpy, CUPTI_ACTIVITY_KIND_MEMCPY},
      {kKindMemset, CUPTI_ACTIVITY_KIND_MEMSET},
      {kKindMemory, CUPTI_ACTIVITY_KIND_MEMORY2},
      {kKindNvtx, CUPTI_ACTIVITY_KIND_MARKER},
      {kKindNvtx, CUPTI_ACTIVITY_KIND_MARKER_DATA},
      {kKindRuntime, CUPTI_ACTIVITY_KIND_RUNTIME},
      {kKindDriver, CUPTI_ACTIVITY_KIND_DRIVER},
  }};
  std::vector<CUpti_ActivityKind> out = {CUPTI_ACTIVITY_KIND_DEVICE};
  for (const auto& [bit, kind] : kMap) {
    if (kinds & bit) out.push_back(kind);
  }
  return out;
}

// "cudaLaunchKernel_v7000" -> "cudaLaunchKernel", as Kineto names runtime calls.
std::string ApiName(bool is_driver, uint32_t cbid) {
  const char* name = nullptr;
  const CUpti_CallbackDomain domain =
      is_driver ? CUPTI_CB_DOMAIN_DRIVER_API : CUPTI_CB_DOMAIN_RUNTIME_API;
  if (cuptiGetCallbackName(domain, cbid, &name) != CUPTI_SUCCESS || name == nullptr) {
    return (is_driver ? "cuda_driver_cbid_" : "cuda_runtime_cbid_") + std::to_string(cbid);
  }
  std::string text = name;
  const size_t version = text.rfind("_v");
  if (version != std::string::npos && version + 2 < text.size() &&
      text.find_first_not_of("0123456789", version + 2) == std::string::npos) {
    text.resize(version);
  }
  return text;
}

// The file of the libcupti this library uses; nullptr when the loader cannot say.
const char* CuptiLibraryPath() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&cuptiActivityEnable), &info) == 0) return nullptr;
  return info.dli_fname;
}

// A function of the libcupti this library uses, looked up by name: for those that not every
// supported CUPTI has (the per-API switches came with CUDA 12.x), so that the collector still
// loads where they are missing. nullptr when absent.
void* CuptiFunction(const char* name) {
  const char* path = CuptiLibraryPath();
  if (path == nullptr) return nullptr;
  void* library = dlopen(path, RTLD_LAZY | RTLD_NOLOAD);
  if (library == nullptr) return nullptr;
  void* function = dlsym(library, name);
  dlclose(library);  // libcupti stays loaded: this library depends on it
  return function;
}

// The callback ids of one API domain whose calls are host queries (api_filter.h).
std::vector<CUpti_CallbackId> HostQueryIds(bool is_driver, uint32_t id_count) {
  std::vector<CUpti_CallbackId> ids;
  for (uint32_t cbid = 1; cbid < id_count; ++cbid) {
    if (IsHostQueryApi(ApiName(is_driver, cbid))) ids.push_back(cbid);
  }
  return ids;
}

// One API domain's per-call switch and the host-query calls it turns off, found once.
struct HostQuerySwitch {
  HostQuerySwitch(const char* switch_name, bool is_driver, uint32_t id_count)
      : turn(reinterpret_cast<Switch>(CuptiFunction(switch_name))),
        ids(HostQueryIds(is_driver, id_count)) {}
  void TurnOff() const {
    if (turn == nullptr) return;
    for (CUpti_CallbackId cbid : ids) turn(cbid, 0);
  }
  using Switch = CUptiResult (*)(CUpti_CallbackId, uint8_t);
  Switch turn;
  std::vector<CUpti_CallbackId> ids;
};

// Switches off the activity records of host-query calls for the API kinds just enabled, unless
// the user asked for `queries`. Enabling a whole API kind resets these switches, so this runs
// after every enable. Where CUPTI lacks the switches, the queries are recorded.
void SkipHostQueries(uint32_t kinds) {
  if (kinds & kKindQueries) return;
  if (kinds & kKindRuntime) {
    static const HostQuerySwitch runtime("cuptiActivityEnableRuntimeApi", false,
                                         CUPTI_RUNTIME_TRACE_CBID_SIZE);
    runtime.TurnOff();
  }
  if (kinds & kKindDriver) {
    static const HostQuerySwitch driver("cuptiActivityEnableDriverApi", true,
                                        CUPTI_DRIVER_TRACE_CBID_SIZE);
    driver.TurnOff();
  }
}

void SetRecording(bool on) {
  for (CUpti_ActivityKind kind : ActivityKinds(CollectorRuntime::Instance().config().kinds)) {
    const CUptiResult result = on ? cuptiActivityEnable(kind) : cuptiActivityDisable(kind);
    if (result != CUPTI_SUCCESS && on) {
      CollectorRuntime::Disable("cuptiActivityEnable(" + std::to_string(static_cast<int>(kind)) +
                                "): " + ResultText(result));
      for (CUpti_ActivityKind enabled : ActivityKinds(kAllKinds)) cuptiActivityDisable(enabled);
      return;
    }
  }
  if (on) SkipHostQueries(CollectorRuntime::Instance().config().kinds);
}

void CUPTIAPI OnCallback(void*, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                         const void* data) {
#ifdef BUBBLESCOPE_NVTX_CALLBACKS
  if (domain == CUPTI_CB_DOMAIN_NVTX) {
    const auto* nvtx = static_cast<const CUpti_NvtxData*>(data);
    const char* name = nullptr;
    if (cbid == CUPTI_CBID_NVTX_nvtxRangePushA) {
      name = static_cast<const nvtxRangePushA_params*>(nvtx->functionParams)->message;
    } else if (cbid == CUPTI_CBID_NVTX_nvtxRangeStartA) {
      name = static_cast<const nvtxRangeStartA_params*>(nvtx->functionParams)->message;
    }
    if (name != nullptr) CollectorRuntime::Instance().OnRangeStart(name);
    return;
  }
#endif
  if (domain != CUPTI_CB_DOMAIN_RUNTIME_API) return;
  const auto* info = static_cast<const CUpti_CallbackData*>(data);
  if (info->callbackSite != CUPTI_API_ENTER) return;
  if (cbid == CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStart_v4000) {
    CollectorRuntime::Instance().OnProfilerApi(true);
  } else if (cbid == CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStop_v4000) {
    CollectorRuntime::Instance().OnProfilerApi(false);
  }
}

int64_t CuptiClock() {
  uint64_t now = 0;
  cuptiGetTimestamp(&now);
  return static_cast<int64_t>(now);
}

void FlushActivity(bool forced) {
  cuptiActivityFlushAll(forced ? CUPTI_ACTIVITY_FLAG_FLUSH_FORCED : 0);
}

void AtExit() { CollectorRuntime::Instance().Shutdown(); }

// Gives CUPTI up so that another client can subscribe (CollectorRuntime::HandOffCupti).
void ReleaseCupti() {
  SetRecording(false);
  cuptiUnsubscribe(subscriber);
  subscriber = nullptr;
}

void HandOffToAnotherClient(const char* taker) {
  CollectorRuntime::Instance().HandOffCupti(taker == nullptr ? "" : taker);
}

// With `bubblescope record`, libbubblescope_cupti_handoff.so is preloaded into the job and
// calls HandOffToAnotherClient when anyone else subscribes to CUPTI (cupti_handoff.cc). Injected
// by other means, the collector keeps CUPTI, and a later client's subscription fails as before.
void OfferHandOff() {
  using Register = void (*)(void (*)(const char*));
  if (const auto register_hand_off =
          reinterpret_cast<Register>(dlsym(RTLD_DEFAULT, "bubblescope_cupti_handoff_register"))) {
    register_hand_off(HandOffToAnotherClient);
  }
}

// cuptiSubscribe, through cuptiSubscribe_v2 where the headers have it (CUDA 13): it names this
// subscriber to other tools and, when refused, names the client that holds CUPTI.
CUptiResult Subscribe(std::string* held_by) {
#ifdef CUpti_SubscriberParams_STRUCT_SIZE
  std::array<char, CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN + 1> holder{};
  CUpti_SubscriberParams params{};
  params.structSize = CUpti_SubscriberParams_STRUCT_SIZE;
  params.subscriberName = "bubblescope";
  params.oldSubscriberName = holder.data();
  params.oldSubscriberSize = holder.size() - 1;
  const CUptiResult result = cuptiSubscribe_v2(&subscriber, OnCallback, nullptr, &params);
  *held_by = holder.data();
  return result;
#else
  held_by->clear();
  return cuptiSubscribe(&subscriber, OnCallback, nullptr);
#endif
}

RuntimeHooks CuptiHooks() {
  RuntimeHooks hooks;
  hooks.clock = CuptiClock;
  hooks.clock_source = "cupti";
  return hooks;
}

bool StartRuntime(RuntimeHooks hooks) {
  return CollectorRuntime::Instance().Start([](const char* name) { return std::getenv(name); },
                                            std::move(hooks));
}

// NVTX ranges reach CUPTI only through NVTX's injection hook: at its first call NVTX loads the
// library NVTX_INJECTION64_PATH names, and without it every range is a no-op CUPTI never sees.
// Points it at the libcupti this process uses, unless the job set it (Nsight Systems does). NVTX
// calls made before CUDA initialised (and so before this) stay unrecorded.
void RouteNvtxToCupti() {
  const CollectorConfig& config = CollectorRuntime::Instance().config();
  if (!(config.kinds & kKindNvtx) && !FollowsStepRanges(config)) return;
  if (std::getenv("NVTX_INJECTION64_PATH") != nullptr) return;
  if (const char* path = CuptiLibraryPath()) setenv("NVTX_INJECTION64_PATH", path, 0);
}

// Every CUPTI setup step; false (after printing the "disabled" line) at the first refusal. When
// another client holds CUPTI, the collector neither takes CUPTI's buffers from it nor writes an
// empty trace: it runs without CUPTI (NCCL transfers only) and says so.
bool SetUp() {
  std::string held_by;
  if (const CUptiResult result = Subscribe(&held_by); result != CUPTI_SUCCESS) {
    if (result == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
      RuntimeHooks hooks = CuptiHooks();
      hooks.cupti_held_by = held_by;
      if (StartRuntime(std::move(hooks))) std::atexit(AtExit);
      return false;
    }
    CollectorRuntime::Disable("cuptiSubscribe: " + ResultText(result));
    return false;
  }
  if (const CUptiResult result = cuptiActivityRegisterCallbacks(BufferRequested, BufferCompleted);
      result != CUPTI_SUCCESS) {
    CollectorRuntime::Disable("cuptiActivityRegisterCallbacks: " + ResultText(result));
    cuptiUnsubscribe(subscriber);
    return false;
  }
  for (CUpti_CallbackId cbid : {CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStart_v4000,
                                CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStop_v4000}) {
    cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_RUNTIME_API, cbid);
  }
  RuntimeHooks hooks = CuptiHooks();
  hooks.flush_activity = FlushActivity;
  hooks.set_recording = SetRecording;
  hooks.api_name = ApiName;
  hooks.release_cupti = ReleaseCupti;
  hooks.cursor = std::make_shared<CuptiCursor>();
  if (!StartRuntime(std::move(hooks))) {
    cuptiUnsubscribe(subscriber);
    return false;
  }
  const CollectorConfig& config = CollectorRuntime::Instance().config();
  if (FollowsStepRanges(config)) {
#ifdef BUBBLESCOPE_NVTX_CALLBACKS
    for (CUpti_CallbackId cbid :
         {CUPTI_CBID_NVTX_nvtxRangePushA, CUPTI_CBID_NVTX_nvtxRangeStartA}) {
      cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_NVTX, cbid);
    }
#else
    // The default window (relative steps) falls back to recording from the start up to its caps,
    // which needs no word; steps named by the user cannot be found at all. Without step flushes
    // the timed ones still write everything, only later.
    if (config.start == StartMode::kSteps && !config.steps_relative) {
      CollectorRuntime::Disable(
          "BUBBLESCOPE_START=steps needs NVTX callbacks, which this build of "
          "the collector lacks (built without NVTX headers)");
    } else if (config.flush_on_step) {
      std::fprintf(stderr,
                   "bubblescope collector: BUBBLESCOPE_FLUSH_ON_STEP=1 needs NVTX callbacks, "
                   "which this build of the collector lacks: flushing every "
                   "BUBBLESCOPE_FLUSH_MS only\n");
    }
#endif
  }
  RouteNvtxToCupti();
  OfferHandOff();
  std::atexit(AtExit);
  return true;
}

}  // namespace
}  // namespace bubblescope::collector

// CUDA's injection entry point. Returns 1 (success) even when the collector disables itself, so
// CUDA and the job carry on untouched.
extern "C" __attribute__((visibility("default"))) int InitializeInjection(void) {
  bubblescope::collector::SetUp();
  return 1;
}
