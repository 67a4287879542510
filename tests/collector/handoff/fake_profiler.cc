// Plays torch.profiler's Kineto: a library of its own that subscribes to CUPTI through the
// versioned reference (cuptiSubscribe_v2@libcupti.so.13) libtorch_cpu.so makes.
extern "C" int cuptiSubscribe_v2(void*, void*, void*, void*);

// Not a tail call (the volatile result), so the call returns into this library as Kineto's does.
extern "C" __attribute__((visibility("default"))) int fake_profiler_start() {
  volatile int result = cuptiSubscribe_v2(nullptr, nullptr, nullptr, nullptr);
  return result;
}
