#pragma once
/// /proc's PIDs against this process's own (getpid, fork, kill). They are the same on a normal host
/// and in a container. They differ inside a PID namespace whose /proc was not remounted
/// (`unshare --pid` without --mount-proc, some sandboxes and CI runners): /proc then lists the outer
/// namespace's PIDs, so a PID read there must never be signalled as it is, and a child's PID must be
/// looked up under its outer number. "NSpid:" in /proc/PID/status (Linux >= 4.1) lists a process's
/// PID in each namespace from /proc's down to its own; /proc/PID/ns/pid names its namespace.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "host/hostfs.h"

namespace sparkops {

/// The "NSpid:" values of a /proc/PID/status text, /proc's namespace first; empty when the line is
/// missing (Linux < 4.1) or malformed.
std::vector<uint32_t> ParseNsPid(std::string_view status);

class PidSpace {
 public:
  /// From this process's own status text as /proc shows it, its getpid(), and the target of
  /// /proc/self/ns/pid. An empty status (no /proc to read) means the spaces agree: nothing in /proc
  /// will be found either way.
  PidSpace(std::string_view self_status, uint32_t self_pid, std::string self_ns);
  /// The real machine's, read once per process (thread-safe).
  static const PidSpace& Real();

  /// /proc's PIDs are this process's: no translation.
  bool same() const { return known_ && depth_ == 0; }
  /// False: the spaces differ and NSpid is missing, so no PID from /proc can be mapped.
  bool known() const { return known_; }
  /// How many namespaces this process's lies below /proc's (0 when same()).
  size_t depth() const { return depth_; }
  /// This process as /proc shows it.
  uint32_t self_proc_pid() const { return self_proc_; }

  /// The PID that kill()/waitpid() take for the process /proc shows as `proc_pid`, given its NSpid
  /// and its namespace link. nullopt when it is not in this process's namespace or that cannot be
  /// told: such a process is never signalled.
  std::optional<uint32_t> Local(uint32_t proc_pid, const std::vector<uint32_t>& nspid, std::string_view ns) const;
  /// True when a process with this NSpid and namespace link has local PID `local`.
  bool Matches(uint32_t local, const std::vector<uint32_t>& nspid, std::string_view ns) const;

 private:
  size_t depth_ = 0;
  bool known_ = true;
  uint32_t self_proc_ = 0;
  std::string ns_;
};

/// The real /proc's PID of the process this one knows as `local` (a child from fork, getpid()):
/// `local` itself when the spaces agree, else found by a scan of /proc/*/status. nullopt: not found.
std::optional<uint32_t> ProcPidOf(uint32_t local);
/// The same under `fs`: on a fixture root its /proc numbers are the fixture's, so `local` itself.
std::optional<uint32_t> ProcPidOf(const HostFs& fs, uint32_t local);
/// The PID this process signals for the real /proc's `proc_pid` (`nspid`: its NSpid when already
/// read). nullopt: outside this namespace, gone, or the spaces cannot be mapped.
std::optional<uint32_t> LocalPidOf(uint32_t proc_pid, const std::vector<uint32_t>* nspid = nullptr);

}  // namespace sparkops
