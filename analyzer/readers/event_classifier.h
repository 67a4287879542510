// What a Kineto event is, by its category: which model kind it becomes. What its name says (which
// kernels and CPU ops are communication, and of what kind) is the same for every format:
// bubblescope/op_names.h.
#pragma once

#include <cstdint>
#include <string_view>

namespace bubblescope::kineto {

enum class EventCategory : uint8_t {
  kAbsent,  // no "cat" field (bare-array traces written by torch without Kineto)
  kKernel,
  kMemcpy,
  kMemset,
  kRuntime,  // cuda_runtime / cuda_driver
  kCpuOp,
  kUserAnnotation,     // CPU record_function ranges
  kGpuUserAnnotation,  // the same ranges projected onto a GPU stream
  kFlow,               // ac2g: links a launch to its GPU op
  kMemory,             // "[memory]" instant events
  kOther,              // anything bubblescope does not model
};

// Maps the still-escaped "cat" string. Also accepts the capitalised names older Kineto wrote
// ("Kernel", "Runtime", "Operator", "Memcpy", "Memset").
EventCategory ClassifyCategory(std::string_view cat);

}  // namespace bubblescope::kineto
