#pragma once
/// `sparkops guard`'s choice of the process to stop, like earlyoom's but UMA-aware: on a Spark a
/// job's GPU memory is taken from the same pool as its resident memory, so the score is
/// RSS + GPU memory. Pure (table-tested).
#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <regex>
#include <span>
#include <string>
#include <vector>

namespace sparkops::guard {

struct Candidate {
  uint32_t pid = 0;
  std::string name;     ///< comm
  std::string cmdline;  ///< argv joined by spaces ("" for a kernel thread)
  std::optional<uint64_t> rss;
  std::optional<uint64_t> gpu;  ///< GPU memory NVML reports for it (absent: not reported)
  uint64_t Score() const { return rss.value_or(0) + gpu.value_or(0); }
};

struct VictimRules {
  std::optional<std::regex> prefer;  ///< among those matching, the largest is chosen first
  std::optional<std::regex> avoid;   ///< never chosen
  std::optional<std::regex> only;    ///< when set, only these are candidates
  uint32_t self = 0;                 ///< never chosen (also PID 1 and kernel threads)
};

/// Index of the victim in `c`, or nullopt when none may be chosen. Never PID 1, `self`, a kernel
/// thread (empty cmdline) or a process with no resident memory reading; the regexes are searched in
/// the command line (else the name). Ties go to the lower PID.
std::optional<size_t> PickVictim(std::span<const Candidate> c, const VictimRules& rules);

}  // namespace sparkops::guard
