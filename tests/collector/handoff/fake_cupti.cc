// A stand-in for libcupti.so.13 (same soname, same symbol version node): it accepts one
// subscriber at a time, as CUPTI before 13.2 does, and counts the calls.
extern "C" {

static int subscribers = 0;
static int calls = 0;

// CUPTI_SUCCESS and CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED.
static int Subscribe() {
  ++calls;
  if (subscribers > 0) return 39;
  ++subscribers;
  return 0;
}

int cuptiSubscribe(void*, void*, void*) { return Subscribe(); }
int cuptiSubscribe_v2(void*, void*, void*, void*) { return Subscribe(); }
int cuptiUnsubscribe(void*) {
  if (subscribers > 0) --subscribers;
  return 0;
}
int fake_cupti_calls() { return calls; }

}  // extern "C"
