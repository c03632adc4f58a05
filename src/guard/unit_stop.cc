#include "guard/unit_stop.h"

#include <fcntl.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <cstring>
#include <vector>

#include "base/strings.h"
#include "guard/candidates.h"
#include "guard/pidfd.h"
#include "host/cgroup.h"
#include "host/hostfs.h"
#include "host/pidns.h"

namespace sparkops::guard {

namespace {

std::vector<pid_t> Procs(const std::string& dir) {
  std::vector<pid_t> out;
  auto text = HostFs("/").Read(dir + "/cgroup.procs", 1u << 20);
  if (!text) return out;
  for (std::string_view line : SplitLines(*text))
    if (auto p = ParseUint(Trim(line)); p && *p > 1 && *p <= INT32_MAX) out.push_back(static_cast<pid_t>(*p));
  return out;
}

/// True when /proc (as this process sees it) puts `proc_pid` in cgroup `path`.
bool InCgroup(uint32_t proc_pid, const std::string& path) {
  auto text = HostFs("/").Read("/proc/" + std::to_string(proc_pid) + "/cgroup", 65536);
  auto in = text ? ParseCgroup2Path(*text) : std::nullopt;
  return in && *in == path;
}

}  // namespace

std::optional<std::string> CgroupDir(std::string_view mount_dir, std::string_view mount_root,
                                     std::string_view cgroup_path) {
  if (!cgroup_path.starts_with('/')) return std::nullopt;
  std::string_view rel = cgroup_path;
  if (mount_root != "/") {
    if (!cgroup_path.starts_with(mount_root) ||
        (cgroup_path.size() > mount_root.size() && cgroup_path[mount_root.size()] != '/'))
      return std::nullopt;
    rel = cgroup_path.substr(mount_root.size());
  }
  if (rel.find("/../") != std::string_view::npos || rel.ends_with("/..")) return std::nullopt;
  return std::string(mount_dir) + std::string(rel == "/" ? "" : rel);
}

std::optional<UnitStop> UnitStop::Open(std::string dir, std::string cgroup_path, pid_t victim) {
  for (pid_t p : Procs(dir))
    if (p == victim) return UnitStop(std::move(dir), std::move(cgroup_path));
  return std::nullopt;
}

size_t UnitStop::Signal(int sig) {
  const std::vector<pid_t> pids = Procs(dir_);
  if (sig == SIGKILL) {
    const std::string kill = dir_ + "/cgroup.kill";
    int fd = ::open(kill.c_str(), O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd >= 0) {
      cgroup_kill_ = ::write(fd, "1", 1) == 1;
      ::close(fd);
      if (cgroup_kill_) return pids.size();
    }
  }
  size_t sent = 0;
  const HostFs fs("/");
  for (pid_t p : pids) {
    auto proc_pid = ProcPidOf(static_cast<uint32_t>(p));
    if (!proc_pid) continue;
    auto ticks = StartTicksOf(fs, *proc_pid);
    int err = 0;
    auto fd = ticks ? Pidfd::Open(fs, p, *proc_pid, *ticks, &err) : std::nullopt;
    // Held by the pidfd from here on: still in the unit means it is the process cgroup.procs listed.
    if (fd && InCgroup(*proc_pid, path_) && fd->Signal(sig) == 0) ++sent;
  }
  return sent;
}

bool UnitStop::WaitEmpty(double timeout_s) const {
  const HostFs fs("/");
  for (double waited = 0;; waited += 0.05) {
    auto events = fs.Read(dir_ + "/cgroup.events", 4096);
    if (!events || events->find("populated 0") != std::string::npos) return true;  // gone, or empty
    if (waited >= timeout_s) return false;
    timespec ts{0, 50'000'000};
    ::nanosleep(&ts, nullptr);
  }
}

}  // namespace sparkops::guard
