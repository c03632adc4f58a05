#pragma once
/// The host guard's stop of a whole systemd unit (victim.h's ChooseStop said it may): every process
/// of the unit's cgroup v2 held by a pidfd while it is signalled, SIGKILL through cgroup.kill where
/// the kernel has it (Linux 5.14), the unit's end seen in cgroup.events ("populated 0").
#include <sys/types.h>

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace sparkops::guard {

/// The cgroup v2 directory of `cgroup_path` (a /proc/PID/cgroup "0::" path) under a mount at
/// `mount_dir` whose root (mountinfo field 4) is `mount_root`; nullopt when the path is outside
/// that root. Pure.
std::optional<std::string> CgroupDir(std::string_view mount_dir, std::string_view mount_root,
                                     std::string_view cgroup_path);

class UnitStop {
 public:
  /// The unit's cgroup at `dir` (its path `cgroup_path`), when its cgroup.procs lists `victim` (a
  /// PID of this namespace); nullopt otherwise (then the guard stops the process alone).
  static std::optional<UnitStop> Open(std::string dir, std::string cgroup_path, pid_t victim);

  /// Sends `sig` to every process of the cgroup, each through a pidfd opened for the PID read in
  /// cgroup.procs and kept only when /proc/PID/cgroup still names this cgroup (a reused PID is never
  /// hit). SIGKILL goes through cgroup.kill where there is one. Returns the processes signalled (for
  /// cgroup.kill, those listed just before).
  size_t Signal(int sig);
  /// Waits up to `timeout_s` for the cgroup to be empty. True once it is.
  bool WaitEmpty(double timeout_s) const;
  bool used_cgroup_kill() const { return cgroup_kill_; }
  const std::string& dir() const { return dir_; }

 private:
  UnitStop(std::string dir, std::string path) : dir_(std::move(dir)), path_(std::move(path)) {}
  std::string dir_, path_;
  bool cgroup_kill_ = false;
};

}  // namespace sparkops::guard
