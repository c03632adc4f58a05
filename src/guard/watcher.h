#pragma once
/// The guard's thread for `sparkops run`: polls MemAvailable and PSI (allocation-free, adaptive
/// interval), flushes the page cache first when allowed and useful, else sends SIGTERM to the job's
/// process group and SIGKILL after the grace. The signals are sent before anything is allocated;
/// only then is `report` called (to write the memory_guard event). The thread also locks the
/// process's memory (mlockall, when permitted) and lowers its own oom_score_adj (root).
#include <sys/types.h>

#include <atomic>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "base/timefmt.h"
#include "guard/fastread.h"
#include "guard/fragmentation.h"
#include "guard/kernel_watch.h"
#include "guard/policy.h"

namespace sparkops::guard {

/// A process tree's memory: resident bytes (sum of VmRSS) and, where NVML/nvidia-smi reports it,
/// GPU memory of its processes. Absent when not read.
struct Footprint {
  std::optional<uint64_t> rss;
  std::optional<uint64_t> gpu;
};

/// What the guard did; filled on the guard's path without allocation.
struct ActionRecord {
  Action action = Action::kNone;  ///< kFlush or kStop
  Reason reason = Reason::kNone;
  Reading reading;                ///< the reading that decided it
  SysTime wall{};                 ///< when it acted
  uint64_t floor = 0;
  std::optional<double> max_pressure;
  bool flush_ok = false;          ///< kFlush: the write to drop_caches succeeded
  bool killed = false;            ///< kStop: SIGKILL sent after the grace
  /// The job's footprint as last read before the action: once per episode, when MemAvailable first
  /// falls under twice the floor (still room to allocate then), never on the poll path itself.
  Footprint footprint;
  /// kKernelNoMemory: the kernel record that decided it (its text, as logged).
  std::string kernel_line;
  /// kFragmentation: the buddyinfo evidence (FragmentationEvidence).
  std::string buddyinfo;
};

/// The record of decision `d` on reading `r` under config `c`, stamped now.
ActionRecord MakeRecord(const Decision& d, const Reading& r, const Config& c);

struct JobGuardOptions {
  Config config;
  double grace_s = 10;
  pid_t pgid = -1;                   ///< the job's process group (used when signal_job is empty)
  /// Sends a signal to the whole job (run's cgroup, or every descendant under the subreaper); must
  /// not allocate in the cgroup mode (it runs before anything else when memory is short).
  std::function<void(int)> signal_job;
  std::function<bool()> job_alive;   ///< any process of the job left (with signal_job)
  std::string drop_caches_path;      ///< resolved under --root (written only when config.may_flush)
  bool harden = true;                ///< mlockall + oom_score_adj (off in unit tests of the class)
  std::function<Footprint()> footprint;  ///< reads the job's footprint (may be empty)
  /// Checkpoint early (guard/checkpoint.h): while MemAvailable is under `checkpoint_at`, or PSI
  /// full avg10 is at or above `checkpoint_psi` (percent; nullopt: not used), `request_checkpoint`
  /// is called (it signals the job and records the request; it may allocate: there is room then)
  /// until it says it reached a process (every 5 s: a job just starting may not have installed its
  /// handler yet); from then on `checkpoint_saved` is asked each poll until it says the job
  /// acknowledged. A stop waits for that at most `checkpoint_grace_s`, while
  /// MemAvailable stays at least half the floor.
  std::optional<uint64_t> checkpoint_at;
  std::optional<double> checkpoint_psi;
  double checkpoint_grace_s = 120;
  std::function<bool(const Reading&)> request_checkpoint;
  std::function<bool()> checkpoint_saved;
  /// The kernel log, followed from the guard's start (null: --kernel-signals off, or not readable):
  /// an NVRM NV_ERR_NO_MEMORY record stops the job as crossing the floor does.
  std::shared_ptr<KernelWatch> kernel;
  /// The fragmentation trigger (guard/fragmentation.h; null: --kernel-signals off): no free 2 MiB
  /// block for the driver while the job grows under twice the floor stops the job.
  std::shared_ptr<FragmentationWatch> fragmentation;
};

class JobGuard {
 public:
  /// Starts the thread. `report` is called from it after each action (flush done, SIGTERM sent,
  /// SIGKILL sent), outside the no-allocation path.
  JobGuard(const HostFs& fs, JobGuardOptions o, std::function<void(const ActionRecord&)> report);
  ~JobGuard();
  JobGuard(const JobGuard&) = delete;
  JobGuard& operator=(const JobGuard&) = delete;

  /// Stops the thread (prompt: wakes it from its sleep). Idempotent.
  void Stop();
  /// True once the guard sent SIGTERM to the job.
  bool stopped_job() const { return stopped_.load(); }
  /// The stop record, once stopped_job() (read after Stop()).
  const ActionRecord& stop_record() const { return stop_; }
  /// mlockall succeeded / oom_score_adj lowered (for the guard_start event).
  bool locked() const { return locked_; }
  bool oom_adjusted() const { return oom_adjusted_; }

 private:
  void Loop();
  /// Sleeps up to `s` seconds; false when Stop() was called.
  bool Sleep(double s);
  bool WriteDropCaches();
  void Signal(int sig);

  FastReader reader_;
  JobGuardOptions o_;
  std::function<void(const ActionRecord&)> report_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool quit_ = false;
  std::atomic<bool> stopped_{false};
  ActionRecord stop_, flush_;
  bool locked_ = false, oom_adjusted_ = false;
  std::thread thread_;
};

/// The decision with the kernel's word added: when the readings call for nothing, a no-memory record
/// stops the job: one still pending in `*line` (not yet acted on: the caller clears it once it has),
/// else one read from `kernel` (may be null) since its last poll, whose text goes to `*line`. The log
/// is read only then, off the path where memory is short.
Decision WithKernelSign(Decision d, KernelWatch* kernel, std::string* line);

/// Monotonic clock, seconds (Reading::t_s).
double MonoSeconds();

/// Locks present and future pages of this process as they are touched (MCL_ONFAULT: thread stacks
/// are not populated in full). Only as root or with an unlimited RLIMIT_MEMLOCK (a finite limit would
/// make later allocations fail once reached); false otherwise or when refused.
bool LockMemory();
/// Writes `value` to /proc/self/oom_score_adj (lowering needs CAP_SYS_RESOURCE). False on failure.
bool SetOwnOomScoreAdj(int value);

/// Writes "3" to drop_caches at `path` (already resolved under --root). No sync() first: writing
/// back dirty pages may take longer than the headroom lasts. False when the write fails.
bool WriteDropCachesAt(const char* path);

inline constexpr int kGuardOomScoreAdj = -100;  ///< earlyoom's choice for itself

}  // namespace sparkops::guard
