#pragma once
/// The close-on-exec pipe that tells a parent whether its forked child's exec failed: the child
/// writes errno and exits; a successful exec closes the pipe with nothing written.
#include <unistd.h>

#include <cerrno>

namespace sparkops {

/// In the child, after a failed exec: report errno to the parent, then _exit(127).
[[noreturn]] inline void ReportExecFailure(int write_fd) {
  int e = errno;
  ssize_t ignored = ::write(write_fd, &e, sizeof e);
  (void)ignored;
  ::_exit(127);
}

/// In the parent (the write end already closed): the child's exec errno, or 0 when exec
/// succeeded. Closes `read_fd`.
inline int ReadExecFailure(int read_fd) {
  int exec_errno = 0;
  ssize_t n;
  do n = ::read(read_fd, &exec_errno, sizeof exec_errno);
  while (n < 0 && errno == EINTR);
  ::close(read_fd);
  return n == static_cast<ssize_t>(sizeof exec_errno) ? exec_errno : 0;
}

}  // namespace sparkops
