// Fuzz target for the collector's output path: CUPTI activity records (the real CUPTI structs
// the collector is built against, cupti_records.h) laid into a buffer as CUPTI lays them, walked
// and translated as the buffer-completed callback does (ConsumeActivityBuffer), appended to a
// TraceWriter file, then read back by the loader and the Kineto reader. Built only where the
// collector is (CUDA toolkit with CUPTI), like the collector tests.
//
// Input (fuzz_input.h): records from the front, each a selector byte (its kind: kernel, memcpy,
// memset, memory, NVTX marker, marker data, runtime API, driver API, device, or one CUPTI's walk
// cannot size, which ends the buffer) and then the record's bytes as CUPTI would have written
// them. From the end: whether the records are plausible (times within 2^40 ns of a 2023 epoch,
// small device ids, sizes below 2^40, as CUPTI writes them) or left as they came; the enabled
// kinds (BUBBLESCOPE_KINDS bits); the open NVTX range cap (1 to 8); where the records split
// into two buffers with a flush between them; whether the file is closed (else it ends as a
// killed process leaves it); and up to four strings that the records' name pointers point to
// (the pointer's low byte picks one, or null). Enum fields the translator reads are kept within
// their enum's range, as CUPTI keeps them; the pointers are never followed as written.
//
// Checks: the file reads back and keeps the model's promises (CheckRank), unless no event it holds
// is usable (metadata alone, which the reader refuses by design, or, from records left as they
// came, only damaged events): then the error is the reader's one-line "no usable trace events".
// With plausible records, it reads back without an import warning and with one GPU or API
// interval per kernel, memcpy, memset, runtime and driver record the enabled kinds translate.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "activity_buffer.h"
#include "chrome_json.h"
#include "collector/record_layout.h"
#include "collector_config.h"
#include "fuzz_checks.h"
#include "fuzz_input.h"
#include "loader/trace_loader.h"
#include "trace_writer.h"

namespace {

using namespace bubblescope;             // NOLINT(build/namespaces): a fuzz target's helpers
using namespace bubblescope::collector;  // NOLINT(build/namespaces)
using collector::testing::AlignUp;
using collector::testing::RecordSize;

constexpr uint64_t kEpochNs = 1'700'000'000'000'000'000;
constexpr uint64_t kPlausibleSpan = uint64_t{1} << 40;

constexpr CUpti_ActivityKind kKinds[] = {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
                                         CUPTI_ACTIVITY_KIND_MEMCPY,
                                         CUPTI_ACTIVITY_KIND_MEMSET,
                                         CUPTI_ACTIVITY_KIND_MEMORY2,
                                         CUPTI_ACTIVITY_KIND_MARKER,
                                         CUPTI_ACTIVITY_KIND_MARKER_DATA,
                                         CUPTI_ACTIVITY_KIND_RUNTIME,
                                         CUPTI_ACTIVITY_KIND_DRIVER,
                                         CUPTI_ACTIVITY_KIND_DEVICE,
                                         CUPTI_ACTIVITY_KIND_OVERHEAD};  // last: not sizable

struct Choices {
  bool plausible = true;
  uint32_t kinds = 0;
  std::vector<std::string> strings;  // what name pointers point to
};

// A 32-bit enum field as CUPTI writes it: within its enum's range (every CUPTI enum ends with a
// FORCE_INT = 0x7fffffff enumerator), so the translator's reads of it are defined.
template <typename Enum>
void KeepInRange(Enum* field) {
  static_assert(sizeof(Enum) == sizeof(uint32_t));
  uint32_t value = 0;
  std::memcpy(&value, field, sizeof(value));
  value &= 0x7fffffffu;
  std::memcpy(field, &value, sizeof(value));
}

// A name pointer as the record's bytes choose it: one of the strings or null.
const char* Name(const void* raw_pointer, const Choices& choices) {
  uint8_t low = 0;
  std::memcpy(&low, raw_pointer, 1);
  const size_t pick = low % (choices.strings.size() + 1);
  return pick < choices.strings.size() ? choices.strings[pick].c_str() : nullptr;
}

void Time(uint64_t* ns) { *ns = kEpochNs + *ns % kPlausibleSpan; }
void Size(uint64_t* bytes) { *bytes %= kPlausibleSpan; }

// Makes `record` (its bytes straight from the input) what CUPTI could have written.
void Shape(CUpti_Activity* record, const Choices& choices) {
  const bool p = choices.plausible;
  switch (record->kind) {
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
      auto* kernel = reinterpret_cast<KernelRecord*>(record);
      kernel->name = Name(&kernel->name, choices);
      if (p) {
        Time(&kernel->start);
        Time(&kernel->end);
        kernel->deviceId %= 8;
      }
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
      auto* memcpy = reinterpret_cast<MemcpyRecord*>(record);
      if (p) {
        Time(&memcpy->start);
        Time(&memcpy->end);
        Size(&memcpy->bytes);
        memcpy->deviceId %= 8;
      }
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
      auto* memset = reinterpret_cast<MemsetRecord*>(record);
      if (p) {
        Time(&memset->start);
        Time(&memset->end);
        Size(&memset->bytes);
        memset->deviceId %= 8;
      }
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMORY2: {
      auto* memory = reinterpret_cast<MemoryRecord*>(record);
      KeepInRange(&memory->memoryOperationType);
      KeepInRange(&memory->memoryKind);
      memory->name = nullptr;
      if (p) {
        Time(&memory->timestamp);
        Size(&memory->bytes);
        memory->deviceId %= 8;
      }
      break;
    }
    case CUPTI_ACTIVITY_KIND_MARKER: {
      auto* marker = reinterpret_cast<MarkerRecord*>(record);
      KeepInRange(&marker->flags);
      KeepInRange(&marker->objectKind);
      marker->name = Name(&marker->name, choices);
      marker->domain = Name(&marker->domain, choices);
      if (p) Time(&marker->timestamp);
      break;
    }
    case CUPTI_ACTIVITY_KIND_MARKER_DATA:
      KeepInRange(&reinterpret_cast<MarkerDataRecord*>(record)->flags);
      break;
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER: {
      auto* api = reinterpret_cast<ApiRecord*>(record);
      if (p) {
        Time(&api->start);
        Time(&api->end);
      }
      break;
    }
    case CUPTI_ACTIVITY_KIND_DEVICE: {
      auto* device = reinterpret_cast<DeviceRecord*>(record);
      device->name = Name(&device->name, choices);
      if (p) {
        device->id %= 8;
        Size(&device->globalMemorySize);
        device->numMultiprocessors %= 1024;
        device->computeCapabilityMajor %= 16;
        device->computeCapabilityMinor %= 16;
      }
      break;
    }
    default:
      break;
  }
}

// The records of `bytes` laid out as in a CUPTI buffer (8-byte words, so aligned as CUPTI's).
struct Buffer {
  std::vector<uint64_t> words;
  std::vector<size_t> starts;  // each record's offset
  std::vector<CUpti_ActivityKind> kinds;
  size_t used = 0;

