#include "host/command.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "host/exec_pipe.h"

namespace sparkops {

namespace {
void CloseFd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}
}  // namespace

Result<CommandResult> RunCommand(const std::vector<std::string>& argv, const CommandOptions& opts) {
  if (argv.empty() || argv[0].empty()) return InputError("no program to run");
  int out_pipe[2], err_pipe[2], exec_pipe[2];
  if (::pipe2(out_pipe, O_CLOEXEC) != 0) return IoError(std::string("pipe: ") + std::strerror(errno));
  if (::pipe2(err_pipe, O_CLOEXEC) != 0) {
    ::close(out_pipe[0]), ::close(out_pipe[1]);
    return IoError(std::string("pipe: ") + std::strerror(errno));
  }
  if (::pipe2(exec_pipe, O_CLOEXEC) != 0) {
    for (int fd : {out_pipe[0], out_pipe[1], err_pipe[0], err_pipe[1]}) ::close(fd);
    return IoError(std::string("pipe: ") + std::strerror(errno));
  }
  // Build everything the child needs before fork (no allocation after fork).
  std::vector<char*> cargv;
  for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  std::vector<std::string> env_store;
  std::vector<char*> cenv;
  if (opts.env) {
    for (const auto& [k, v] : *opts.env) env_store.push_back(k + "=" + v);
    for (auto& s : env_store) cenv.push_back(s.data());
    cenv.push_back(nullptr);
  }
  pid_t pid = ::fork();
  if (pid < 0) {
    for (int fd : {out_pipe[0], out_pipe[1], err_pipe[0], err_pipe[1], exec_pipe[0], exec_pipe[1]}) ::close(fd);
    return IoError(std::string("fork: ") + std::strerror(errno));
  }
  if (pid == 0) {
    ::setpgid(0, 0);
    int devnull = ::open("/dev/null", O_RDONLY);
    if (devnull >= 0) ::dup2(devnull, 0);
    ::dup2(out_pipe[1], 1);
    ::dup2(err_pipe[1], 2);
    ::signal(SIGPIPE, SIG_DFL);
    if (opts.env) ::execvpe(cargv[0], cargv.data(), cenv.data());
    else ::execvp(cargv[0], cargv.data());
    ReportExecFailure(exec_pipe[1]);
  }
  ::setpgid(pid, pid);  // also from the parent, so the group exists before we might kill it
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  ::close(exec_pipe[1]);
  if (int exec_errno = ReadExecFailure(exec_pipe[0]); exec_errno != 0) {
    ::waitpid(pid, nullptr, 0);
    ::close(out_pipe[0]), ::close(err_pipe[0]);
    return NotFound(argv[0] + ": cannot run: " + std::strerror(exec_errno));
  }

  CommandResult res;
  int fds[2] = {out_pipe[0], err_pipe[0]};
  std::string* bufs[2] = {&res.out, &res.err};
  auto deadline = std::chrono::steady_clock::now() + opts.timeout;
  char buf[65536];
  while (fds[0] >= 0 || fds[1] >= 0) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      res.timed_out = true;
      ::kill(-pid, SIGKILL);
      break;
    }
    pollfd p[2];
    nfds_t np = 0;
    int idx[2];
    for (int i = 0; i < 2; ++i)
      if (fds[i] >= 0) p[np] = {fds[i], POLLIN, 0}, idx[np++] = i;
    int r = ::poll(p, np, static_cast<int>(left.count()));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) break;
    for (nfds_t k = 0; k < np; ++k) {
      if (!(p[k].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      int i = idx[k];
      ssize_t got = ::read(fds[i], buf, sizeof buf);
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) {
        CloseFd(fds[i]);
        continue;
      }
      size_t room = opts.max_output > bufs[i]->size() ? opts.max_output - bufs[i]->size() : 0;
      bufs[i]->append(buf, std::min(room, static_cast<size_t>(got)));
    }
  }
  CloseFd(fds[0]);
  CloseFd(fds[1]);
  int status = 0;
  if (!res.timed_out) {
    // Output closed; give the process the rest of the deadline to exit.
    for (;;) {
      pid_t w = ::waitpid(pid, &status, WNOHANG);
      if (w == pid) break;
      if (std::chrono::steady_clock::now() >= deadline) {
        res.timed_out = true;
        ::kill(-pid, SIGKILL);
        ::waitpid(pid, &status, 0);
        break;
      }
      ::usleep(1000);
    }
  } else {
    ::waitpid(pid, &status, 0);
  }
  ::kill(-pid, SIGKILL);  // reap stragglers left in the group (ESRCH when none)
  if (WIFEXITED(status) && !res.timed_out) res.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) res.signal = WTERMSIG(status);
  return res;
}

}  // namespace sparkops
