// The collector of one process: its config, trace file, record translator, CUPTI buffer pool and
// NCCL p2p bookkeeping, and the thread that flushes them every BUBBLESCOPE_FLUSH_MS (and, with
// BUBBLESCOPE_FLUSH_ON_STEP=1, whenever a ProfilerStep#N range opens). Both entry
// points share it: CUDA's injection (cupti_injection.cc, GPU-only) and NCCL's profiler plugin
// (nccl_plugin.cc). What would call CUPTI comes in as hooks, so everything here runs on the CPU.
//
// The job comes first: a failure to start prints the one line
// "bubblescope collector: disabled: <why>" to stderr and leaves the collector off; nothing here
// throws or aborts.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "activity_buffer.h"
#include "activity_translator.h"
#include "collector_config.h"
#include "comm_rank_directory.h"
#include "nccl_p2p_tracker.h"
#include "trace_writer.h"

namespace bubblescope::collector {

struct RuntimeHooks {
  // Nanoseconds on the clock every record uses (CUPTI's on a GPU machine). Unset: CLOCK_REALTIME.
  std::function<int64_t()> clock;
  std::string clock_source = "realtime";
  // Asks CUPTI to hand over its completed buffers (forced: also the partly filled ones).
  std::function<void(bool forced)> flush_activity;
  // Turns CUPTI recording on or off (BUBBLESCOPE_START).
  std::function<void(bool on)> set_recording;
  ApiNameResolver api_name;
  // Set when another CUPTI client (torch.profiler's Kineto, Nsight Systems) holds CUPTI: what
  // CUPTI calls it ("" when it does not say). The collector then records only what needs no
  // CUPTI (NCCL transfers), says so in one line, and writes a "bubblescope_cupti_unavailable"
  // metadata event rather than an empty trace.
  std::optional<std::string> cupti_held_by;
  // Gives CUPTI up for good (recording off, the subscriber released), so that another client can
  // subscribe: see CollectorRuntime::HandOffCupti.
  std::function<void()> release_cupti;
  // Walks the buffers QueueBuffer queued (CUPTI's cuptiActivityGetNextRecord on a GPU).
  std::shared_ptr<RecordCursor> cursor;
};

// The one line printed when another CUPTI client holds CUPTI: who, and what is and is not
// recorded of `kinds` (a KindBit mask).
std::string CuptiHeldNotice(const std::string& held_by, uint32_t kinds);
// The one line printed when the collector hands CUPTI over to `taker` (HandOffCupti).
std::string CuptiHandOffNotice(const std::string& taker, uint32_t kinds);

// The one line printed (by rank 0, or a process of unknown rank) when a BUBBLESCOPE_LIMIT cap
// stops recording: which cap, and that the rest of the run is not recorded.
std::string LimitReachedNotice(const RecordingLimit& limit, bool bytes_reached);

// Counts of what the collector could not record, written into the trace as the args of a
// "bubblescope_dropped" metadata event whenever they change.
struct DroppedCounts {
  uint64_t cupti_records = 0;    // records CUPTI dropped (no buffer, or a full one)
  uint64_t buffer_requests = 0;  // CUPTI buffer requests refused at the cap
  uint64_t nvtx_ranges = 0;      // NVTX starts over the open-range cap
  uint64_t nccl_events = 0;      // NCCL events over the live-event cap
  bool operator==(const DroppedCounts&) const = default;
};

class CollectorRuntime {
 public:
  // The process-wide collector.
  static CollectorRuntime& Instance();

  // Starts recording: reads the config and identity from `env`, creates the trace file and the
  // flush thread. Returns true if running (also when already running). On failure prints the
  // "disabled" line once and returns false.
  bool Start(const EnvLookup& env, RuntimeHooks hooks);
  // Start() from the process environment with default hooks, unless already started or refused.
  bool EnsureStarted();
  bool running() const { return running_.load(); }

  // Translates the buffer's records now, adds CUPTI's dropped count, and returns the buffer to
  // the pool.
  void ConsumeBuffer(uint8_t* buffer, size_t valid_bytes, RecordCursor& cursor,
                     uint64_t cupti_dropped);
  // The buffer-completed callback's work: queues the buffer for the flush thread, which
  // translates it with `hooks.cursor` (ConsumeBuffer) at once, and returns. CUPTI calls back on
  // its own thread while the job launches work; translating there (a 4 MiB buffer is ~40,000
  // records) held the job's launches up.
  void QueueBuffer(uint8_t* buffer, size_t valid_bytes, uint64_t cupti_dropped);
  // For the buffer-requested callback; nullptr when the cap is reached.
  BufferPool* pool() { return pool_.get(); }
  // NCCL bookkeeping, nullptr when not running or the nccl kind is off.
  NcclP2pTracker* nccl() { return Active() ? nccl_.get() : nullptr; }
  EventSink* sink() { return writer_.get(); }

  // Whether an NCCL transfer starting now is recorded: inside the recording window (when CUPTI
  // tells the collector where that is: the window follows CUPTI's callbacks), never once a
  // BUBBLESCOPE_LIMIT cap has stopped recording.
  bool RecordingTransfers() const;

