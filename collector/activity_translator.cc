#include "activity_translator.h"

#include <cxxabi.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "chrome_json.h"
#include "collector_config.h"
#include "text/json_string.h"

namespace bubblescope::collector {
namespace {

int64_t Ns(uint64_t t) { return static_cast<int64_t>(t); }
int64_t Duration(uint64_t start, uint64_t end) { return end > start ? Ns(end - start) : 0; }

// Kineto's spelling of memory kinds in memcpy names ("Memcpy HtoD (Pinned -> Device)").
std::string_view MemoryKindName(uint32_t kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE:
      return "Pageable";
    case CUPTI_ACTIVITY_MEMORY_KIND_PINNED:
      return "Pinned";
    case CUPTI_ACTIVITY_MEMORY_KIND_DEVICE:
      return "Device";
    case CUPTI_ACTIVITY_MEMORY_KIND_ARRAY:
      return "Array";
    case CUPTI_ACTIVITY_MEMORY_KIND_MANAGED:
      return "Managed";
    case CUPTI_ACTIVITY_MEMORY_KIND_DEVICE_STATIC:
      return "Device Static";
    case CUPTI_ACTIVITY_MEMORY_KIND_MANAGED_STATIC:
      return "Managed Static";
    default:
      return "Unknown";
  }
}

std::string_view CopyKindName(uint32_t kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD:
      return "HtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH:
      return "DtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOA:
      return "HtoA";
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOH:
      return "AtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOA:
      return "AtoA";
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOD:
      return "AtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOA:
      return "DtoA";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD:
      return "DtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH:
      return "HtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP:
      return "PtoP";
    default:
      return "Unknown";
  }
}

// The GPU placement and correlation args every device event carries.
// "[x,y,z]". Appended piece by piece: GCC 12's -Wrestrict misreads `"[" + std::to_string(x)` at
// -O3 as an overlapping copy.
std::string IntTriple(int64_t x, int64_t y, int64_t z) {
  std::string out = "[";
  out += std::to_string(x);
  out += ',';
  out += std::to_string(y);
  out += ',';
  out += std::to_string(z);
  out += ']';
  return out;
}

void GpuArgs(ChromeEvent& event, uint32_t device, uint32_t context, uint32_t stream,
             uint32_t correlation) {
  event.Args()
      .Int("device", device)
      .Int("context", context)
      .Int("stream", stream)
      .Int("correlation", correlation);
}

const char* OrEmpty(const char* text) { return text == nullptr ? "" : text; }

// Kernel names as Kineto writes them: demangled ("_Z4gemmPfi" -> "gemm(float*, int)"); names
// that are not mangled, or do not demangle, stay as they are.
std::string KernelName(const char* name) {
  if (name == nullptr) return "";
  if (name[0] != '_' || name[1] != 'Z') return name;
  int status = 0;
  char* demangled = abi::__cxa_demangle(name, nullptr, nullptr, &status);
  std::string out = status == 0 && demangled != nullptr ? demangled : name;
  std::free(demangled);
  return out;
}

}  // namespace

void ActivityTranslator::Translate(const CUpti_Activity& record, std::string* out) {
  const size_t before = out->size();
  switch (record.kind) {
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
      if (Enabled(kKindKernel)) Kernel(reinterpret_cast<const KernelRecord&>(record), out);
      break;
    case CUPTI_ACTIVITY_KIND_MEMCPY:
      if (Enabled(kKindMemcpy)) Memcpy(reinterpret_cast<const MemcpyRecord&>(record), out);
      break;
    case CUPTI_ACTIVITY_KIND_MEMSET:
      if (Enabled(kKindMemset)) Memset(reinterpret_cast<const MemsetRecord&>(record), out);
      break;
    case CUPTI_ACTIVITY_KIND_RUNTIME:
      if (Enabled(kKindRuntime)) Api(reinterpret_cast<const ApiRecord&>(record), false, out);
      break;
    case CUPTI_ACTIVITY_KIND_DRIVER:
      if (Enabled(kKindDriver)) Api(reinterpret_cast<const ApiRecord&>(record), true, out);
      break;
    case CUPTI_ACTIVITY_KIND_MARKER:
      if (Enabled(kKindNvtx)) Marker(reinterpret_cast<const MarkerRecord&>(record), out);
      break;
    case CUPTI_ACTIVITY_KIND_MARKER_DATA:
      if (Enabled(kKindNvtx)) MarkerData(reinterpret_cast<const MarkerDataRecord&>(record));
      break;
    case CUPTI_ACTIVITY_KIND_MEMORY2:
      if (Enabled(kKindMemory)) Memory(reinterpret_cast<const MemoryRecord&>(record), out);
      break;
    case CUPTI_ACTIVITY_KIND_DEVICE:
      Device(reinterpret_cast<const DeviceRecord&>(record), out);
      break;
    default:
      break;
  }
  if (out->size() > before) {
    ++counts_.events;
  } else if (record.kind != CUPTI_ACTIVITY_KIND_MARKER &&
             record.kind != CUPTI_ACTIVITY_KIND_MARKER_DATA) {
    ++counts_.skipped;  // range starts and marker data are kept for later, not skipped
  }
}

