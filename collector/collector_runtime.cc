#include "collector_runtime.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <utility>

#include "chrome_json.h"
#include "text/json_string.h"

namespace bubblescope::collector {
namespace {

constexpr size_t kCuptiBufferBytes = size_t{4} << 20;

int64_t RealtimeNs() {
  timespec now{};
  clock_gettime(CLOCK_REALTIME, &now);
  return int64_t{now.tv_sec} * 1'000'000'000 + now.tv_nsec;
}

std::string HostName() {
  char host[256] = {};
  if (gethostname(host, sizeof(host) - 1) != 0) return "unknown-host";
  return host;
}

std::string_view StartName(StartMode mode) {
  switch (mode) {
    case StartMode::kImmediate:
      return "immediate";
    case StartMode::kProfilerApi:
      return "profiler-api";
    case StartMode::kAfterDelay:
      return "after";
    case StartMode::kSteps:
      return "steps";
  }
  return "immediate";
}

// What CUPTI would have recorded of `kinds`: everything but NCCL transfers.
uint32_t CuptiKinds(uint32_t kinds) { return kinds & ~uint32_t{kKindNccl}; }

std::string CuptiUnavailableEvent(const std::string& held_by, uint32_t kinds, int64_t pid) {
  std::string out;
  ChromeEvent(&out, "M", "", "bubblescope_cupti_unavailable")
      .Int("pid", pid)
      .Int("tid", 0)
      .Args()
      .Text("held_by", held_by)
      .Text("not_recorded", KindNames(CuptiKinds(kinds)))
      .Text("recorded", KindNames(kinds & kKindNccl))
      .Finish();
  return out;
}

std::string CuptiHandedOffEvent(const std::string& taker, uint32_t kinds, int64_t pid,
                                int64_t at_ns) {
  std::string out;
  ChromeEvent(&out, "M", "", "bubblescope_cupti_handed_off")
      .Int("pid", pid)
      .Int("tid", 0)
      .Args()
      .Text("to", taker)
      .Int("at_ns", at_ns)
      .Text("not_recorded_after", KindNames(CuptiKinds(kinds)))
      .Text("recorded", KindNames(kinds & kKindNccl))
      .Finish();
  return out;
}

}  // namespace

std::string CuptiHandOffNotice(const std::string& taker, uint32_t kinds) {
  std::string line = "bubblescope collector: another profiler asked for CUPTI";
  if (!taker.empty()) line += " (" + taker + ")";
  line += ": handed over; " + KindNames(CuptiKinds(kinds)) +
          " from here on are in its trace, not bubblescope's";
  line += (kinds & kKindNccl) ? "; NCCL transfers still recorded" : "";
  return line;
}

std::string CuptiHeldNotice(const std::string& held_by, uint32_t kinds) {
  std::string line = "bubblescope collector: CUPTI is held by another profiler";
  if (!held_by.empty()) line += " (" + held_by + ")";
  line += ": not recording " + KindNames(CuptiKinds(kinds)) + " in this process";
  line += (kinds & kKindNccl) ? "; NCCL transfers still recorded" : "";
  return line;
}

std::string LimitReachedNotice(const RecordingLimit& limit, bool bytes_reached) {
  const std::string setting = "BUBBLESCOPE_LIMIT=" + std::to_string(limit.max_bytes >> 20) + ":" +
                              std::to_string(limit.max_recording_ms / 1000);
  return std::string("bubblescope collector: recording stopped: ") +
         (bytes_reached ? "the trace reached " + std::to_string(limit.max_bytes >> 20) + " MiB"
                        : "it ran for " + std::to_string(limit.max_recording_ms / 1000) + " s") +
         " (" + setting + "); the rest of this process's run is not recorded";
}

CollectorRuntime& CollectorRuntime::Instance() {
  // Never destroyed: CUPTI and NCCL may call in during static destruction.
  static CollectorRuntime* runtime = new CollectorRuntime();
  return *runtime;
}

void CollectorRuntime::Disable(const std::string& reason) {
  static std::atomic<bool> printed{false};
  if (printed.exchange(true)) return;
  std::fprintf(stderr, "bubblescope collector: disabled: %s\n", reason.c_str());
}

std::string CollectorRuntime::ProcessEvent(const ProcessIdentity& identity) const {
  std::string distributed = "{";
  if (identity.rank >= 0) distributed += "\"rank\":" + std::to_string(identity.rank);
  if (identity.world_size >= 0) {
    if (distributed.size() > 1) distributed += ',';
    distributed += "\"world_size\":" + std::to_string(identity.world_size);
  }
  distributed += '}';
  std::string clock = "{\"source\":";
  text::AppendJsonString(hooks_.clock_source, &clock);
  clock +=
      ",\"unit\":\"ns\",\"realtime_offset_ns\":" + std::to_string(hooks_.clock() - RealtimeNs()) +
      "}";
  std::string collector = "{\"kinds\":" + std::to_string(config_.kinds) +
                          ",\"flush_ms\":" + std::to_string(config_.flush_ms) + ",\"start\":";
  text::AppendJsonString(StartName(config_.start), &collector);
  if (config_.start == StartMode::kSteps) {
    collector += ",\"first_step\":" + std::to_string(config_.first_step) +
                 ",\"last_step\":" + std::to_string(config_.last_step) +
                 ",\"steps_from\":" + (config_.steps_relative ? "\"first_seen\"" : "\"zero\"");
  } else if (config_.start == StartMode::kAfterDelay) {
    collector += ",\"start_delay_ms\":" + std::to_string(config_.start_delay_ms);
  }
  collector += ",\"max_bytes\":" + std::to_string(config_.limit.max_bytes) +
               ",\"max_recording_ms\":" + std::to_string(config_.limit.max_recording_ms);
  collector += ",\"buffer_cap_bytes\":" + std::to_string(config_.buffer_cap_bytes);
  // Only when on, so that the files of a plain run keep their metadata as it was.
  if (config_.flush_on_step) collector += ",\"flush_on_step\":true";
  collector += "}";
  std::string out;
  ChromeEvent event(&out, "M", "", "bubblescope_process");
  event.Int("pid", identity.pid)
      .Int("tid", 0)
      .Args()
      .Raw("distributedInfo", distributed)
      .Text("host", identity.host)
      .Int("pid", identity.pid)
      .Int("local_rank", identity.local_rank)
      .Raw("clock", clock)
      .Raw("collector", collector);
  if (!config_.run_id.empty()) event.Text("run_id", config_.run_id);
  event.Finish();
  return out;
}

bool CollectorRuntime::Start(const EnvLookup& env, RuntimeHooks hooks) {
  std::lock_guard<std::mutex> lock(lifecycle_mutex_);
  if (running_) return true;
  CollectorConfig config;
  std::string error;
  if (!ParseCollectorConfig(env, &config, &error)) {
    refused_ = true;
    Disable(error);
    return false;
  }
  if (!hooks.clock) hooks.clock = RealtimeNs;
  pid_ = getpid();
  const ProcessIdentity identity = ReadProcessIdentity(env, HostName(), pid_);
  config_ = config;
  hooks_ = std::move(hooks);
  const std::string path = config_.output_dir + "/" + TraceFileName(identity, config_.run_id);
  if (!MakeDirectories(config_.output_dir, &error) ||
      !(writer_ = TraceWriter::Create(path, ProcessEvent(identity), &error))) {
    refused_ = true;
    Disable(error);
    return false;
  }
  if (hooks_.cupti_held_by) {
    writer_->Append(CuptiUnavailableEvent(*hooks_.cupti_held_by, config_.kinds, pid_));
    static std::atomic<bool> printed{false};
    if (!printed.exchange(true)) {
      std::fprintf(stderr, "%s\n", CuptiHeldNotice(*hooks_.cupti_held_by, config_.kinds).c_str());
    }
  }
  pool_ = std::make_unique<BufferPool>(kCuptiBufferBytes, config_.buffer_cap_bytes);
  directory_ = std::make_unique<CommRankDirectory>(config_.output_dir);
  translator_ = std::make_unique<ActivityTranslator>(
      TranslatorOptions{.kinds = config_.kinds, .api_name = hooks_.api_name, .pid = pid_});
  nccl_.reset();
  if (config_.kinds & kKindNccl) {
    nccl_ = std::make_unique<NcclP2pTracker>(NcclTrackerOptions{.global_rank = identity.rank,
                                                                .pid = pid_,
                                                                .clock = hooks_.clock,
                                                                .directory = directory_.get()});
  }
  cupti_dropped_ = 0;
  cupti_handed_off_ = false;
  last_written_ = DroppedCounts();
  rank_ = identity.rank;
  {
    std::lock_guard<std::mutex> window_lock(window_mutex_);
    window_recording_ = false;
    window_opened_ = false;
    first_step_.reset();
    recording_since_.reset();
    limit_reached_ = false;
    // Without CUPTI's callbacks the window cannot be followed: transfers are recorded throughout.
    transfers_on_ = !hooks_.set_recording;
    if (RecordsFromStart(config_)) {
      NoteRecordingLocked(true);
      if (hooks_.set_recording) hooks_.set_recording(true);
    }
  }
  stop_loop_ = false;
  translate_requested_ = false;
  flush_requested_ = false;
  queued_.clear();
  running_ = true;
  flush_thread_ = std::thread([this] { FlushLoop(); });
  return true;
}

bool CollectorRuntime::EnsureStarted() {
  if (running_) return true;
  if (refused_) return false;
  return Start([](const char* name) { return std::getenv(name); }, RuntimeHooks());
}

bool CollectorRuntime::Active() const { return running_ && getpid() == pid_; }

void CollectorRuntime::FlushLoop() {
  const auto started = std::chrono::steady_clock::now();
  const auto period = std::chrono::milliseconds(config_.flush_ms);
  auto next_flush = started + period;
  bool delayed_start_done = config_.start != StartMode::kAfterDelay;
  std::unique_lock<std::mutex> lock(loop_mutex_);
  while (!stop_loop_) {
    loop_wake_.wait_until(lock, next_flush, [this] {
      return stop_loop_ || translate_requested_ || flush_requested_;
    });
    if (stop_loop_) break;
    translate_requested_ = false;
    const bool flush_asked = std::exchange(flush_requested_, false);
    lock.unlock();
    TranslateQueued();
    const auto now = std::chrono::steady_clock::now();
    const bool timer_due = now >= next_flush;
    // A flush a step asked for leaves the timer as it was: the timed flush still comes (it also
    // writes what the GPU finished after that step's flush, and starts the after:SECONDS window).
    if (flush_asked && !timer_due) {
      Flush(false);
      EnforceLimit(std::chrono::steady_clock::now());
    }
    if (timer_due) {
      if (!delayed_start_done &&
          now - started >= std::chrono::milliseconds(config_.start_delay_ms)) {
        delayed_start_done = true;
        // Under the flush lock, which HandOffCupti holds while it releases CUPTI: recording is
        // never switched on after the hand-over. The window lock is not held around CUPTI
        // (see NoteRecordingLocked).
        std::lock_guard<std::mutex> flush_lock(flush_mutex_);
        bool start = false;
        {
          std::lock_guard<std::mutex> window_lock(window_mutex_);
          start = !limit_reached_ && !cupti_handed_off_;
          if (start) NoteRecordingLocked(true);
        }
        if (start && hooks_.set_recording) hooks_.set_recording(true);
      }
      Flush(false);
      EnforceLimit(std::chrono::steady_clock::now());
      next_flush = now + period;
    }
    lock.lock();
  }
}

void CollectorRuntime::RequestFlush() {
  {
    std::lock_guard<std::mutex> lock(loop_mutex_);  // held by the flush thread only to wait
    flush_requested_ = true;
  }
  loop_wake_.notify_one();
}

void CollectorRuntime::QueueBuffer(uint8_t* buffer, size_t valid_bytes, uint64_t cupti_dropped) {
  cupti_dropped_ += cupti_dropped;
  if (!Active() || buffer == nullptr || !hooks_.cursor) {
    if (pool_) pool_->Release(buffer);
    return;
  }
  {
    std::lock_guard<std::mutex> lock(queue_mutex_);
    queued_.push_back(QueuedBuffer{buffer, valid_bytes});
  }
  {
    std::lock_guard<std::mutex> lock(loop_mutex_);
    translate_requested_ = true;
  }
  loop_wake_.notify_one();
}

void CollectorRuntime::TranslateQueued() {
  std::vector<QueuedBuffer> batch;
  {
    std::lock_guard<std::mutex> lock(queue_mutex_);
    batch.swap(queued_);
  }
  for (const QueuedBuffer& queued : batch) {
    ConsumeBuffer(queued.buffer, queued.valid_bytes, *hooks_.cursor, 0);
  }
}

void CollectorRuntime::ConsumeBuffer(uint8_t* buffer, size_t valid_bytes, RecordCursor& cursor,
                                     uint64_t cupti_dropped) {
  cupti_dropped_ += cupti_dropped;
  if (Active() && buffer != nullptr) {
    std::lock_guard<std::mutex> lock(translate_mutex_);
    ConsumeActivityBuffer(buffer, valid_bytes, cursor, *translator_, *writer_);
  }
  if (pool_) pool_->Release(buffer);
}

void CollectorRuntime::NoteRecordingLocked(bool on) {
  window_recording_ = on;
  if (on && !recording_since_) recording_since_ = std::chrono::steady_clock::now();
  if (hooks_.set_recording) transfers_on_ = on;
}

bool CollectorRuntime::RecordingTransfers() const { return Active() && transfers_on_.load(); }

void CollectorRuntime::OnProfilerApi(bool start) {
  if (!OwnsCupti() || config_.start != StartMode::kProfilerApi || !hooks_.set_recording) return;
  std::lock_guard<std::mutex> lock(window_mutex_);
  if (limit_reached_ || cupti_handed_off_ || start == window_recording_) return;
  NoteRecordingLocked(start);
  hooks_.set_recording(start);
}

void CollectorRuntime::OnRangeStart(std::string_view name) {
  if (config_.flush_on_step && Active() && ProfilerStepNumber(name)) RequestFlush();
  if (!OwnsCupti() || !hooks_.set_recording) return;
  std::lock_guard<std::mutex> lock(window_mutex_);
  const std::optional<bool> change = StepWindowChange(config_, name, &first_step_);
  if (!change || limit_reached_) return;
  window_opened_ = window_opened_ || *change;
  if (*change == window_recording_ || cupti_handed_off_) return;
  NoteRecordingLocked(*change);
  hooks_.set_recording(*change);
}

void CollectorRuntime::EnforceLimit(std::chrono::steady_clock::time_point now) {
  if (!Active() || limit_reached_) return;
  const RecordingLimit& limit = config_.limit;
  const uint64_t written = writer_->written_bytes();
  const bool bytes_reached =
      limit.max_bytes > 0 && written >= static_cast<uint64_t>(limit.max_bytes);
  bool was_recording = false;
  {
    std::lock_guard<std::mutex> lock(window_mutex_);
    const bool time_reached =
        limit.max_recording_ms > 0 && recording_since_ &&
        now - *recording_since_ >= std::chrono::milliseconds(limit.max_recording_ms);
    if (!bytes_reached && !time_reached) return;
    limit_reached_ = true;
    transfers_on_ = false;
    was_recording = window_recording_;
    window_recording_ = false;
  }
  // Outside the lock (see NoteRecordingLocked); nothing turns recording on once the limit is
  // reached.
  if (was_recording && hooks_.set_recording) {
    std::lock_guard<std::mutex> flush_lock(flush_mutex_);  // see HandOffCupti
    if (!cupti_handed_off_) hooks_.set_recording(false);
  }
  const std::string_view which = bytes_reached ? "max_bytes" : "max_recording_ms";
  std::string out;
  ChromeEvent(&out, "M", "", "bubblescope_window")
      .Int("pid", pid_)
      .Int("tid", 0)
      .Args()
      .Text("stopped_at", which)
      .Int("max_bytes", limit.max_bytes)
      .Int("max_recording_ms", limit.max_recording_ms)
      .Int("written_bytes", static_cast<int64_t>(written))
      .Finish();
  writer_->Append(out);
  writer_->Flush();
  if (rank_ <= 0) {
    std::fprintf(stderr, "%s\n", LimitReachedNotice(limit, bytes_reached).c_str());
  }
}

DroppedCounts CollectorRuntime::dropped() const {
  DroppedCounts counts;
  counts.cupti_records = cupti_dropped_.load();
  if (pool_) counts.buffer_requests = pool_->refused();
  if (translator_) counts.nvtx_ranges = translator_->counts().dropped_ranges;
  if (nccl_) counts.nccl_events = nccl_->dropped_events();
  return counts;
}

void CollectorRuntime::WriteDroppedIfChanged() {
  DroppedCounts counts;
  {
    std::lock_guard<std::mutex> lock(translate_mutex_);
    counts = dropped();
  }
  if (counts == last_written_) return;
  last_written_ = counts;
  std::string out;
  ChromeEvent(&out, "M", "", "bubblescope_dropped")
      .Int("pid", pid_)
      .Int("tid", 0)
      .Args()
      .Int("cupti_records", static_cast<int64_t>(counts.cupti_records))
      .Int("buffer_requests", static_cast<int64_t>(counts.buffer_requests))
      .Int("nvtx_ranges", static_cast<int64_t>(counts.nvtx_ranges))
      .Int("nccl_events", static_cast<int64_t>(counts.nccl_events))
      .Finish();
  writer_->Append(out);
}

void CollectorRuntime::HandOffCupti(const std::string& taker) {
  if (!OwnsCupti()) return;
  {
    // Under the flush lock, which every switch of CUPTI outside a CUPTI callback holds too, so
    // none calls CUPTI once it is released. The flag is set under the window lock, which the
    // callbacks' switches hold: none switches after it. CUPTI itself is not called under the
    // window lock (see NoteRecordingLocked).
    std::lock_guard<std::mutex> flush_lock(flush_mutex_);
    {
      std::lock_guard<std::mutex> window_lock(window_mutex_);
      if (cupti_handed_off_.exchange(true)) return;
      window_recording_ = false;
    }
    if (hooks_.flush_activity) hooks_.flush_activity(true);
    if (hooks_.release_cupti) hooks_.release_cupti();
    const int64_t at_ns = hooks_.clock ? hooks_.clock() : 0;
    writer_->Append(CuptiHandedOffEvent(taker, config_.kinds, pid_, at_ns));
  }
  std::fprintf(stderr, "%s\n", CuptiHandOffNotice(taker, config_.kinds).c_str());
  Flush(false);
}

void CollectorRuntime::Flush(bool forced) {
  if (!Active()) return;
  std::lock_guard<std::mutex> lock(flush_mutex_);
  if (hooks_.flush_activity && !cupti_handed_off_) hooks_.flush_activity(forced);
  TranslateQueued();
  if (nccl_) nccl_->Collect(forced, *writer_);
  WriteDroppedIfChanged();
  writer_->Flush();
}

void CollectorRuntime::Shutdown() {
  if (!Active()) return;  // before the lock: a forked child may have inherited it held
  std::lock_guard<std::mutex> lock(lifecycle_mutex_);
  if (!Active()) return;
  {
    std::lock_guard<std::mutex> loop_lock(loop_mutex_);
    stop_loop_ = true;
  }
  loop_wake_.notify_all();
  if (flush_thread_.joinable()) flush_thread_.join();
  Flush(true);
  if (config_.start == StartMode::kSteps && !config_.steps_relative && !window_opened_) {
    std::fprintf(
        stderr,
        "bubblescope collector: no ProfilerStep#%lld to #%lld range was opened in this "
        "process: nothing recorded (BUBBLESCOPE_START=steps:%lld:%lld)\n",
        static_cast<long long>(config_.first_step), static_cast<long long>(config_.last_step),
        static_cast<long long>(config_.first_step), static_cast<long long>(config_.last_step));
  }
  running_ = false;
  writer_->Close();
}

std::string CollectorRuntime::trace_path() const { return writer_ ? writer_->path() : ""; }

}  // namespace bubblescope::collector
