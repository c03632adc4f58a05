#include "guard/pidfd.h"

#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

#include "guard/candidates.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434  // the same number on every architecture (asm-generic and x86_64)
#endif
#ifndef SYS_pidfd_send_signal
#define SYS_pidfd_send_signal 424
#endif

namespace sparkops::guard {

bool Pidfd::Supported() {
  int fd = static_cast<int>(::syscall(SYS_pidfd_open, ::getpid(), 0));
  if (fd < 0) return false;
  ::close(fd);
  return true;
}

std::optional<Pidfd> Pidfd::Open(const HostFs& fs, pid_t pid, uint32_t proc_pid, uint64_t start_ticks, int* err) {
  int fd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  if (fd < 0) {
    *err = errno;
    return std::nullopt;
  }
  Pidfd p(fd);
  auto now = StartTicksOf(fs, proc_pid);
  if (!now || *now != start_ticks) {  // the PID was reused between reading /proc and opening
    *err = ESRCH;
    return std::nullopt;
  }
  return p;
}

Pidfd::~Pidfd() {
  if (fd_ >= 0) ::close(fd_);
}

Pidfd& Pidfd::operator=(Pidfd&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = o.fd_;
    o.fd_ = -1;
  }
  return *this;
}

int Pidfd::Signal(int sig) const {
  if (fd_ < 0) return EBADF;
  return ::syscall(SYS_pidfd_send_signal, fd_, sig, nullptr, 0) == 0 ? 0 : errno;
}

bool Pidfd::WaitExit(double timeout_s) const {
  if (fd_ < 0) return true;
  pollfd p{fd_, POLLIN, 0};
  int ms = timeout_s <= 0 ? 0 : static_cast<int>(timeout_s * 1000);
  return ::poll(&p, 1, ms) > 0;  // EINTR (a signal to the guard) is false: the caller checks why
}

}  // namespace sparkops::guard