  // cudaProfilerStart / cudaProfilerStop seen (BUBBLESCOPE_START=profiler-api).
  void OnProfilerApi(bool start);
  // An NVTX range named `name` opened (BUBBLESCOPE_START=steps:A:B): recording follows the step
  // window (StepWindowChange); with BUBBLESCOPE_FLUSH_ON_STEP=1, a ProfilerStep#N range also asks
  // the flush thread for a flush. Called on the job's own thread (CUPTI's NVTX callback), so it
  // never waits for a flush: it sets a flag and wakes the flush thread. Thread-safe.
  void OnRangeStart(std::string_view name);
  // Another CUPTI client (`taker`: the library that asked, torch.profiler's Kineto in
  // libtorch_cpu.so, say) wants CUPTI while the collector holds it, and CUPTI allows one: the
  // collector hands CUPTI's last buffers to the trace and releases CUPTI, so the user's profiler
  // works. Everything CUPTI would have recorded from then on is in that profiler's trace, not this
  // one; the trace says so in a "bubblescope_cupti_handed_off" metadata event, and one line goes
  // to stderr. NCCL transfers are still recorded. Once per process; thread-safe.
  void HandOffCupti(const std::string& taker);
  // Hands over CUPTI's buffers, writes finished NCCL records and dropped counts, flushes the file.
  void Flush(bool forced);
  // Stops recording for good when a BUBBLESCOPE_LIMIT cap is reached (`now` on the steady
  // clock): the trace then says which, in a "bubblescope_window" metadata event, and rank 0 (or
  // a process of unknown rank) says so in one line. The flush thread calls it after each flush.
  void EnforceLimit(std::chrono::steady_clock::time_point now);
  // Final flush, closing bracket, file closed; Start() may run again afterwards.
  void Shutdown();

  const CollectorConfig& config() const { return config_; }
  std::string trace_path() const;
  DroppedCounts dropped() const;

  // Prints "bubblescope collector: disabled: <reason>" to stderr, once per process.
  static void Disable(const std::string& reason);

 private:
  CollectorRuntime() = default;
  // Running, and in the process that started it: a child forked from the job (a data-loader
  // worker) inherits this object but neither the flush thread nor the file, and must not touch
  // them, not even from its atexit handlers.
  bool Active() const;
  // Active and CUPTI not handed off: CUPTI hooks may be called.
  bool OwnsCupti() const { return Active() && !cupti_handed_off_.load(); }
  void FlushLoop();
  // Wakes the flush thread for a flush now, whatever the timer says; returns at once.
  void RequestFlush();
  // Translates every queued buffer (QueueBuffer).
  void TranslateQueued();
  std::string ProcessEvent(const ProcessIdentity& identity) const;
  void WriteDroppedIfChanged();
  // Notes recording on or off (the state, when it first began, the transfers' switch); called
  // with window_mutex_ held. The caller then calls hooks_.set_recording(on): inside the lock from
  // CUPTI's callbacks, so that their switches keep their order; after it from the flush thread,
  // which never holds the lock while it calls into CUPTI.
  void NoteRecordingLocked(bool on);

  std::mutex lifecycle_mutex_;  // Start / Shutdown
  std::atomic<bool> running_{false};
  std::atomic<bool> refused_{false};
  std::atomic<bool> cupti_handed_off_{false};
  CollectorConfig config_;
  RuntimeHooks hooks_;
  int64_t pid_ = 0;
  std::unique_ptr<TraceWriter> writer_;
  std::unique_ptr<BufferPool> pool_;
  std::unique_ptr<CommRankDirectory> directory_;
  std::unique_ptr<NcclP2pTracker> nccl_;
  std::mutex translate_mutex_;
  std::unique_ptr<ActivityTranslator> translator_;
  std::atomic<uint64_t> cupti_dropped_{0};
  std::mutex window_mutex_;
  bool window_recording_ = false;      // recording now
  bool window_opened_ = false;         // kSteps: a step of the window was seen
  std::optional<int64_t> first_step_;  // kSteps: the first ProfilerStep#N number seen
  // When recording first turned on (the time cap counts from it); unset before.
  std::optional<std::chrono::steady_clock::time_point> recording_since_;
  std::atomic<bool> transfers_on_{false};   // RecordingTransfers()
  std::atomic<bool> limit_reached_{false};  // a cap stopped recording for good
  int32_t rank_ = -1;
  DroppedCounts last_written_;
  std::mutex flush_mutex_;
  struct QueuedBuffer {
    uint8_t* buffer;
    size_t valid_bytes;
  };
  std::mutex queue_mutex_;
  std::vector<QueuedBuffer> queued_;
  std::mutex loop_mutex_;
  std::condition_variable loop_wake_;
  bool stop_loop_ = false;
  bool translate_requested_ = false;
  bool flush_requested_ = false;  // RequestFlush: a step began (BUBBLESCOPE_FLUSH_ON_STEP)
  std::thread flush_thread_;
};

}  // namespace bubblescope::collector