void ActivityTranslator::Kernel(const KernelRecord& kernel, std::string* out) {
  ChromeEvent event(out, "X", "kernel", KernelName(kernel.name));
  event.Int("pid", kernel.deviceId)
      .Int("tid", kernel.streamId)
      .Micros("ts", Ns(kernel.start))
      .Micros("dur", Duration(kernel.start, kernel.end));
  GpuArgs(event, kernel.deviceId, kernel.contextId, kernel.streamId, kernel.correlationId);
  event.Int("registers per thread", kernel.registersPerThread)
      .Int("shared memory", int64_t{kernel.staticSharedMemory} + kernel.dynamicSharedMemory)
      .Raw("grid", IntTriple(kernel.gridX, kernel.gridY, kernel.gridZ))
      .Raw("block", IntTriple(kernel.blockX, kernel.blockY, kernel.blockZ))
      .Finish();
}

void ActivityTranslator::Memcpy(const MemcpyRecord& memcpy, std::string* out) {
  const std::string name = "Memcpy " + std::string(CopyKindName(memcpy.copyKind)) + " (" +
                           std::string(MemoryKindName(memcpy.srcKind)) + " -> " +
                           std::string(MemoryKindName(memcpy.dstKind)) + ")";
  ChromeEvent event(out, "X", "gpu_memcpy", name);
  event.Int("pid", memcpy.deviceId)
      .Int("tid", memcpy.streamId)
      .Micros("ts", Ns(memcpy.start))
      .Micros("dur", Duration(memcpy.start, memcpy.end));
  GpuArgs(event, memcpy.deviceId, memcpy.contextId, memcpy.streamId, memcpy.correlationId);
  event.Int("bytes", static_cast<int64_t>(memcpy.bytes)).Finish();
}

void ActivityTranslator::Memset(const MemsetRecord& memset, std::string* out) {
  const std::string name = "Memset (" + std::string(MemoryKindName(memset.memoryKind)) + ")";
  ChromeEvent event(out, "X", "gpu_memset", name);
  event.Int("pid", memset.deviceId)
      .Int("tid", memset.streamId)
      .Micros("ts", Ns(memset.start))
      .Micros("dur", Duration(memset.start, memset.end));
  GpuArgs(event, memset.deviceId, memset.contextId, memset.streamId, memset.correlationId);
  event.Int("bytes", static_cast<int64_t>(memset.bytes)).Finish();
}

void ActivityTranslator::Api(const ApiRecord& api, bool is_driver, std::string* out) {
  const std::string name =
      options_.api_name ? options_.api_name(is_driver, api.cbid)
                        : std::string(is_driver ? "cuda_driver_cbid_" : "cuda_runtime_cbid_") +
                              std::to_string(api.cbid);
  ChromeEvent(out, "X", is_driver ? "cuda_driver" : "cuda_runtime", name)
      .Int("pid", api.processId)
      .Int("tid", api.threadId)
      .Micros("ts", Ns(api.start))
      .Micros("dur", Duration(api.start, api.end))
      .Args()
      .Int("cbid", api.cbid)
      .Int("correlation", api.correlationId)
      .Finish();
}

