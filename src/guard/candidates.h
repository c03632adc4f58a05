#pragma once
/// Reads the guard's candidates from /proc (under a HostFs, so a fixture tree stands in for a
/// machine): every number is bounded (stat 4 KiB, status 16 KiB, cmdline kMatchBytes, at most
/// kMaxTasks threads looked at per process). Parsers pure and table-tested.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "guard/victim.h"
#include "host/hostfs.h"

namespace sparkops::guard {

inline constexpr uint64_t kPfKthread = 0x00200000;  ///< PF_KTHREAD in stat field 9 (include/linux/sched.h)
inline constexpr size_t kMaxTasks = 64;             ///< threads tried for a zombie leader's memory

/// The /proc/PID/stat fields the guard uses (proc(5) numbering).
struct StatFacts {
  std::string comm;          ///< field 2, found by the last ')'
  char state = '?';          ///< field 3
  uint32_t ppid = 0;         ///< field 4
  uint64_t flags = 0;        ///< field 9
  uint64_t start_ticks = 0;  ///< field 22
};
std::optional<StatFacts> ParseStatFacts(std::string_view stat);

/// One read process: the candidate (pid as /proc numbers it), its parent and its NSpid.
struct ProcFacts {
  Candidate c;
  uint32_t ppid = 0;
  std::vector<uint32_t> nspid;
};

/// Reads /proc/PID under `fs`; nullopt when it vanished or its stat cannot be read. A thread group
/// whose leader is a zombie takes its memory and executable from a live thread (task/*/).
std::optional<ProcFacts> ReadProcFacts(const HostFs& fs, uint32_t pid);
/// Every numeric entry of /proc under `fs`, in no particular order. A child of PID 2 counts as a
/// kernel thread when PID 2 has PF_KTHREAD (kthreadd).
std::vector<ProcFacts> ReadAllProcFacts(const HostFs& fs);

/// The start ticks of `pid` in `fs`'s /proc right now (to check that a PID still names the process
/// chosen); nullopt when it is gone.
std::optional<uint64_t> StartTicksOf(const HostFs& fs, uint32_t pid);

}  // namespace sparkops::guard
