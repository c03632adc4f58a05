#pragma once
/// `sparkops run`'s hold on its job: a cgroup v2 of its own (a child of run's own cgroup), which
/// every descendant enters at fork and none can leave by setsid or double-fork; or, where no
/// cgroup can be made (no cgroup2 mounted, no delegation, a read-only container), the fallback:
/// run becomes a child subreaper (PR_SET_CHILD_SUBREAPER), so orphaned descendants stay below it,
/// and every descendant is found by the parent links in /proc.
#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/error.h"
#include "host/cgroup.h"  // ParseCgroup2Mount, ParseCgroup2Path

namespace sparkops {

class JobHold {
 public:
  enum class Mode { kCgroup, kSubreaper };
  /// A cgroup when one can be made under run's own, else the subreaper (`why` says why not).
  static JobHold Make();
  /// The fallback only (tests; `run --no-cgroup`).
  static JobHold Subreaper(std::string why);
  ~JobHold();
  JobHold(JobHold&& o) noexcept;
  JobHold& operator=(JobHold&&) = delete;
  JobHold(const JobHold&) = delete;

  Mode mode() const { return mode_; }
  const char* ModeName() const { return mode_ == Mode::kCgroup ? "cgroup" : "subreaper"; }
  /// The cgroup's directory ("" in the subreaper mode), and why no cgroup is used.
  const std::string& path() const { return dir_; }
  const std::string& why_not_cgroup() const { return why_; }
  /// Open for writing to cgroup.procs: the child writes "0" to it before exec (-1: subreaper).
  int procs_fd() const { return procs_fd_; }

  /// A helper of run's own (the sentinel) that the subreaper mode must not count or signal.
  void Exclude(pid_t helper) { helper_ = helper; }
  /// True when `pid` is in this cgroup (the child's write to cgroup.procs took effect).
  bool Holds(pid_t pid) const;
  /// Gives up the cgroup (the job could not be moved into it): the subreaper from now on.
  void FallBack(std::string why);

  /// Sends `sig` to every process of the job: in the cgroup, frozen first so that none can fork or
  /// exit between the reading of cgroup.procs and the signal; SIGKILL by cgroup.kill where the
  /// kernel has it (5.14). In the subreaper mode, to `job` and every descendant of this process,
  /// each through a pidfd checked against the start time read with it (a reused pid is not hit).
  /// No allocation in the cgroup mode (fixed buffers): it runs on the guard's path.
  void SignalAll(pid_t job, int sig) const;
  /// True while a process of the job is left (cgroup.events "populated 1"; subreaper: a descendant
  /// that is not a zombie).
  bool Populated(pid_t job) const;
  /// The job's processes now (`job` included while it lives): the cgroup's members, or in the
  /// subreaper mode every descendant of this process but the helper. Reads only cgroup.procs or each
  /// /proc/PID/stat; allocates (not for the guard's no-allocation path).
  std::vector<pid_t> Members(pid_t job) const;
  /// The job's memory now: memory.current where the memory controller is enabled for the cgroup.
  std::optional<uint64_t> MemoryCurrent() const;
  /// memory.peak (Linux 5.19) where present.
  std::optional<uint64_t> MemoryPeak() const;
  /// Writes memory.high and memory.max; an error naming the file where they cannot be set.
  Result<void> SetLimits(std::optional<uint64_t> high, std::optional<uint64_t> max) const;

 private:
  JobHold() = default;
  Mode mode_ = Mode::kSubreaper;
  std::string dir_, why_;
  int procs_fd_ = -1, dir_fd_ = -1;
  pid_t helper_ = -1;
};

/// Every descendant of `root` (by PPid), not `root` itself, nor `skip` and its descendants. Pure over
/// `ppid_of` pairs (pid, ppid).
std::vector<pid_t> Descendants(const std::vector<std::pair<pid_t, pid_t>>& ppid_of, pid_t root, pid_t skip = -1);

}  // namespace sparkops
