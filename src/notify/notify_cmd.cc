#include "notify/notify_cmd.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

extern char** environ;

namespace sparkops {

Result<void> RunNotifyCmd(const std::string& cmd, std::string_view stdin_text,
                          const std::vector<std::pair<std::string, std::string>>& env,
                          std::chrono::milliseconds timeout, int stop_fd) {
  // stdin is a socket: send(MSG_NOSIGNAL) to a command that exits without reading raises no SIGPIPE.
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
    return IoError(std::string("socketpair: ") + std::strerror(errno));
  ::shutdown(sv[1], SHUT_WR), ::shutdown(sv[0], SHUT_RD);
  // Everything the child needs is built before fork (no allocation after it).
  std::vector<std::string> env_store;
  for (char** e = environ; e && *e; ++e) {
    std::string_view kv(*e);
    bool replaced = false;
    for (const auto& [k, v] : env)
      replaced = replaced || (kv.starts_with(k) && kv.size() > k.size() && kv[k.size()] == '=');
    if (!replaced) env_store.emplace_back(kv);
  }
  for (const auto& [k, v] : env) env_store.push_back(k + "=" + v);
  std::vector<char*> cenv;
  for (auto& s : env_store) cenv.push_back(s.data());
  cenv.push_back(nullptr);
  const char* argv[] = {"/bin/sh", "-c", cmd.c_str(), nullptr};
  pid_t pid = ::fork();
  if (pid < 0) {
    ::close(sv[0]), ::close(sv[1]);
    return IoError(std::string("fork: ") + std::strerror(errno));
  }
  if (pid == 0) {
    ::setpgid(0, 0);
    ::dup2(sv[1], 0);
    int devnull = ::open("/dev/null", O_WRONLY);
    if (devnull >= 0) ::dup2(devnull, 1), ::dup2(devnull, 2);
    ::signal(SIGPIPE, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::execve(argv[0], const_cast<char**>(argv), cenv.data());
    ::_exit(127);
  }
  ::setpgid(pid, pid);  // also here, so the group exists before we might kill it
  ::close(sv[1]);
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::string why;
  size_t sent = 0;
  int in = sv[0];
  ::fcntl(in, F_SETFL, O_NONBLOCK);
  int status = 0;
  for (;;) {
    if (::waitpid(pid, &status, WNOHANG) == pid) break;
    if (std::chrono::steady_clock::now() >= deadline) {
      why = fmt::format("timed out after {} s", timeout.count() / 1000.0);
      break;
    }
    if (in >= 0 && sent < stdin_text.size()) {
      ssize_t n = ::send(in, stdin_text.data() + sent, stdin_text.size() - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n > 0) sent += static_cast<size_t>(n);
      else if (n < 0 && errno != EAGAIN && errno != EINTR) ::close(in), in = -1;  // it does not read stdin
    }
    if (in >= 0 && sent >= stdin_text.size()) ::close(in), in = -1;  // EOF: the whole event was sent
    pollfd p{stop_fd, POLLIN, 0};
    if (::poll(&p, stop_fd >= 0 ? 1 : 0, 10) > 0) {
      why = "abandoned: run is ending";
      break;
    }
  }
  if (in >= 0) ::close(in);
  if (!why.empty()) {
    ::kill(-pid, SIGKILL);
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    return IoError(why);
  }
  ::kill(-pid, SIGKILL);  // stragglers left in its group (ESRCH when none)
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return {};
  if (WIFSIGNALED(status)) return IoError(fmt::format("killed by signal {}", WTERMSIG(status)));
  return IoError(fmt::format("exit {}", WEXITSTATUS(status)));
}

}  // namespace sparkops
