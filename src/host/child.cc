#include "host/child.h"

#include <fcntl.h>
#include <pty.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "host/exec_pipe.h"

namespace sparkops {

int ShellStatus(int st) {
  if (WIFEXITED(st)) return WEXITSTATUS(st);
  if (WIFSIGNALED(st)) return 128 + WTERMSIG(st);
  return 1;
}

Result<Child> SpawnChild(const std::vector<std::string>& argv, bool use_pty, int cgroup_procs_fd) {
  if (argv.empty()) return InputError("run: no command given after --");
  std::vector<char*> cargv;
  for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);

  int exec_pipe[2];
  if (::pipe2(exec_pipe, O_CLOEXEC) != 0) return IoError(std::string("pipe: ") + std::strerror(errno));
  Child c;
  c.pty = use_pty;
  int out_pipe[2] = {-1, -1}, err_pipe[2] = {-1, -1};
  int master = -1, slave = -1;
  if (use_pty) {
    winsize ws{};
    bool have_ws = ::ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0;
    if (::openpty(&master, &slave, nullptr, nullptr, have_ws ? &ws : nullptr) != 0)
      return IoError(std::string("openpty: ") + std::strerror(errno));
    ::fcntl(master, F_SETFD, FD_CLOEXEC);
  } else if (::pipe2(out_pipe, O_CLOEXEC) != 0 || ::pipe2(err_pipe, O_CLOEXEC) != 0) {
    return IoError(std::string("pipe: ") + std::strerror(errno));
  }
  pid_t pid = ::fork();
  if (pid < 0) return IoError(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    if (cgroup_procs_fd >= 0) (void)!::write(cgroup_procs_fd, "0", 1);  // run checks the move (JobHold::Holds)
    ::setpgid(0, 0);
    if (use_pty) {
      ::setsid();  // new session so the pty becomes the controlling terminal
      ::ioctl(slave, TIOCSCTTY, 0);
      ::dup2(slave, 0), ::dup2(slave, 1), ::dup2(slave, 2);
      if (slave > 2) ::close(slave);
    } else {
      ::dup2(out_pipe[1], 1);
      ::dup2(err_pipe[1], 2);
    }
    for (int s : {SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGCHLD}) ::signal(s, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::execvp(cargv[0], cargv.data());
    ReportExecFailure(exec_pipe[1]);
  }
  if (!use_pty) ::setpgid(pid, pid);
  ::close(exec_pipe[1]);
  if (use_pty) {
    ::close(slave);
    c.out_fd = master;
  } else {
    ::close(out_pipe[1]);
    ::close(err_pipe[1]);
    c.out_fd = out_pipe[0];
    c.err_fd = err_pipe[0];
  }
  c.pid = pid;
  if (int exec_errno = ReadExecFailure(exec_pipe[0]); exec_errno != 0) {
    ::waitpid(pid, nullptr, 0);
    if (c.out_fd >= 0) ::close(c.out_fd);
    if (c.err_fd >= 0) ::close(c.err_fd);
    return NotFound(argv[0] + ": cannot start: " + std::strerror(exec_errno));
  }
  return c;
}

void SignalChildGroup(const Child& c, int sig) {
  if (c.pid > 0) ::kill(-c.pid, sig);
}

int WaitChild(const Child& c) {
  int st = 0;
  while (::waitpid(c.pid, &st, 0) < 0 && errno == EINTR) {}
  return ShellStatus(st);
}

std::optional<int> PollChild(const Child& c) {
  int st = 0;
  pid_t w = ::waitpid(c.pid, &st, WNOHANG);
  if (w == c.pid) return ShellStatus(st);
  return std::nullopt;
}

}  // namespace sparkops
