// Turns CUPTI activity records into Chrome-trace events with Kineto's categories and args, so the
// analyzer's reader reads them as it reads a PyTorch profiler trace. Plain C++: it reads record
// structs and never calls CUPTI (API names come from a resolver the caller supplies).
//
// Events (ts/dur in microseconds with three decimals, exact nanoseconds):
//   CONCURRENT_KERNEL -> "X" cat "kernel", pid device, tid stream, name demangled
//   MEMCPY / MEMSET   -> "X" cat "gpu_memcpy" / "gpu_memset", pid device, tid stream
//   RUNTIME / DRIVER  -> "X" cat "cuda_runtime" / "cuda_driver", pid/tid of the calling thread
//   MARKER ranges     -> "X" cat "user_annotation" (an NVTX start/end or push/pop pair, joined by
//                        id; instantaneous marks are skipped)
//   MEMORY2 (device)  -> "i" cat "[memory]" with the running "Total Allocated"/"Total Reserved"
//   DEVICE            -> "M" "bubblescope_process" whose args hold "deviceProperties" (Kineto's
//                        fields), which the reader adds to the rank's devices
// GPU events carry args device, stream, correlation (the launch's correlation id).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "cupti_records.h"

namespace bubblescope::collector {

// Name of a runtime (is_driver false) or driver API call from its callback id.
using ApiNameResolver = std::function<std::string(bool is_driver, uint32_t cbid)>;

struct TranslatorOptions {
  uint32_t kinds = 0xFFFFFFFFu;    // KindBit mask (collector_config.h)
  ApiNameResolver api_name;        // unset: "cuda_runtime_cbid_N" / "cuda_driver_cbid_N"
  size_t max_open_ranges = 65536;  // NVTX starts waiting for their end, beyond which starts drop
  int64_t pid = 0;                 // of this process, for metadata events
};

struct TranslatorCounts {
  uint64_t events = 0;          // events written
  uint64_t skipped = 0;         // records of a kind switched off, or not modelled
  uint64_t dropped_ranges = 0;  // NVTX starts dropped at the open-range cap
  uint64_t unmatched_range_ends = 0;
};

class ActivityTranslator {
 public:
  explicit ActivityTranslator(TranslatorOptions options) : options_(std::move(options)) {}

  // Appends the events of one record to `*out` (none for a skipped record or a range start).
  void Translate(const CUpti_Activity& record, std::string* out);

  const TranslatorCounts& counts() const { return counts_; }

 private:
  struct OpenRange {
    std::string name;
    std::string domain;
    uint64_t start = 0;
    uint32_t pid = 0;
    uint32_t tid = 0;
    uint32_t color = 0;
    bool has_color = false;
  };

  bool Enabled(uint32_t bit) const { return (options_.kinds & bit) != 0; }
  void Kernel(const KernelRecord& kernel, std::string* out);
  void Memcpy(const MemcpyRecord& memcpy, std::string* out);
  void Memset(const MemsetRecord& memset, std::string* out);
  void Api(const ApiRecord& api, bool is_driver, std::string* out);
  void Marker(const MarkerRecord& marker, std::string* out);
  void MarkerData(const MarkerDataRecord& data);
  void Memory(const MemoryRecord& memory, std::string* out);
  void Device(const DeviceRecord& device, std::string* out);

  TranslatorOptions options_;
  TranslatorCounts counts_;
  std::unordered_map<uint32_t, OpenRange> open_ranges_;  // by marker id
  std::unordered_map<uint32_t, int64_t> device_bytes_;   // live device bytes by device
};

}  // namespace bubblescope::collector
