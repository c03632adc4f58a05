#include "guard/candidates.h"
#include "host/proctable.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include "base/strings.h"
#include "host/pidns.h"

namespace sparkops::guard {

namespace {

/// At most `max` bytes from the start of a file (a /proc file of any length), "" on failure.
std::string ReadPrefix(const std::string& path, size_t max) {
  std::string out(max, '\0');
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0) return {};
  size_t got = 0;
  while (got < max) {
    ssize_t n = ::read(fd, out.data() + got, max - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  ::close(fd);
  out.resize(got);
  return out;
}

/// "Key:\tvalue" of a status text, trimmed; "" when absent.
std::string_view StatusField(std::string_view status, std::string_view key) {
  for (std::string_view line : SplitLines(status)) {
    if (line.size() > key.size() && line.starts_with(key) && line[key.size()] == ':')
      return Trim(line.substr(key.size() + 1));
  }
  return {};
}

std::optional<uint64_t> VmRssBytes(std::string_view status) {
  std::string_view v = StatusField(status, "VmRSS");
  if (v.empty()) return std::nullopt;
  auto kb = ParseUint(Trim(v.substr(0, v.find(' '))));
  if (!kb || *kb > UINT64_MAX / 1024) return std::nullopt;
  return *kb * 1024;
}

std::string ProcPath(uint32_t pid, std::string_view rest) { return "/proc/" + std::to_string(pid) + std::string(rest); }

}  // namespace

std::optional<StatFacts> ParseStatFacts(std::string_view stat) {
  auto st = ParseStat(stat);  // host/proctable.h: the one /proc/PID/stat parser
  if (!st || !st->flags) return std::nullopt;
  return StatFacts{st->comm, st->state, st->ppid, *st->flags, st->start_ticks};
}

std::optional<uint64_t> StartTicksOf(const HostFs& fs, uint32_t pid) {
  auto st = ParseStatFacts(ReadPrefix(fs.Path(ProcPath(pid, "/stat")), 4096));
  if (!st || st->state == 'X') return std::nullopt;
  return st->start_ticks;
}

std::optional<ProcFacts> ReadProcFacts(const HostFs& fs, uint32_t pid) {
  auto st = ParseStatFacts(ReadPrefix(fs.Path(ProcPath(pid, "/stat")), 4096));
  if (!st) return std::nullopt;
  ProcFacts p;
  Candidate& c = p.c;
  c.pid = pid, c.name = st->comm, c.start_ticks = st->start_ticks;
  p.ppid = st->ppid;
  c.kthread = (st->flags & kPfKthread) != 0;
  const std::string status = ReadPrefix(fs.Path(ProcPath(pid, "/status")), 16384);
  if (auto uid = ParseUint(Trim(StatusField(status, "Uid").substr(0, StatusField(status, "Uid").find('\t'))));
      uid && *uid <= UINT32_MAX)
    c.uid = static_cast<uint32_t>(*uid);
  p.nspid = ParseNsPid(status);
  if (c.kthread) return p;
  c.rss = VmRssBytes(status);
  c.exe = fs.ReadLink(ProcPath(pid, "/exe")).value_or("");
  if (!c.rss || c.exe.empty()) {  // a zombie leader: its live threads hold the thread group's memory
    auto tasks = fs.List(ProcPath(pid, "/task"));
    size_t tried = 0;
    for (const std::string& t : tasks ? *tasks : std::vector<std::string>{}) {
      if (++tried > kMaxTasks) break;
      const std::string base = ProcPath(pid, "/task/" + t);
      auto rss = VmRssBytes(ReadPrefix(fs.Path(base + "/status"), 16384));
      if (!rss) continue;
      c.rss = c.rss ? c.rss : rss;
      if (c.exe.empty()) c.exe = fs.ReadLink(base + "/exe").value_or("");
      break;
    }
  }
  std::string cmd = ReadPrefix(fs.Path(ProcPath(pid, "/cmdline")), kMatchBytes);
  while (!cmd.empty() && cmd.back() == '\0') cmd.pop_back();
  for (char& ch : cmd)
    if (ch == '\0') ch = ' ';
  c.cmdline = std::move(cmd);
  if (auto adj = ParseInt(Trim(ReadPrefix(fs.Path(ProcPath(pid, "/oom_score_adj")), 32))))
    c.oom_score_adj = static_cast<int>(*adj);
  if (auto sc = ParseInt(Trim(ReadPrefix(fs.Path(ProcPath(pid, "/oom_score")), 32))); sc && *sc >= 0 && *sc <= 2000)
    c.oom_score = static_cast<int>(*sc);
  const std::string cg = ReadPrefix(fs.Path(ProcPath(pid, "/cgroup")), 8192);
  for (std::string_view line : SplitLines(cg)) {
    if (line.starts_with("0::")) c.cgroup = std::string(line.substr(3));
    else if (c.cgroup.empty() && line.find(":name=systemd:") != std::string_view::npos)
      c.cgroup = std::string(line.substr(line.find(":name=systemd:") + 14));
  }
  return p;
}

std::vector<ProcFacts> ReadAllProcFacts(const HostFs& fs) {
  std::vector<ProcFacts> out;
  auto names = fs.List("/proc");
  if (!names) return out;
  for (const std::string& n : *names) {
    auto pid = ParseUint(n);
    if (!pid || *pid == 0 || *pid > UINT32_MAX) continue;
    if (auto p = ReadProcFacts(fs, static_cast<uint32_t>(*pid))) out.push_back(std::move(*p));
  }
  // Children of kthreadd are kernel threads: only where PID 2 is kthreadd itself (in a PID namespace
  // or a container PID 2 is an ordinary process).
  bool two_is_kthreadd = false;
  for (const auto& p : out) two_is_kthreadd |= p.c.pid == 2 && p.c.kthread;
  if (two_is_kthreadd)
    for (auto& p : out)
      if (p.ppid == 2) p.c.kthread = true;
  return out;
}

}  // namespace sparkops::guard
