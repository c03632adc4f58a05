#pragma once
/// `sparkops guard`'s choice of the process to stop, like earlyoom's but UMA-aware: on a Spark a
/// job's GPU memory is taken from the same pool as its resident memory, so the score is
/// RSS + GPU memory. Chosen from facts the kernel keeps (docs/memory-guard.md): the kernel-thread
/// flag, the thread group's memory, the executable, uid, cgroup and oom_score_adj; the command line
/// (text its owner writes) only narrows or orders the choice (--only/--prefer), never protects.
/// Pure (table-tested).
#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "guard/pattern.h"

namespace sparkops::guard {

struct Candidate {
  uint32_t pid = 0;       ///< the PID this process signals it by
  std::string name;       ///< comm (its owner may set it)
  std::string cmdline;    ///< argv joined by spaces, at most kMatchBytes (its owner may rewrite it)
  std::string exe;        ///< /proc/PID/exe target ("" unreadable); a live thread's for a zombie leader
  std::optional<uint32_t> uid;  ///< real uid
  std::string cgroup;     ///< cgroup v2 path ("0::" line), or the name=systemd v1 path; "" unknown
  bool kthread = false;   ///< PF_KTHREAD in stat's flags, or a child of kthreadd (PID 2 with that flag)
  int oom_score_adj = 0;  ///< -1000: never chosen (the kernel's own rule)
  std::optional<int> oom_score;  ///< the kernel's badness, 0..2000: the tie-breaker
  uint64_t start_ticks = 0;      ///< stat field 22: with the PID, names this process and no other
  std::optional<uint64_t> rss;   ///< the thread group's resident memory (a live thread's VmRSS)
  std::optional<uint64_t> gpu;   ///< GPU memory NVML reports for it (absent: not reported)
  uint64_t Score() const { return rss.value_or(0) + gpu.value_or(0); }
};

struct VictimRules {
  std::optional<Pattern> prefer;  ///< exe path or command line: among those matching, the largest first
  std::optional<Pattern> only;    ///< exe path or command line: when set, only these are candidates
  std::optional<Pattern> avoid;   ///< exe path or cgroup path: never chosen
  std::set<uint32_t> avoid_uids;  ///< --avoid-user: never chosen
  std::set<std::string> avoid_units;  ///< --avoid-unit: systemd units (x.service, y.scope) never chosen
  std::set<uint32_t> protect;     ///< the guard itself and its ancestors: never chosen
};

/// The systemd unit a cgroup path names: its last component ending in .service or .scope
/// ("/system.slice/sshd.service" -> "sshd.service"); "" when none.
std::string UnitOf(std::string_view cgroup);

/// How the host guard stops the victim it chose (like systemd-oomd, a whole unit where it can).
struct StopChoice {
  std::string unit;         ///< "x.service" / "y.scope": stop the unit's whole cgroup; "" the process alone
  std::string cgroup;       ///< the unit's cgroup v2 path (the victim's), when `unit` is set
  std::string why_process;  ///< why the process alone, when `unit` is ""
};

/// Pure: the whole unit when the victim's cgroup (v2 path) has a .service or .scope unit as its
/// last component, directly under /system.slice or a slice below /system.slice or /user.slice; the
/// unit is not in --avoid-unit; and no cgroup in `protected_cgroups` (those of the guard, its
/// ancestors and PID 1) is that cgroup or below it. Otherwise the process alone, with the reason.
StopChoice ChooseStop(const Candidate& victim, const std::set<std::string>& protected_cgroups,
                      const VictimRules& rules);

/// Index of the victim in `c`, or nullopt when none may be chosen. Never PID <= 1, a protected PID,
/// a kernel thread, oom_score_adj -1000, or a process with no resident memory reading (it has
/// exited). --only keeps those whose exe or command line matches; --avoid/--avoid-user/--avoid-unit
/// drop by exe, cgroup, uid, unit. Among the preferred (if any), the highest score; ties go to the
/// higher kernel oom_score, then the lower PID.
std::optional<size_t> PickVictim(std::span<const Candidate> c, const VictimRules& rules);

}  // namespace sparkops::guard