  uint8_t* data() { return reinterpret_cast<uint8_t*>(words.data()); }
};

Buffer LayOut(std::string_view bytes, const Choices& choices) {
  Buffer buffer;
  while (!bytes.empty()) {
    const CUpti_ActivityKind kind = kKinds[static_cast<uint8_t>(bytes.front()) % std::size(kKinds)];
    bytes.remove_prefix(1);
    const size_t size = RecordSize(kind) == 0 ? sizeof(CUpti_Activity) : RecordSize(kind);
    buffer.words.resize((buffer.used + AlignUp(size)) / 8, 0);
    uint8_t* at = buffer.data() + buffer.used;
    std::memcpy(at, bytes.data(), std::min(size, bytes.size()));
    bytes.remove_prefix(std::min(size, bytes.size()));
    auto* record = reinterpret_cast<CUpti_Activity*>(at);
    record->kind = kind;
    Shape(record, choices);
    buffer.starts.push_back(buffer.used);
    buffer.kinds.push_back(kind);
    buffer.used += AlignUp(size);
  }
  return buffer;
}

// The BUBBLESCOPE_KINDS bit of a kind whose records become intervals; 0 for the others.
uint32_t IntervalKindBit(CUpti_ActivityKind kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
      return kKindKernel;
    case CUPTI_ACTIVITY_KIND_MEMCPY:
      return kKindMemcpy;
    case CUPTI_ACTIVITY_KIND_MEMSET:
      return kKindMemset;
    case CUPTI_ACTIVITY_KIND_RUNTIME:
      return kKindRuntime;
    case CUPTI_ACTIVITY_KIND_DRIVER:
      return kKindDriver;
    default:
      return 0;
  }
}

// What the two walks translate: kernel, memcpy, memset and API records of the enabled kinds
// (one interval each in the file) and device records (metadata, never a usable event). A walk
// stops at a record it cannot size.
struct Expected {
  uint64_t intervals = 0;
  uint64_t devices = 0;
};

