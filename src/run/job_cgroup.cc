#include "run/job_cgroup.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "base/strings.h"
#include "guard/pidfd.h"
#include "host/hostfs.h"
#include "host/proctable.h"
#include "run/plan_limits.h"

namespace sparkops {

namespace {

/// Reads at most n-1 bytes of `name` under `dir_fd` into buf, NUL-terminated; bytes read or -1.
ssize_t ReadAt(int dir_fd, const char* name, char* buf, size_t n) {
  int fd = ::openat(dir_fd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return -1;
  size_t got = 0;
  while (got + 1 < n) {
    ssize_t r = ::read(fd, buf + got, n - 1 - got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    got += static_cast<size_t>(r);
  }
  ::close(fd);
  buf[got] = '\0';
  return static_cast<ssize_t>(got);
}

bool WriteAt(int dir_fd, const char* name, const char* text) {
  int fd = ::openat(dir_fd, name, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return false;
  size_t n = std::strlen(text);
  bool ok = ::write(fd, text, n) == static_cast<ssize_t>(n);
  ::close(fd);
  return ok;
}

std::optional<uint64_t> ReadUintAt(int dir_fd, const char* name) {
  char buf[64];
  if (ReadAt(dir_fd, name, buf, sizeof buf) <= 0) return std::nullopt;
  return ParseUint(Trim(buf));
}

/// One live (not zombie) process of the real /proc: its parent and its start time, which with the
/// pid names it and no later process that reuses the pid.
struct Link {
  pid_t pid = 0, ppid = 0;
  uint64_t start_ticks = 0;
};

std::vector<Link> ParentLinks() {
  std::vector<Link> out;
  HostFs fs("/");
  auto names = fs.List("/proc");
  if (!names) return out;
  for (const auto& n : *names) {
    auto pid = ParseUint(n);
    if (!pid || *pid == 0 || *pid > INT32_MAX) continue;
    auto stat = fs.Read("/proc/" + n + "/stat", 4096);
    if (!stat) continue;
    auto st = ParseStat(*stat);  // host/proctable.h
    if (!st || st->state == 'Z') continue;  // a zombie cannot be signalled into exiting
    out.push_back({static_cast<pid_t>(*pid), static_cast<pid_t>(st->ppid), st->start_ticks});
  }
  return out;
}

std::vector<std::pair<pid_t, pid_t>> Pairs(const std::vector<Link>& links) {
  std::vector<std::pair<pid_t, pid_t>> out;
  out.reserve(links.size());
  for (const Link& l : links) out.emplace_back(l.pid, l.ppid);
  return out;
}

/// Signals the process `l` names through a pidfd, so a process that took its pid after the scan is
/// never hit; kill() only where the kernel has no pidfds (Linux < 5.3).
void SignalExactly(const Link& l, int sig) {
  int err = 0;
  if (auto fd = guard::Pidfd::Open(HostFs("/"), l.pid, static_cast<uint32_t>(l.pid), l.start_ticks, &err)) {
    fd->Signal(sig);
  } else if (err == ENOSYS) {
    ::kill(l.pid, sig);
  }
}

}  // namespace

std::vector<pid_t> Descendants(const std::vector<std::pair<pid_t, pid_t>>& ppid_of, pid_t root, pid_t skip) {
  std::vector<pid_t> out{root};
  for (size_t i = 0; i < out.size() && out.size() <= ppid_of.size() + 1; ++i)
    for (const auto& [pid, ppid] : ppid_of)
      if (ppid == out[i] && pid != root && pid != skip) out.push_back(pid);
  out.erase(out.begin());
  return out;
}

JobHold JobHold::Subreaper(std::string why) {
  JobHold h;
  h.mode_ = Mode::kSubreaper;
  h.why_ = std::move(why);
  ::prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
  return h;
}

JobHold JobHold::Make() {
  HostFs fs("/");
  auto mi = fs.Read("/proc/self/mountinfo", 1u << 20);
  auto mount = mi ? ParseCgroup2Mount(*mi) : std::nullopt;
  if (!mount) return Subreaper("no cgroup2 file system is mounted");
  auto self = fs.Read("/proc/self/cgroup", 65536);
  auto own = self ? ParseCgroup2Path(*self) : std::nullopt;
  if (!own) return Subreaper("this process has no cgroup v2 path");
  if (mount->second != "/" && !own->starts_with(mount->second)) return Subreaper("its cgroup is outside the mount");
  std::string rel = mount->second == "/" ? *own : own->substr(mount->second.size());
  std::string parent = mount->first + (rel == "/" ? "" : rel);
  std::string dir = parent + "/sparkops-run-" + std::to_string(::getpid());
  if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST)
    return Subreaper("cannot create " + dir + ": " + std::strerror(errno) + " (cgroup not delegated)");
  JobHold h;
  h.dir_fd_ = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
  struct stat st {};
  if (h.dir_fd_ < 0 || ::fstat(h.dir_fd_, &st) != 0 || st.st_uid != ::geteuid()) {
    ::rmdir(dir.c_str());
    return Subreaper(dir + " is not this user's directory");
  }
  h.procs_fd_ = ::openat(h.dir_fd_, "cgroup.procs", O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
  if (h.procs_fd_ < 0) {
    std::string why = "cannot write " + dir + "/cgroup.procs: " + std::strerror(errno);
    ::close(h.dir_fd_);
    h.dir_fd_ = -1;
    ::rmdir(dir.c_str());
    return Subreaper(why);
  }
  h.mode_ = Mode::kCgroup;
  h.dir_ = dir;
  return h;
}

JobHold::JobHold(JobHold&& o) noexcept
    : mode_(o.mode_),
      dir_(std::move(o.dir_)),
      why_(std::move(o.why_)),
      procs_fd_(o.procs_fd_),
      dir_fd_(o.dir_fd_),
      helper_(o.helper_) {
  o.procs_fd_ = o.dir_fd_ = -1;
  o.dir_.clear();
}

JobHold::~JobHold() {
  if (procs_fd_ >= 0) ::close(procs_fd_);
  if (dir_fd_ < 0) return;
  // Processes the job left running (a daemon it started) are left alone, and so is their cgroup:
  // rmdir fails while it is populated.
  ::close(dir_fd_);
  ::rmdir(dir_.c_str());
}

bool JobHold::Holds(pid_t pid) const {
  if (mode_ != Mode::kCgroup) return false;
  auto text = HostFs("/").Read("/proc/" + std::to_string(pid) + "/cgroup", 65536);
  auto path = text ? ParseCgroup2Path(*text) : std::nullopt;
  return path && dir_.ends_with(*path) && !path->empty() && *path != "/";
}

void JobHold::FallBack(std::string why) {
  if (procs_fd_ >= 0) ::close(procs_fd_);
  if (dir_fd_ >= 0) ::close(dir_fd_);
  procs_fd_ = dir_fd_ = -1;
  if (!dir_.empty()) ::rmdir(dir_.c_str());
  dir_.clear();
  mode_ = Mode::kSubreaper;
  why_ = std::move(why);
  ::prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
}

void JobHold::SignalAll(pid_t job, int sig) const {
  if (mode_ == Mode::kSubreaper) {
    if (job > 0) ::kill(job, sig);  // run's own child: unreaped until run waits for it, so its pid holds
    const std::vector<Link> links = ParentLinks();
    for (pid_t p : Descendants(Pairs(links), ::getpid(), helper_))
      for (const Link& l : links)
        if (l.pid == p && p != job) SignalExactly(l, sig);
    return;
  }
  if (sig == SIGKILL && WriteAt(dir_fd_, "cgroup.kill", "1")) return;
  bool frozen = WriteAt(dir_fd_, "cgroup.freeze", "1");
  char buf[65536];
  for (int round = 0; round < 2; ++round) {  // a second pass catches a fork that raced an unfrozen read
    if (ReadAt(dir_fd_, "cgroup.procs", buf, sizeof buf) < 0) break;
    for (char* p = buf; *p;) {
      char* end = nullptr;
      long pid = std::strtol(p, &end, 10);
      if (end == p) break;
      if (pid > 0) ::kill(static_cast<pid_t>(pid), sig);
      p = *end ? end + 1 : end;
    }
    if (frozen) break;
  }
  if (frozen) WriteAt(dir_fd_, "cgroup.freeze", "0");
}

std::vector<pid_t> JobHold::Members(pid_t job) const {
  if (mode_ == Mode::kSubreaper) {
    std::vector<pid_t> out = Descendants(Pairs(ParentLinks()), ::getpid(), helper_);
    if (job > 0 && std::find(out.begin(), out.end(), job) == out.end() && ::kill(job, 0) == 0) out.push_back(job);
    return out;
  }
  std::vector<pid_t> out;
  char buf[65536];
  if (ReadAt(dir_fd_, "cgroup.procs", buf, sizeof buf) < 0) return out;
  for (std::string_view line : SplitLines(buf))
    if (auto p = ParseUint(line); p && *p > 0 && *p <= INT32_MAX) out.push_back(static_cast<pid_t>(*p));
  return out;
}

bool JobHold::Populated(pid_t job) const {
  if (mode_ == Mode::kSubreaper) {
    if (job > 0 && ::kill(job, 0) == 0) return true;
    return !Descendants(Pairs(ParentLinks()), ::getpid(), helper_).empty();
  }
  char buf[256];
  if (ReadAt(dir_fd_, "cgroup.events", buf, sizeof buf) <= 0) return false;
  return std::strstr(buf, "populated 1") != nullptr;
}

std::optional<uint64_t> JobHold::MemoryCurrent() const {
  return dir_fd_ >= 0 ? ReadUintAt(dir_fd_, "memory.current") : std::nullopt;
}

std::optional<uint64_t> JobHold::MemoryPeak() const {
  return dir_fd_ >= 0 ? ReadUintAt(dir_fd_, "memory.peak") : std::nullopt;
}

Result<void> JobHold::SetLimits(std::optional<uint64_t> high, std::optional<uint64_t> max) const {
  if (dir_fd_ < 0) return IoError("memory limits need the job's cgroup; " + why_);
  return WriteMemoryLimits(dir_, high, max);
}

}  // namespace sparkops
