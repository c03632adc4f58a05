#include "host/kmsg.h"

#include <algorithm>

#include "base/strings.h"

namespace sparkops {

namespace {

constexpr size_t kMaxText = 8192;
constexpr size_t kMaxDict = 32;
constexpr size_t kMaxLine = 300;

bool Contains(std::string_view s, std::string_view needle) { return s.find(needle) != std::string_view::npos; }

/// The decimal number at the start of `s` (at most 18 digits), and how many characters it took.
std::optional<int64_t> LeadingNumber(std::string_view s, size_t* used) {
  size_t i = 0;
  while (i < s.size() && i < 18 && IsDigit(s[i])) ++i;
  if (i == 0) return std::nullopt;
  if (used) *used = i;
  return ParseInt(s.substr(0, i));
}

/// The value after `key` up to one of `stops` (or the end).
std::string_view ValueAfter(std::string_view s, std::string_view key, std::string_view stops) {
  size_t at = s.find(key);
  if (at == std::string_view::npos) return {};
  std::string_view rest = s.substr(at + key.size());
  return rest.substr(0, std::min(rest.find_first_of(stops), rest.size()));
}

KernelSign Sign(KernelSignKind kind, const KmsgRecord& r) {
  KernelSign s;
  s.kind = kind;
  s.seq = r.seq;
  s.usec = r.usec;
  s.line = r.text.substr(0, kMaxLine);
  return s;
}

// NVRM: ... Out of memory [NV_ERR_NO_MEMORY] (0x00000051) returned from _memdescAllocInternal(...)
std::optional<KernelSign> MatchNvrmNoMemory(const KmsgRecord& r) {
  if (!Contains(r.text, "NVRM") || !Contains(r.text, "NV_ERR_NO_MEMORY")) return std::nullopt;
  return Sign(KernelSignKind::kNvrmNoMemory, r);
}

// NVRM: Xid (PCI:0000:cb:00): 109, pid=1797828, name=pt_main_thread, Ch 00000008, ...
// NVRM: Xid (PCI:0000:cb:00): 13, pid='<unknown>', name=<unknown>, Graphics SM Warp Exception ...
std::optional<KernelSign> MatchXid(const KmsgRecord& r) {
  size_t at = r.text.find("NVRM: Xid ");
  if (at == std::string::npos) return std::nullopt;
  std::string_view rest = std::string_view(r.text).substr(at + 10);
  size_t colon = rest.find("): ");
  if (colon == std::string_view::npos) return std::nullopt;
  rest = rest.substr(colon + 3);
  auto code = LeadingNumber(rest, nullptr);
  if (!code) return std::nullopt;
  KernelSign s = Sign(KernelSignKind::kXid, r);
  s.xid = static_cast<int>(*code);
  std::string_view pid = ValueAfter(rest, "pid=", ", ");
  if (auto p = ParseInt(pid)) s.pid = *p;
  std::string_view name = ValueAfter(rest, "name=", ",");
  if (!name.empty() && name != "<unknown>") s.name = std::string(name.substr(0, 64));
  return s;
}

// Out of memory: Killed process 4821 (python3) total-vm:..., anon-rss:...
// Memory cgroup out of memory: Killed process 4821 (python3) ...
// oom-kill:constraint=CONSTRAINT_NONE,nodemask=(null),cpuset=/,mems_allowed=0,global_oom,...,task=python3,pid=4821,uid=1000
std::optional<KernelSign> MatchOomKill(const KmsgRecord& r) {
  std::string_view t = r.text;
  size_t at = t.find("ut of memory: Killed process ");
  if (at != std::string_view::npos && at > 0 && (t[at - 1] == 'O' || t[at - 1] == 'o')) {
    std::string_view rest = t.substr(at + 29);
    size_t used = 0;
    auto pid = LeadingNumber(rest, &used);
    if (!pid) return std::nullopt;
    KernelSign s = Sign(KernelSignKind::kOomKill, r);
    s.pid = *pid;
    rest = rest.substr(used);
    if (StartsWith(rest, " (")) {
      size_t close = rest.find(')');
      if (close != std::string_view::npos) s.name = std::string(rest.substr(2, std::min<size_t>(close - 2, 64)));
    }
    return s;
  }
  if (!StartsWith(t, "oom-kill:")) return std::nullopt;
  KernelSign s = Sign(KernelSignKind::kOomKill, r);
  if (auto p = ParseInt(ValueAfter(t, ",pid=", ","))) s.pid = *p;
  std::string_view name = ValueAfter(t, ",task=", ",");
  s.name = std::string(name.substr(0, 64));
  return s;
}

/// "NAME:PID" -> name and pid (the name may itself hold ':').
void SplitTask(std::string_view task, KernelSign* s) {
  size_t colon = task.rfind(':');
  if (colon == std::string_view::npos) return;
  if (auto p = ParseInt(task.substr(colon + 1))) {
    s->pid = *p;
    s->name = std::string(task.substr(0, std::min<size_t>(colon, 64)));
  }
}

// INFO: task python3:4821 blocked for more than 122 seconds.
std::optional<KernelSign> MatchHungTask(const KmsgRecord& r) {
  std::string_view t = r.text;
  if (!StartsWith(t, "INFO: task ") || !Contains(t, " blocked for more than ")) return std::nullopt;
  KernelSign s = Sign(KernelSignKind::kHungTask, r);
  std::string_view task = t.substr(11);
  SplitTask(task.substr(0, task.find(" blocked for more than ")), &s);
  return s;
}

// watchdog: BUG: soft lockup - CPU#7 stuck for 26s! [python3:4821]
// watchdog: Watchdog detected hard LOCKUP on cpu 5
std::optional<KernelSign> MatchLockup(const KmsgRecord& r) {
  std::string_view t = r.text;
  bool soft = Contains(t, "BUG: soft lockup");
  if (!soft && !Contains(t, "hard LOCKUP")) return std::nullopt;
  KernelSign s = Sign(KernelSignKind::kSoftLockup, r);
  size_t open = t.rfind('[');
  if (soft && open != std::string_view::npos && EndsWith(t, "]"))
    SplitTask(t.substr(open + 1, t.size() - open - 2), &s);
  return s;
}

using Matcher = std::optional<KernelSign> (*)(const KmsgRecord&);
constexpr Matcher kMatchers[] = {&MatchNvrmNoMemory, &MatchXid, &MatchOomKill, &MatchHungTask, &MatchLockup};

}  // namespace

const std::vector<KernelSignDef>& KernelSignTable() {
  static const std::vector<KernelSignDef> kTable = {
      {KernelSignKind::kNvrmNoMemory, "nvrm_no_memory", "kernel_nvrm_no_memory",
       "the NVIDIA driver failed to allocate memory; on GB10 the host may wedge within minutes",
       "NVIDIA/open-gpu-kernel-modules#1358; NVIDIA/dgx-spark-playbooks#97"},
      {KernelSignKind::kXid, "xid", "kernel_xid", "the NVIDIA driver reported a GPU error (Xid code)",
       "NVIDIA Xid catalogue (docs.nvidia.com/deploy/xid-errors)"},
      {KernelSignKind::kOomKill, "oom_kill", "kernel_oom_kill", "the kernel's OOM killer killed a process",
       "Linux mm/oom_kill.c"},
      {KernelSignKind::kHungTask, "hung_task", "kernel_hung_task",
       "a task was blocked in the kernel for minutes (memory or I/O stall)", "Linux kernel/hung_task.c"},
      {KernelSignKind::kSoftLockup, "lockup", "kernel_lockup", "a CPU was stuck in the kernel (soft or hard lockup)",
       "Linux kernel/watchdog.c"},
  };
  return kTable;
}

const KernelSignDef& KernelSignInfo(KernelSignKind kind) { return KernelSignTable()[static_cast<size_t>(kind)]; }

Result<KmsgRecord> ParseKmsgRecord(std::string_view record) {
  size_t nl = record.find('\n');
  std::string_view head = record.substr(0, nl);
  size_t semi = head.find(';');
  if (semi == std::string_view::npos) return InputError("kmsg record: no ';' after the header");
  auto fields = Split(head.substr(0, semi), ',');
  if (fields.size() < 4) return InputError("kmsg record: header has fewer than 4 fields (prio,seq,usec,flags)");
  auto prio = ParseUint(fields[0]);
  auto seq = ParseUint(fields[1]);
  auto usec = ParseUint(fields[2]);
  if (!prio || *prio > 0xffffff)
    return InputError("kmsg record: bad prio '" + std::string(fields[0].substr(0, 20)) + "'");
  if (!seq) return InputError("kmsg record: bad seq '" + std::string(fields[1].substr(0, 20)) + "'");
  if (!usec) return InputError("kmsg record: bad usec '" + std::string(fields[2].substr(0, 20)) + "'");
  KmsgRecord r;
  r.priority = static_cast<int>(*prio & 7);
  r.facility = static_cast<int>(*prio >> 3);
  r.seq = *seq;
  r.usec = *usec;
  r.text = std::string(head.substr(semi + 1, kMaxText));
  while (nl != std::string_view::npos) {
    record = record.substr(nl + 1);
    nl = record.find('\n');
    std::string_view line = record.substr(0, nl);
    if (line.empty()) continue;
    if (line[0] != ' ') return InputError("kmsg record: a continuation line must start with a space");
    size_t eq = line.find('=');
    if (eq == std::string_view::npos || r.dict.size() >= kMaxDict) continue;
    r.dict.emplace_back(std::string(line.substr(1, std::min<size_t>(eq - 1, 64))),
                        std::string(line.substr(eq + 1, 256)));
  }
  return r;
}

std::vector<KmsgRecord> ParseKmsgText(std::string_view text, size_t* bad) {
  std::vector<KmsgRecord> out;
  size_t pos = 0;
  while (pos < text.size()) {
    // One record: a header line, then every following line that starts with a space.
    size_t end = text.find('\n', pos);
    while (end != std::string_view::npos && end + 1 < text.size() && text[end + 1] == ' ')
      end = text.find('\n', end + 1);
    if (end == std::string_view::npos) end = text.size();
    std::string_view one = text.substr(pos, end - pos);
    pos = end + 1;
    if (Trim(one).empty()) continue;
    auto r = ParseKmsgRecord(one);
    if (r) {
      out.push_back(std::move(*r));
    } else if (bad) {
      ++*bad;
    }
  }
  return out;
}

std::optional<KernelSign> MatchKernelSign(const KmsgRecord& record) {
  for (Matcher m : kMatchers) {
    if (auto s = m(record)) return s;
  }
  return std::nullopt;
}

void KernelSignals::Add(const KmsgRecord& record) {
  ++records;
  last_seq = record.seq;
  auto s = MatchKernelSign(record);
  if (!s) return;
  if (s->kind == KernelSignKind::kOomKill && !signs.empty()) {
    // The `oom-kill:` summary and the `Killed process` line of one kill: merge into the first.
    KernelSign& prev = signs.back();
    if (prev.kind == KernelSignKind::kOomKill && prev.pid && prev.pid == s->pid && s->seq - prev.seq <= 2 &&
        StartsWith(prev.line, "oom-kill:") != StartsWith(s->line, "oom-kill:")) {
      if (!StartsWith(s->line, "oom-kill:")) prev.line = s->line;
      return;
    }
  }
  ++counts[static_cast<int>(s->kind)];
  if (signs.size() >= kMaxKept) signs.erase(signs.begin());
  signs.push_back(std::move(*s));
}

const KernelSign* KernelSignals::Last(KernelSignKind kind) const {
  for (auto it = signs.rbegin(); it != signs.rend(); ++it) {
    if (it->kind == kind) return &*it;
  }
  return nullptr;
}

}  // namespace sparkops
