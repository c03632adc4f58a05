#pragma once
/// A supervised child process for `sparkops run`: started by argv (no shell) in its own process
/// group, its output through a pseudo-terminal (when we are on a terminal, so progress bars keep
/// working) or through two pipes.
#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "base/error.h"

namespace sparkops {

struct Child {
  pid_t pid = -1;   ///< also the process group id
  int out_fd = -1;  ///< stdout (and stderr when a pty is used)
  int err_fd = -1;  ///< stderr; -1 with a pty
  bool pty = false;
};

/// Starts `argv`. NotFound (with errno text) when it cannot be executed - `run` exits 127 then.
/// With `use_pty`, the child's stdin/stdout/stderr are a new pty sized like our terminal.
/// `cgroup_procs_fd` (>= 0): an open cgroup.procs the child writes "0" to before exec, so that it and
/// every process it starts belong to that cgroup from their first instruction.
Result<Child> SpawnChild(const std::vector<std::string>& argv, bool use_pty, int cgroup_procs_fd = -1);

/// Sends `sig` to the child's whole process group.
void SignalChildGroup(const Child& c, int sig);

/// Waits (blocking) for the child; returns its exit status the way a shell reports it:
/// the exit code, or 128 + signal when killed.
int WaitChild(const Child& c);

/// Non-blocking: the status when the child has exited, else nullopt.
std::optional<int> PollChild(const Child& c);

/// Turns a waitpid() status into the shell convention (code, or 128+signal).
int ShellStatus(int wait_status);

}  // namespace sparkops
