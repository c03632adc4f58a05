#pragma once
/// A long-running child process for the exporter tests: started with posix_spawn, stdout on a
/// pipe (read line by line), stopped with a signal. Header-only, used by the exporter tests only.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "test_util.h"

extern char** environ;

namespace sparkops::testing {

class Child {
 public:
  /// Starts argv[0] (a path) with `argv`; stdout is piped, stderr goes to `stderr_path` if given.
  explicit Child(const std::vector<std::string>& argv, const std::string& stderr_path = "/dev/null") {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) return;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
    posix_spawn_file_actions_addopen(&fa, 2, stderr_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    sigset_t none;
    sigemptyset(&none);
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETPGROUP);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    if (posix_spawn(&pid_, argv[0].c_str(), &fa, &attr, args.data(), environ) != 0) pid_ = -1;
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&attr);
    close(fds[1]);
    out_fd_ = fds[0];
  }
  ~Child() {
    if (pid_ > 0 && !exited_) {
      kill(-pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    if (out_fd_ >= 0) close(out_fd_);
  }
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;

  bool started() const { return pid_ > 0; }
  pid_t pid() const { return pid_; }

  /// Next stdout line within `timeout_ms`, without the newline; nullopt on timeout or EOF.
  std::optional<std::string> ReadLine(int timeout_ms) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    for (;;) {
      auto nl = buf_.find('\n');
      if (nl != std::string::npos) {
        std::string line = buf_.substr(0, nl);
        buf_.erase(0, nl + 1);
        return line;
      }
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return std::nullopt;
      pollfd p{out_fd_, POLLIN, 0};
      if (poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
      char tmp[4096];
      ssize_t n = read(out_fd_, tmp, sizeof tmp);
      if (n <= 0) return std::nullopt;
      buf_.append(tmp, static_cast<size_t>(n));
    }
  }

  /// Sends `sig` and waits up to `timeout_ms` for the exit; returns the wait status or nullopt.
  std::optional<int> Stop(int sig, int timeout_ms) {
    if (pid_ <= 0 || exited_) return std::nullopt;
    kill(pid_, sig);
    auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    while (std::chrono::steady_clock::now() < deadline) {
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        exited_ = true;
        return status;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return std::nullopt;
  }

 private:
  pid_t pid_ = -1;
  int out_fd_ = -1;
  bool exited_ = false;
  std::string buf_;
};

/// A TCP port that was free a moment ago on 127.0.0.1 (for programs that need a fixed port).
inline int FreeLoopbackPort() {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  socklen_t len = sizeof a;
  int port = -1;
  if (bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0)
    port = ntohs(a.sin_port);
  close(fd);
  return port;
}

/// The exporter binary (through the emulator in a cross build) on a free loopback port, over the
/// gb10 fixture, preflight in the background off, `extra` exporter flags. Sets `port` from the
/// address it prints (0 when it printed none within 10 s).
inline std::unique_ptr<Child> StartFixtureExporter(int& port, const std::vector<std::string>& extra = {}) {
  std::vector<std::string> argv = {SparkopsBin(), "--root",      Fixture("gb10"),        "exporter",
                                   "--listen",    "127.0.0.1:0", "--preflight-interval", "0"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  auto child = std::make_unique<Child>(TargetArgv(argv));
  port = 0;
  if (!child->started()) return child;
  auto line = child->ReadLine(10000);
  if (!line) return child;
  auto pos = line->find("http://127.0.0.1:");
  if (pos != std::string::npos) port = std::stoi(line->substr(pos + 17));
  return child;
}

}  // namespace sparkops::testing
