#pragma once
/// What happens to the job when `sparkops run` itself dies (kill -9, a crash): a small process
/// forked from run right after the job starts (the sentinel) holds a control pipe and copies of
/// the job's output descriptors. While run lives it only waits. When the control pipe reaches EOF
/// without a "done" byte, run is gone: the sentinel writes a `supervisor_lost` event, sends SIGTERM
/// to the job's process group, keeps recording the job's output into train.log (so the job never
/// dies of SIGPIPE and no line is lost) and sends SIGKILL after the grace. Contract in
/// docs/memory-guard.md.
#include <sys/types.h>

#include "base/error.h"
#include "host/child.h"

namespace sparkops {

class Sentinel {
 public:
  /// Forks the sentinel (call while run is single-threaded). It inherits `log_fd` (train.log,
  /// read-write, O_APPEND) and `events_fd` (events.jsonl, O_APPEND) from the run's recorder:
  /// it never reopens a run file by name (a link planted since could redirect it).
  static Result<Sentinel> Start(const Child& job, int log_fd, int events_fd, double grace_s);
  Sentinel(Sentinel&& o) noexcept : ctl_(o.ctl_), pid_(o.pid_) { o.ctl_ = -1, o.pid_ = -1; }
  Sentinel& operator=(Sentinel&&) = delete;
  /// run ends normally: tells the sentinel to exit without touching the job, and reaps it.
  ~Sentinel() { Disarm(); }
  void Disarm();
  pid_t pid() const { return pid_; }

 private:
  Sentinel(int ctl, pid_t pid) : ctl_(ctl), pid_(pid) {}
  int ctl_ = -1;
  pid_t pid_ = -1;
};

}  // namespace sparkops
