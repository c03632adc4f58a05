#pragma once
/// Signals that reach only the process chosen: a pidfd (Linux >= 5.3) names one process for as long
/// as the descriptor is open, whatever its PID is reused for later. Raw syscalls where glibc lacks
/// the wrappers (glibc < 2.36).
#include <sys/types.h>

#include <cstdint>
#include <optional>

#include "host/hostfs.h"

namespace sparkops::guard {

/// An open pidfd (closed on destruction), or none.
class Pidfd {
 public:
  Pidfd() = default;
  /// Opens a pidfd for `pid` and checks, after opening, that the process /proc under `fs` numbers
  /// `proc_pid` (the same process; another number inside a PID namespace whose /proc was not
  /// remounted) still has `start_ticks`: the descriptor names the process that was read, not a later
  /// one with its PID. nullopt with `*err` set (ESRCH: gone or replaced; ENOSYS: no pidfd here).
  static std::optional<Pidfd> Open(const HostFs& fs, pid_t pid, uint32_t proc_pid, uint64_t start_ticks, int* err);
  /// True when this kernel has pidfd_open (Linux >= 5.3, and not refused by a seccomp filter).
  static bool Supported();
  ~Pidfd();
  Pidfd(Pidfd&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
  Pidfd& operator=(Pidfd&& o) noexcept;
  Pidfd(const Pidfd&) = delete;
  Pidfd& operator=(const Pidfd&) = delete;

  /// pidfd_send_signal; 0, or the errno (ESRCH: it has exited).
  int Signal(int sig) const;
  /// Waits up to `timeout_s` for the whole thread group to exit (poll on the pidfd). True once it has.
  bool WaitExit(double timeout_s) const;
  int fd() const { return fd_; }

 private:
  explicit Pidfd(int fd) : fd_(fd) {}
  int fd_ = -1;
};

}  // namespace sparkops::guard