void CountWalk(const Buffer& buffer, size_t first, size_t last, uint32_t enabled, Expected* out) {
  for (size_t i = first; i < last && RecordSize(buffer.kinds[i]) != 0; ++i) {
    if ((enabled & IntervalKindBit(buffer.kinds[i])) != 0) ++out->intervals;
    if (buffer.kinds[i] == CUPTI_ACTIVITY_KIND_DEVICE) ++out->devices;
  }
}

std::string ProcessEvent(int rank) {
  std::string out;
  ChromeEvent(&out, "M", "", "bubblescope_process")
      .Int("pid", 1234)
      .Int("tid", 0)
      .Args()
      .Raw("distributedInfo", absl::StrCat("{\"rank\":", rank, ",\"world_size\":8}"))
      .Finish();
  return out;
}

// Where the trace files go; removed at exit.
const std::string& WorkDirectory() {
  static const std::string* dir = [] {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") +
                          "/bubblescope-collector-fuzzer-XXXXXX";
    if (mkdtemp(pattern.data()) == nullptr) fuzz::Fail("cannot make a temporary directory");
    std::atexit([] {
      std::error_code ignored;
      std::filesystem::remove_all(WorkDirectory(), ignored);
    });
    return new std::string(pattern);
  }();
  return *dir;
}

size_t GpuAndApiIntervals(const Rank& rank) {
  size_t count = 0;
  for (const Timeline& timeline : rank.timelines) count += timeline.intervals.size();
  return count;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::FuzzInput input(data, size);
  Choices choices;
  choices.plausible = input.TakeInRange(0, 3) != 0;  // mostly: the records CUPTI writes
  choices.kinds = input.TakeByte();
  const size_t max_open_ranges = input.TakeInRange<size_t>(1, 8);
  const size_t split_byte = input.TakeByte();
  const bool close = input.TakeBool();
  const int strings = input.TakeInRange(0, 4);
  for (int i = 0; i < strings; ++i) choices.strings.push_back(input.TakeString(48));
  Buffer buffer = LayOut(input.rest(), choices);

  const std::string path = WorkDirectory() + "/trace.json";
  std::string error;
  std::unique_ptr<TraceWriter> writer = TraceWriter::Create(path, ProcessEvent(3), &error);
  if (writer == nullptr) fuzz::Fail("cannot create the trace file: " + error);
  TranslatorOptions translator_options;
  translator_options.kinds = choices.kinds;
  translator_options.max_open_ranges = max_open_ranges;
  translator_options.pid = 1234;
  ActivityTranslator translator(translator_options);
  // Two buffers, split between records, as CUPTI completes them one after the other.
  const size_t split = split_byte % (buffer.starts.size() + 1);
  const size_t split_at = split < buffer.starts.size() ? buffer.starts[split] : buffer.used;
  collector::testing::PackedRecordCursor cursor;
  ConsumeActivityBuffer(buffer.data(), split_at, cursor, translator, *writer);
  writer->Flush();
  ConsumeActivityBuffer(buffer.data() + split_at, buffer.used - split_at, cursor, translator,
                        *writer);
  Expected expected;
  CountWalk(buffer, 0, split, choices.kinds, &expected);
  CountWalk(buffer, split, buffer.kinds.size(), choices.kinds, &expected);
  writer->Flush();
  if (close) writer->Close();  // else the file ends as a process killed after its flush leaves it
  writer.reset();

  LoadOptions options;
  options.jobs = 1;
  options.max_file_bytes = int64_t{64} << 20;
  absl::StatusOr<Trace> trace = LoadTrace({path}, options);
  unlink(path.c_str());
  // A file of metadata alone is refused by design (docs/input-errors.md: no usable event), as is
  // one whose every event is damaged, which only records left as they came can give.
  const bool usable_written = translator.counts().events > expected.devices;
  if (!trace.ok()) {
    fuzz::CheckFileError(trace.status(), path);
    if (absl::StrContains(trace.status().message(), "no usable trace events") &&
        (!usable_written || !choices.plausible)) {
      return 0;
    }
    fuzz::Fail("the collector's trace does not read back: " + trace.status().ToString());
  }
  const Rank& rank = trace->ranks.front();
  fuzz::CheckRank(rank);
  if (!choices.plausible) return 0;
  if (rank.stats.HasAtLeast(Severity::kWarning)) {
    fuzz::Fail("plausible records read back with an import warning");
  }
  if (GpuAndApiIntervals(rank) != expected.intervals) {
    fuzz::Fail(absl::StrCat(expected.intervals, " kernel, memcpy, memset and API records ",
                            "read back as ", GpuAndApiIntervals(rank), " intervals"));
  }
  return 0;
}
