// One pipeline stage of the generated job: turns the stage's program (step boundaries and 1F1B
// passes) into CPU ops, CUDA runtime calls and GPU ops on its Rank, advancing a CPU clock and one
// clock per GPU stream. Cross-rank waits go through a shared table of send completion times.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <random>
#include <string_view>
#include <vector>

#include "bubblescope/trace.h"
#include "generator_truth.h"
#include "pipeline_schedule.h"
#include "trace_generator.h"

namespace bubblescope::bench {

// When each stage's sends complete (index: step, pass, microbatch, sending stage); the matching
// receive on the neighbour cannot finish earlier.
class SendCompletions {
 public:
  SendCompletions(int steps, int microbatches, int stages);
  bool Known(int step, Pass pass, int microbatch, int sender) const;
  TimeNs Get(int step, Pass pass, int microbatch, int sender) const;
  void Set(int step, Pass pass, int microbatch, int sender, TimeNs end);

 private:
  size_t Index(int step, Pass pass, int microbatch, int sender) const;
  int microbatches_;
  int stages_;
  std::vector<TimeNs> ends_;
  std::vector<bool> known_;
};

class RankSimulator {
 public:
  RankSimulator(int stage, const GeneratorOptions& options);

  // Runs the next instruction of the program unless it waits for a send not yet simulated.
  // Returns true if it ran one.
  bool RunNext(SendCompletions* sends);
  bool done() const { return next_ == program_.size(); }

  // The finished rank (timelines and annotations sorted) and its truth. Call once, when done().
  Rank TakeRank();
  RankTruth Truth() const;

 private:
  enum class InstructionKind { kStepBegin, kPass, kStepEnd };
  struct Instruction {
    InstructionKind kind = InstructionKind::kStepBegin;
    int step = 0;
    PipelineOp op;
  };
  struct CpuOpSpec {
    std::string_view name;
    IntervalKind kind = IntervalKind::kCpuOp;
  };
  struct Launch {
    TimeNs runtime_end = 0;
    int64_t correlation = 0;
  };
  enum Stream { kComputeStream = 0, kCommStream = 1 };

  void BeginStep(int step);
  void RunPass(int step, PipelineOp op, SendCompletions* sends);
  void EndStep(int step);

  // Nested CPU ops ending in a runtime call; advances the CPU clock.
  Launch EmitLaunch(std::initializer_list<CpuOpSpec> chain, std::string_view runtime_name);
  // Places a GPU op on `stream` no earlier than `earliest`, lasting `duration` but not ending
  // before `min_end`.
  Interval PlaceDeviceOp(Stream stream, IntervalKind kind, std::string_view name, TimeNs earliest,
                         TimeNs duration, TimeNs min_end, int64_t correlation, uint32_t comm);
  Interval Kernel(std::initializer_list<CpuOpSpec> chain, std::string_view kernel_name,
                  TimeNs nominal, TimeNs not_before);
  Interval Copy(std::initializer_list<CpuOpSpec> chain, IntervalKind kind, std::string_view name,
                int64_t bytes, TimeNs not_before);
  Interval P2p(bool send, int peer, TimeNs not_before, TimeNs arrival);
  void SampleMemory(int64_t allocated_delta);
  TimeNs Jitter(TimeNs nominal);

  int stage_;
  const GeneratorOptions& options_;
  std::mt19937_64 rng_;
  Rank rank_;
  std::vector<Instruction> program_;
  size_t next_ = 0;
  std::vector<DeviceOp> device_ops_;
  TimeNs cpu_now_;
  TimeNs stream_free_[2];
  TimeNs step_start_ = 0;
  int64_t next_correlation_;
  int64_t allocated_bytes_;
  int64_t reserved_bytes_ = 0;
  int64_t peak_allocated_ = -1;
  int64_t peak_reserved_ = -1;
};

}  // namespace bubblescope::bench
