#include "host/proctable.h"

#include <algorithm>

#include "base/strings.h"
#include "host/owned_read.h"
#include "host/pidns.h"
#include "host/read_budget.h"

namespace sparkops {

namespace {
// Bounds before allocating: argv and environ are each limited by the kernel's ARG_MAX-ish
// limits (a few MiB at most); status and stat are small.
constexpr size_t kMaxArgBytes = 4u << 20;
constexpr size_t kMaxStatusBytes = 64u << 10;
constexpr size_t kMaxStatBytes = 8u << 10;
constexpr size_t kMaxScript = 1u << 20;
constexpr size_t kMaxFdsProbed = 4096;

std::vector<std::string_view> SplitNul(std::string_view data) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (start < data.size()) {
    size_t end = data.find('\0', start);
    if (end == std::string_view::npos) end = data.size();
    out.push_back(data.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

std::optional<uint32_t> ParsePid(std::string_view s) {
  auto v = ParseUint(s);
  if (!v || *v > 0xffffffffu) return std::nullopt;
  return static_cast<uint32_t>(*v);
}
}  // namespace

bool IsPythonInterpreter(std::string_view argv0) {
  std::string_view b = BaseName(argv0);
  return StartsWith(b, "python") || StartsWith(b, "pypy");
}

std::vector<std::string> ParseCmdline(std::string_view data) {
  std::vector<std::string> out;
  for (auto w : SplitNul(data)) out.emplace_back(w);
  return out;
}

std::map<std::string, std::string> ParseEnviron(std::string_view data) {
  std::map<std::string, std::string> env;
  for (auto entry : SplitNul(data)) {
    size_t eq = entry.find('=');
    if (eq == std::string_view::npos || eq == 0) continue;
    env[std::string(entry.substr(0, eq))] = std::string(entry.substr(eq + 1));
  }
  return env;
}

Result<ProcStatus> ParseStatus(std::string_view text) {
  ProcStatus st;
  bool have_name = false;
  for (auto line : SplitLines(text)) {
    size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    std::string_view key = line.substr(0, colon);
    std::string_view val = Trim(line.substr(colon + 1));
    if (key == "Name") {
      st.name = std::string(val);
      have_name = true;
    } else if (key == "PPid") {
      st.ppid = ParsePid(val);
      if (!st.ppid) return InputError("status: field PPid: not a number: '" + std::string(val) + "'");
    } else if (key == "Uid") {
      auto fields = Split(val, '\t');
      st.uid = ParsePid(fields.empty() ? val : Trim(fields[0]));
      if (!st.uid) return InputError("status: field Uid: not a number: '" + std::string(val) + "'");
    } else if (key == "VmRSS") {
      // "123456 kB"
      auto parts = Split(val, ' ');
      auto kb = parts.empty() ? std::nullopt : ParseUint(parts[0]);
      if (!kb || parts.size() != 2 || parts[1] != "kB" || *kb > (UINT64_MAX >> 10))
        return InputError("status: field VmRSS: expected '<n> kB', got '" + std::string(val) + "'");
      st.rss_bytes = *kb * 1024;
    }
  }
  if (!have_name) return InputError("status: field Name: missing");
  return st;
}

Result<ProcStat> ParseStat(std::string_view text) {
  size_t open = text.find('(');
  size_t close = text.rfind(')');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open)
    return InputError("stat: no '(comm)' field");
  ProcStat st;
  auto pid = ParsePid(Trim(text.substr(0, open)));
  if (!pid) return InputError("stat: field 1 (pid): not a number");
  st.pid = *pid;
  st.comm = std::string(text.substr(open + 1, close - open - 1));
  std::vector<std::string_view> rest;
  for (auto f : Split(Trim(text.substr(close + 1)), ' '))
    if (!f.empty()) rest.push_back(f);
  // rest[0] is field 3 (state); field N is rest[N-3].
  if (rest.size() < 20) return InputError("stat: fewer than 22 fields");
  if (rest[0].size() != 1) return InputError("stat: field 3 (state): not one letter");
  st.state = rest[0][0];
  auto ppid = ParsePid(rest[1]);
  auto session = ParsePid(rest[3]);
  auto start = ParseUint(rest[19]);
  if (!ppid) return InputError("stat: field 4 (ppid): not a number");
  if (!session) return InputError("stat: field 6 (session): not a number");
  if (!start) return InputError("stat: field 22 (starttime): not a number");
  st.ppid = *ppid;
  st.session = *session;
  st.flags = ParseUint(rest[6]);
  st.start_ticks = *start;
  return st;
}

namespace {
/// A read charged to the thread's read budget (read_budget.h); nullopt when it failed.
std::optional<std::string> BudgetedRead(const HostFs& fs, const std::string& path, size_t max_bytes) {
  auto text = fs.Read(path, max_bytes);
  if (!text) return std::nullopt;
  ChargeRead(text->size());
  return std::move(*text);
}

/// argv: whole (up to kMaxArgBytes) outside a budget, its first kBudgetedArgvBytes inside one.
std::optional<std::string> ReadCmdline(const HostFs& fs, const std::string& path) {
  if (!InReadBudgetScope()) return BudgetedRead(fs, path, kMaxArgBytes);
  auto text = fs.ReadHead(path, kBudgetedArgvBytes);
  if (!text) return std::nullopt;
  ChargeRead(text->size());
  return std::move(*text);
}
}  // namespace

Result<ProcessInfo> ReadProcess(const HostFs& fs, uint32_t pid) {
  const std::string dir = "/proc/" + std::to_string(pid);
  auto status_text = BudgetedRead(fs, dir + "/status", kMaxStatusBytes);
  if (!status_text) return NotFound(dir + ": gone or unreadable");
  auto status = ParseStatus(*status_text);
  if (!status) return NotFound(dir + "/" + status.error().message);
  auto cmdline = ReadCmdline(fs, dir + "/cmdline");
  if (!cmdline) return NotFound(dir + ": gone or unreadable");

  ProcessInfo p;
  p.pid = pid;
  p.name = status->name;
  p.ppid = status->ppid.value_or(0);
  p.uid = status->uid;
  p.rss_bytes = status->rss_bytes;
  p.argv = ParseCmdline(*cmdline);
  if (fs.is_real_root() && !PidSpace::Real().same()) p.nspid = ParseNsPid(*status_text);
  if (auto stat_text = BudgetedRead(fs, dir + "/stat", kMaxStatBytes)) {
    if (auto st = ParseStat(*stat_text)) {
      p.session = st->session;
      if (!status->ppid) p.ppid = st->ppid;
    }
  }
  if (p.argv.empty()) return p;  // kernel thread: no environment worth reading
  if (ReadBudgetSpent()) return p;  // the collection's budget ran out: what is read so far
  if (auto environ = BudgetedRead(fs, dir + "/environ", kMaxArgBytes)) {
    p.env = ParseEnviron(*environ);
    p.env_readable = true;
  }
  if (IsPythonInterpreter(p.argv[0])) {
    // A CUDA context shows as an open /dev/nvidia* (workloads.md §1); probed for interpreters only.
    if (auto fds = fs.List(dir + "/fd", kMaxFdsProbed)) {
      for (const auto& fd : *fds) {
        if (ReadBudgetSpent()) break;
        auto target = fs.ReadLink(dir + "/fd/" + fd);
        ChargeRead(fd.size() + (target ? target->size() : 0));
        if (target && StartsWith(*target, "/dev/nvidia")) {
          p.nvidia_fd = true;
          break;
        }
      }
    }
  }
  return p;
}

Result<std::vector<ProcessInfo>> ReadProcessTable(const HostFs& fs) {
  auto names = fs.List("/proc");
  if (!names) return NotFound("/proc: cannot list the process table");
  std::vector<uint32_t> pids;
  for (const auto& n : *names)
    if (auto pid = ParsePid(n)) pids.push_back(*pid);
  std::sort(pids.begin(), pids.end());
  std::vector<ProcessInfo> out;
  for (uint32_t pid : pids) {
    if (ReadBudgetSpent()) break;  // the rest are skipped; the budget says why
    if (auto p = ReadProcess(fs, pid)) out.push_back(std::move(*p));
  }
  return out;
}

std::string ReadScriptHead(const HostFs& fs, const ProcessInfo& p) {
  if (p.argv.size() < 2 || !IsPythonInterpreter(p.argv[0])) return "";
  size_t i = 1;
  while (i < p.argv.size() && StartsWith(p.argv[i], "-") && p.argv[i] != "-m") ++i;
  if (i >= p.argv.size() || p.argv[i] == "-m" || !EndsWith(p.argv[i], ".py")) return "";
  std::string path = p.argv[i];
  if (path[0] != '/') {
    auto cwd = fs.ReadLink("/proc/" + std::to_string(p.pid) + "/cwd");
    if (!cwd) return "";
    path = *cwd + "/" + path;
  }
  if (!p.uid || ReadBudgetSpent()) return "";
  // Another user names this file: read it as ReadForProcess allows (no link, no FIFO,
  // no /proc, owned by the process's uid or root), so root's `ps` cannot be made to read for them.
  auto text = ReadForProcess(fs, path, *p.uid, kMaxScript);
  return text ? *text : "";
}

}  // namespace sparkops
