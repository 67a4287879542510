// Run by cupti_handoff_test with and without libbubblescope_cupti_handoff.so preloaded. Plays
// the collector (subscribes first, then offers the hand-over as cupti_injection.cc does) and
// prints one line per event for the test to compare.
#include <dlfcn.h>

#include <cstdio>
#include <cstring>

extern "C" int cuptiSubscribe(void*, void*, void*);
extern "C" int cuptiUnsubscribe(void*);
extern "C" int fake_cupti_calls();
extern "C" int fake_profiler_start();

namespace {

void HandOff(const char* taker) {
  const char* slash = std::strrchr(taker, '/');
  std::printf("hand-off to %s\n", slash == nullptr ? taker : slash + 1);
  cuptiUnsubscribe(nullptr);  // what the collector's ReleaseCupti does
}

}  // namespace

int main() {
  std::printf("collector subscribes: %d\n", cuptiSubscribe(nullptr, nullptr, nullptr));
  using Register = void (*)(void (*)(const char*));
  const auto register_hand_off =
      reinterpret_cast<Register>(dlsym(RTLD_DEFAULT, "bubblescope_cupti_handoff_register"));
  std::printf("hand-off offered: %s\n", register_hand_off != nullptr ? "yes" : "no");
  if (register_hand_off != nullptr) register_hand_off(HandOff);
  std::printf("profiler subscribes: %d\n", fake_profiler_start());
  std::printf("profiler subscribes again: %d\n", fake_profiler_start());
  std::printf("calls reaching CUPTI: %d\n", fake_cupti_calls());
  return 0;
}
