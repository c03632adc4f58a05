#pragma once
/// Per-CPU time from /proc/stat and the CPUs a process may run on (issue 30): the job's share of
/// *its* CPUs against the rest of the host on those CPUs, and steal time on virtual machines.
/// Readers are the callers' (telemetry/job_tree.cc); these parsers are pure.
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "base/error.h"
#include "host/hostfs.h"

namespace sparkops {

/// The most CPUs a list or /proc/stat may name here (bounds every allocation).
inline constexpr unsigned kMaxCpus = 8192;

/// One `cpu`/`cpuN` line of /proc/stat, in clock ticks (USER_HZ).
struct CpuTimes {
  uint64_t busy = 0;   ///< user + nice + system + irq + softirq (guest time is inside user)
  uint64_t steal = 0;  ///< time the hypervisor ran something else while this CPU wanted to run
  uint64_t total = 0;  ///< busy + idle + iowait + steal
};
struct StatCpus {
  CpuTimes all;                                        ///< the aggregate `cpu` line
  std::vector<std::pair<unsigned, CpuTimes>> per_cpu;  ///< `cpuN` lines, sorted by N
};

/// Pure: the cpu lines of /proc/stat. Older kernels' lines without steal count it as 0. Error
/// naming the line and field when a number is malformed, or when there is no aggregate line.
Result<StatCpus> ParseCpuTimes(std::string_view stat);

/// Pure: a CPU list as in /proc/PID/status `Cpus_allowed_list` or cpuset.cpus ("0-3,8,10-11"),
/// sorted, each CPU once. Error for a malformed item, a reversed range or a CPU ≥ kMaxCpus.
Result<std::vector<unsigned>> ParseCpuList(std::string_view list);

/// Pure: the `Cpus_allowed_list:` value of a /proc/PID/status text, parsed (NotFound without it).
Result<std::vector<unsigned>> ParseCpusAllowed(std::string_view status);

/// Pure: the first field of /proc/uptime ("12345.67 23456.78"), seconds since boot.
Result<double> ParseUptime(std::string_view text);

/// Readers under the HostFs root (bounded): /proc/stat, /proc/PID/status's CPU list, /proc/uptime.
Result<StatCpus> ReadCpuTimes(const HostFs& fs);
Result<std::vector<unsigned>> ReadCpusAllowed(const HostFs& fs, uint32_t pid);
Result<double> ReadUptime(const HostFs& fs);

/// What happened between two readings on a set of CPUs (`cpus` sorted; empty: every CPU).
struct CpuDelta {
  double busy_cores = 0;  ///< busy ticks / ticks-per-second / wall seconds
  std::optional<double> steal_pct;  ///< steal share of the CPUs' time, percent (none when no time passed)
  unsigned cpus = 0;      ///< how many of `cpus` both readings had
};
/// Pure: `before` → `now` over `dt_s` wall seconds at `hz` ticks per second. nullopt when dt_s or hz
/// is not positive, or when a counter went back (a CPU went offline and returned).
std::optional<CpuDelta> CpuDeltaOn(const StatCpus& before, const StatCpus& now, const std::vector<unsigned>& cpus,
                                   double dt_s, double hz);

}  // namespace sparkops
