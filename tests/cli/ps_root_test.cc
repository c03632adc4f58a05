// Root's `ps` reads the script a Python process names in its argv: another user chooses that path.
// As root (CI), a process run as nobody names a link to a root-only file, a link to a FIFO and a
// FIFO; `ps` must read none of them (issue 29, point 2). Skipped when not root.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <thread>

#include <nlohmann/json.hpp>

#include "test_util.h"

extern char** environ;

namespace sparkops {
namespace {

constexpr uid_t kNobody = 65534;

/// `python3 - SCRIPT` as nobody: really `cat -` (renamed by exec -a) blocked on a pipe the test
/// holds, so the process itself never opens SCRIPT. Killed at destruction.
class NobodyPython {
 public:
  explicit NobodyPython(const std::string& script) {
    int p[2];
    if (::pipe2(p, O_CLOEXEC) != 0) return;
    stdin_w_ = p[1];
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, p[0], 0);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    std::vector<std::string> argv = {"/usr/bin/setpriv",
                                     "--reuid=65534",
                                     "--regid=65534",
                                     "--clear-groups",
                                     "/bin/bash",
                                     "-c",
                                     "exec -a python3 cat - \"$0\"",
                                     script};
    std::vector<char*> c;
    for (auto& a : argv) c.push_back(a.data());
    c.push_back(nullptr);
    if (posix_spawn(&pid_, c[0], &fa, nullptr, c.data(), environ) != 0) pid_ = -1;
    posix_spawn_file_actions_destroy(&fa);
    ::close(p[0]);
    // Ready once exec'd as "python3 - SCRIPT" (bounded wait on a condition).
    for (int i = 0; pid_ > 0 && i < 1000; ++i) {
      std::string cmd;
      try {
        cmd = testing::ReadFileOrDie("/proc/" + std::to_string(pid_) + "/cmdline");
      } catch (...) {}
      if (cmd.rfind(std::string("python3\0-\0", 10), 0) == 0) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
  ~NobodyPython() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    if (stdin_w_ >= 0) ::close(stdin_w_);
  }
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
  int stdin_w_ = -1;
};

/// The kinds `ps --json` gives each pid of `pids` ("" when not listed).
std::map<pid_t, std::string> PsKinds(const std::vector<pid_t>& pids) {
  auto r = testing::RunBinary({"--nvml", "none", "--nvidia-smi", "none", "--json", "ps"});
  std::map<pid_t, std::string> out;
  for (pid_t p : pids) out[p] = "";
  auto j = nlohmann::json::parse(r.out, nullptr, false);
  if (!j.is_object()) return out;
  for (const auto& w : j["workloads"])
    if (out.count(w.value("pid", -1))) out[w["pid"].get<pid_t>()] = w.value("kind", "?");
  return out;
}

TEST(PsAsRoot, ScriptsOtherUsersNameAreReadOnlyWhenTheirsAndRegular) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root (setpriv to nobody)";
  testing::TempDir d;
  ASSERT_EQ(::chmod(d.path().c_str(), 0755), 0);
  const std::string secret = d.Write("secret/train.py", "import unsloth\n");  // root-only
  ASSERT_EQ(::chmod((d.path() + "/secret").c_str(), 0700), 0);
  ASSERT_EQ(::chmod(secret.c_str(), 0600), 0);
  const std::string home = d.path() + "/home";
  std::filesystem::create_directories(home);
  ASSERT_EQ(::chown(home.c_str(), kNobody, kNobody), 0);
  const std::string own = d.Write("home/own.py", "import unsloth\n");  // nobody's own script
  ASSERT_EQ(::chown(own.c_str(), kNobody, kNobody), 0);
  const std::string fifo = home + "/fifo.py", to_secret = home + "/link.py", to_fifo = home + "/fifolink.py";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  ASSERT_EQ(::chown(fifo.c_str(), kNobody, kNobody), 0);
  ASSERT_EQ(::symlink(secret.c_str(), to_secret.c_str()), 0);
  ASSERT_EQ(::symlink(fifo.c_str(), to_fifo.c_str()), 0);
  ASSERT_EQ(::lchown(to_secret.c_str(), kNobody, kNobody), 0);
  ASSERT_EQ(::lchown(to_fifo.c_str(), kNobody, kNobody), 0);

  // A writer blocked in open() returns as soon as anyone opens the FIFO for reading.
  std::atomic<bool> fifo_opened{false};
  std::thread writer([&] {
    int fd = ::open(fifo.c_str(), O_WRONLY | O_CLOEXEC);
    fifo_opened = true;
    if (fd >= 0) ::close(fd);
  });

  NobodyPython p_own(own), p_secret(to_secret), p_fifo(fifo), p_fifolink(to_fifo);
  EXPECT_GT(p_own.pid(), 0);
  EXPECT_GT(p_secret.pid(), 0);
  auto kinds = PsKinds({p_own.pid(), p_secret.pid(), p_fifo.pid(), p_fifolink.pid()});
  EXPECT_EQ(kinds[p_own.pid()], "unsloth") << "the user's own script is read (so this test can fail)";
  EXPECT_EQ(kinds[p_secret.pid()], "") << "a link to a root-only file: not followed, its content not seen";
  EXPECT_EQ(kinds[p_fifo.pid()], "");
  EXPECT_EQ(kinds[p_fifolink.pid()], "");
  EXPECT_FALSE(fifo_opened) << "ps opened a FIFO another user named";

  int release = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);  // lets the writer go
  writer.join();
  if (release >= 0) ::close(release);
}

}  // namespace
}  // namespace sparkops