void ActivityTranslator::Marker(const MarkerRecord& marker, std::string* out) {
  if (marker.flags & CUPTI_ACTIVITY_FLAG_MARKER_START) {
    if (open_ranges_.size() >= options_.max_open_ranges) {
      ++counts_.dropped_ranges;
      return;
    }
    OpenRange& range = open_ranges_[marker.id];
    range.name = OrEmpty(marker.name);
    range.domain = OrEmpty(marker.domain);
    range.start = marker.timestamp;
    const bool on_thread = marker.objectKind == CUPTI_ACTIVITY_OBJECT_THREAD;
    range.pid = on_thread ? marker.objectId.pt.processId : 0;
    range.tid = on_thread ? marker.objectId.pt.threadId : 0;
    return;
  }
  if (!(marker.flags & CUPTI_ACTIVITY_FLAG_MARKER_END)) {
    ++counts_.skipped;  // instantaneous marks and sync markers: no duration to model
    return;
  }
  const auto it = open_ranges_.find(marker.id);
  if (it == open_ranges_.end()) {
    ++counts_.unmatched_range_ends;
    return;
  }
  const OpenRange& range = it->second;
  ChromeEvent event(out, "X", "user_annotation", range.name);
  event.Int("pid", range.pid)
      .Int("tid", range.tid)
      .Micros("ts", Ns(range.start))
      .Micros("dur", Duration(range.start, marker.timestamp))
      .Args();
  if (!range.domain.empty()) event.Text("domain", range.domain);
  if (range.has_color) event.Int("color", range.color);
  event.Finish();
  open_ranges_.erase(it);
}

void ActivityTranslator::MarkerData(const MarkerDataRecord& data) {
  const auto it = open_ranges_.find(data.id);
  if (it == open_ranges_.end() || !(data.flags & CUPTI_ACTIVITY_FLAG_MARKER_COLOR_ARGB)) return;
  it->second.color = data.color;
  it->second.has_color = true;
}

void ActivityTranslator::Memory(const MemoryRecord& memory, std::string* out) {
  if (memory.memoryKind != CUPTI_ACTIVITY_MEMORY_KIND_DEVICE) {
    ++counts_.skipped;  // host and managed memory: the model holds device memory only
    return;
  }
  const int64_t bytes = static_cast<int64_t>(memory.bytes);
  int64_t& live = device_bytes_[memory.deviceId];
  int64_t change = 0;
  if (memory.memoryOperationType == CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION) {
    change = bytes;
  } else if (memory.memoryOperationType == CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE) {
    change = -std::min(bytes, live);  // never below zero, even after a missed allocation
  } else {
    ++counts_.skipped;
    return;
  }
  live += change;
  // Device allocations are what the process holds from the driver: Kineto's "reserved". With no
  // caching allocator in between, they are also what is allocated.
  ChromeEvent(out, "i", "[memory]", "[memory]")
      .Text("s", "t")
      .Int("pid", memory.processId)
      .Int("tid", 0)
      .Micros("ts", Ns(memory.timestamp))
      .Args()
      .Int("Device Type", 1)
      .Int("Device Id", memory.deviceId)
      .Int("Addr", static_cast<int64_t>(memory.address))
      .Int("Bytes", change)
      .Int("Total Allocated", live)
      .Int("Total Reserved", live)
      .Finish();
}

void ActivityTranslator::Device(const DeviceRecord& device, std::string* out) {
  std::string properties = "[{\"id\":" + std::to_string(device.id) + ",\"name\":";
  text::AppendJsonString(OrEmpty(device.name), &properties);
  properties += ",\"totalGlobalMem\":" + std::to_string(device.globalMemorySize) +
                ",\"computeMajor\":" + std::to_string(device.computeCapabilityMajor) +
                ",\"computeMinor\":" + std::to_string(device.computeCapabilityMinor) +
                ",\"numSms\":" + std::to_string(device.numMultiprocessors) + "}]";
  ChromeEvent(out, "M", "", "bubblescope_process")
      .Int("pid", options_.pid)
      .Int("tid", 0)
      .Args()
      .Raw("deviceProperties", properties)
      .Finish();
}

}  // namespace bubblescope::collector
