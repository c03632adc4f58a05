#include "guard/watcher.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "guard/checkpoint.h"

namespace sparkops::guard {

double MonoSeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

ActionRecord MakeRecord(const Decision& d, const Reading& r, const Config& c) {
  ActionRecord a;
  a.action = d.action, a.reason = d.reason, a.reading = r;
  a.wall = std::chrono::system_clock::now();
  a.floor = c.floor, a.max_pressure = c.max_pressure;
  return a;
}

Decision WithKernelSign(Decision d, KernelWatch* kernel, std::string* line) {
  if (d.action != Action::kNone) return d;
  if (line->empty() && kernel) {
    if (auto sign = kernel->Poll()) *line = sign->line.empty() ? "NVRM: NV_ERR_NO_MEMORY" : sign->line;
  }
  if (line->empty()) return d;
  return {Action::kStop, Reason::kKernelNoMemory};
}

bool LockMemory() {
#ifdef MCL_ONFAULT
  // Only without a limit to run into: with MCL_FUTURE under a finite RLIMIT_MEMLOCK, a later
  // allocation beyond it would fail (root's CAP_IPC_LOCK ignores the limit).
  rlimit lim{};
  if (::geteuid() != 0 && (::getrlimit(RLIMIT_MEMLOCK, &lim) != 0 || lim.rlim_cur != RLIM_INFINITY)) return false;
  return ::mlockall(MCL_CURRENT | MCL_FUTURE | MCL_ONFAULT) == 0;
#else
  return false;  // without ONFAULT every thread stack would be populated in full: not worth it
#endif
}

bool SetOwnOomScoreAdj(int value) {
  char text[16];
  int n = std::snprintf(text, sizeof text, "%d\n", value);
  int fd = ::open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  bool ok = ::write(fd, text, static_cast<size_t>(n)) == n;
  ::close(fd);
  return ok;
}

JobGuard::JobGuard(const HostFs& fs, JobGuardOptions o, std::function<void(const ActionRecord&)> report)
    : reader_(fs), o_(std::move(o)), report_(std::move(report)) {
  if (o_.harden) {
    locked_ = LockMemory();
    oom_adjusted_ = SetOwnOomScoreAdj(kGuardOomScoreAdj);
  }
  thread_ = std::thread([this] { Loop(); });
}

JobGuard::~JobGuard() { Stop(); }

void JobGuard::Stop() {
  {
    std::lock_guard lock(mu_);
    quit_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

bool JobGuard::Sleep(double s) {
  std::unique_lock lock(mu_);
  return !cv_.wait_for(lock, std::chrono::duration<double>(s), [this] { return quit_; });
}

void JobGuard::Signal(int sig) {
  if (o_.signal_job) o_.signal_job(sig);
  else ::kill(-o_.pgid, sig);
}

bool JobGuard::WriteDropCaches() { return WriteDropCachesAt(o_.drop_caches_path.c_str()); }

bool WriteDropCachesAt(const char* path) {
  int fd = ::open(path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);  // never through a link (--root trees)
  if (fd < 0) return false;
  bool ok = ::write(fd, "3\n", 2) == 2;  // no sync(): writing back dirty pages may outlast the headroom
  ::close(fd);
  return ok;
}

void JobGuard::Loop() {
  State state;
  Footprint last;
  double last_at = 0;  ///< monotonic seconds of `last`
  bool was_near = false;
  std::optional<double> ckpt_asked;  ///< monotonic seconds of the checkpoint request
  double ckpt_retry = 0;             ///< no process caught the signal: try again from then
  bool ckpt_saved = false;
  for (;;) {
    std::optional<Reading> r = reader_.Read(MonoSeconds());
    if (!r) {  // meminfo unreadable for a moment: try again soon
      if (!Sleep(kSlowPollS)) return;
      continue;
    }
    bool near = r->available / 2 < o_.config.floor;
    // The job's footprint near the floor, read ahead of a stop (so the SIGTERM waits on no /proc
    // walk): at 2x the floor, then again at most once a second while the pool stays near it (a job
    // that started near the floor would otherwise be reported at its start-up size).
    if (near && o_.footprint && (!was_near || r->t_s - last_at >= kFootprintRefreshS))
      last = o_.footprint(), last_at = r->t_s;
    was_near = near;
    if (o_.checkpoint_at && o_.request_checkpoint && !ckpt_asked && r->t_s >= ckpt_retry &&
        CheckpointTriggerFor(*r, *o_.checkpoint_at, o_.checkpoint_psi) != CheckpointTrigger::kNone) {
      // The grace counts from the signal (the request reads /proc, which takes a while on a busy host).
      if (o_.request_checkpoint(*r)) ckpt_asked = MonoSeconds();
      else ckpt_retry = MonoSeconds() + kCheckpointRetryS;
    }
    if (ckpt_asked && !ckpt_saved && o_.checkpoint_saved) ckpt_saved = o_.checkpoint_saved();
    std::string kernel_line, buddyinfo;
    Decision d = WithKernelSign(Decide(o_.config, *r, state), o_.kernel.get(), &kernel_line);
    // Off the floor's path: only when the readings and the kernel log call for nothing.
    if (d.action == Action::kNone && o_.fragmentation && o_.fragmentation->Check(o_.config, *r, &buddyinfo))
      d = {Action::kStop, Reason::kFragmentation};
    // A driver-side sign is not waited on: the host may wedge within minutes.
    if (d.action == Action::kStop && d.reason != Reason::kKernelNoMemory && d.reason != Reason::kFragmentation &&
        ckpt_asked && !ckpt_saved &&
        HoldStopForCheckpoint(MonoSeconds() - *ckpt_asked, o_.checkpoint_grace_s, r->available, o_.config.floor)) {
      if (!Sleep(kFastPollS)) return;  // the job is saving: stop once it says so, or at the grace
      continue;
    }
    if (d.action == Action::kFlush) {
      flush_ = MakeRecord(d, *r, o_.config);
      flush_.flush_ok = WriteDropCaches();
      report_(flush_);
      continue;  // read again at once: did it lift MemAvailable above the floor?
    }
    if (d.action == Action::kStop) {
      Signal(SIGTERM);
      double t_term = MonoSeconds();
      stop_ = MakeRecord(d, *r, o_.config);
      stop_.footprint = last;
      if (d.reason == Reason::kKernelNoMemory) stop_.kernel_line = std::move(kernel_line);
      if (d.reason == Reason::kFragmentation) stop_.buddyinfo = std::move(buddyinfo);
      stopped_ = true;
      report_(stop_);
      // The grace runs from the SIGTERM (report_ may have taken a while to read the job's footprint).
      if (!Sleep(std::max(0.0, o_.grace_s - (MonoSeconds() - t_term)))) return;  // exited within the grace
      if (o_.job_alive ? o_.job_alive() : ::kill(-o_.pgid, 0) == 0) {
        Signal(SIGKILL);
        stop_.killed = true;
        stop_.wall = std::chrono::system_clock::now();  // the kill's own time and reading, not the SIGTERM's
        if (auto now = reader_.Read(MonoSeconds())) stop_.reading = *now;
        report_(stop_);
      }
      return;
    }
    if (!Sleep(PollInterval(o_.config, *r))) return;
  }
}

}  // namespace sparkops::guard
