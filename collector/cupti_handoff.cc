// libbubblescope_cupti_handoff.so: lets the user's own profiler have CUPTI inside a recorded job.
//
// CUPTI accepts one subscriber per process (before CUDA 13.2's multi-subscriber mode). The
// collector subscribes when CUDA initialises, so a torch.profiler started later in the job fails
// to subscribe, and Kineto then records no CUDA activity at all ("CUPTI initialization failed -
// CUDA profiler activities will be missing": seen on an H100 with torch 2.11, 2026-11-26).
// `bubblescope record` preloads this library (LD_PRELOAD) into the job, so that its
// cuptiSubscribe and cuptiSubscribe_v2 come before libcupti's: a call from anyone but the
// collector first asks the collector to hand CUPTI over (it flushes and unsubscribes), then goes
// on to libcupti's function, which now succeeds. The collector itself subscribes through
// libcupti directly and registers its hand-over function here.
//
// Needs nothing but the C library and no CUPTI headers: one build serves CUDA 12 and 13. The
// definitions are unversioned, which the dynamic loader lets satisfy the versioned references
// (cuptiSubscribe@libcupti.so.13) libtorch makes.
#include <dlfcn.h>

#include <atomic>
#include <cstring>

namespace {

using HandOff = void (*)(const char* taker);
using SubscribeFn = int (*)(void* subscriber, void* callback, void* userdata);
using SubscribeV2Fn = int (*)(void* subscriber, void* callback, void* userdata, void* params);

std::atomic<HandOff> registered_hand_off{nullptr};

// CUPTI_ERROR_NOT_INITIALIZED: what libcupti itself answers when it cannot start.
constexpr int kCuptiNotInitialized = 15;

// The sonames CUPTI has had; the first one loaded in the process answers when the real function
// is not in the global scope (libcupti loaded only as a dependency of a library opened locally).
constexpr const char* kCuptiSonames[] = {"libcupti.so.13", "libcupti.so.12", "libcupti.so"};

void* RealFunction(const char* name) {
  if (void* next = dlsym(RTLD_NEXT, name)) return next;
  for (const char* soname : kCuptiSonames) {
    void* library = dlopen(soname, RTLD_LAZY | RTLD_NOLOAD);
    if (library == nullptr) continue;
    void* found = dlsym(library, name);
    dlclose(library);  // RTLD_NOLOAD took a reference; the library stays loaded by its owner
    if (found != nullptr) return found;
  }
  return nullptr;
}

// Whether `path` names a libcupti: CUPTI subscribing on its own behalf is no other client.
bool IsCupti(const char* path) {
  const char* name = std::strrchr(path, '/');
  name = name == nullptr ? path : name + 1;
  return std::strncmp(name, "libcupti.so", 11) == 0;
}

// The collector holds CUPTI and someone else asks: hand over first, naming the asking library.
void HandOverBeforeSubscribing(void* return_address) {
  if (registered_hand_off.load() == nullptr) return;
  Dl_info info{};
  const char* caller =
      dladdr(return_address, &info) != 0 && info.dli_fname != nullptr ? info.dli_fname : "";
  if (IsCupti(caller)) return;
  const HandOff hand_off = registered_hand_off.exchange(nullptr);
  if (hand_off != nullptr) hand_off(caller);
}

}  // namespace

extern "C" {

// Called by the collector once it holds CUPTI; nullptr withdraws it.
__attribute__((visibility("default"))) void bubblescope_cupti_handoff_register(HandOff hand_off) {
  registered_hand_off.store(hand_off);
}

__attribute__((visibility("default"))) int cuptiSubscribe(void* subscriber, void* callback,
                                                          void* userdata) {
  HandOverBeforeSubscribing(__builtin_return_address(0));
  const auto real = reinterpret_cast<SubscribeFn>(RealFunction("cuptiSubscribe"));
  return real == nullptr ? kCuptiNotInitialized : real(subscriber, callback, userdata);
}

__attribute__((visibility("default"))) int cuptiSubscribe_v2(void* subscriber, void* callback,
                                                             void* userdata, void* params) {
  HandOverBeforeSubscribing(__builtin_return_address(0));
  const auto real = reinterpret_cast<SubscribeV2Fn>(RealFunction("cuptiSubscribe_v2"));
  return real == nullptr ? kCuptiNotInitialized : real(subscriber, callback, userdata, params);
}

}  // extern "C"
