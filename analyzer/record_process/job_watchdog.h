// A watchdog for `bubblescope record`'s job: a small process of its own that stops the job if
// record is killed outright (SIGKILL, which record cannot catch) while the job still runs.
// Without it, a job in its own process group would run on unattended, holding its GPUs.
#pragma once

#include <sys/types.h>

#include <cstdint>

namespace bubblescope {

class JobWatchdog {
 public:
  // Starts the watchdog process, in a session of its own so that signals meant for record's
  // process group or terminal do not reach it. Call before starting the job. If the system
  // refuses a process the job still runs, only without this safety net.
  explicit JobWatchdog(int64_t grace_ms);
  // Release()s.
  ~JobWatchdog();
  JobWatchdog(const JobWatchdog&) = delete;
  JobWatchdog& operator=(const JobWatchdog&) = delete;

  // The job's process group, to be stopped (SIGTERM, then SIGKILL after the grace period) if
  // this process dies before Release().
  void Watch(pid_t job_group);
  // The job has ended: the watchdog exits without touching anything, and is waited for.
  void Release();

  bool running() const { return pid_ > 0; }

 private:
  pid_t pid_ = -1;
  int socket_ = -1;  // our end of the socket; closed without the release byte: this process died
};

}  // namespace bubblescope
