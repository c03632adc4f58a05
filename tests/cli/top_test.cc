// `sparkops top`: --once and --json golden on the fixture GB10 root (stub NVML, spbm power tree, a
// live guard's ledger), and the interactive mode driven in a real pseudo-terminal (frame, keys,
// resize, q).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <regex>

#include <nlohmann/json.hpp>

#include "guard/ledger.h"
#include "test_util.h"

namespace sparkops {
namespace {

using testing::BuildArtifact;
using testing::CheckGolden;
using testing::Fixture;
using testing::RunInProcess;
using testing::ScopedEnv;

std::string Scenario() { return std::string(SPARKOPS_TEST_SOURCE_DIR) + "/stub_nvml/scenarios/gb10_load.txt"; }

/// The GB10 fixture with the spbm power tree and a guard ledger whose pid (950, the login shell)
/// is alive with the same start time: a host with a running guard.
class TopRoot {
 public:
  TopRoot() {
    namespace fs = std::filesystem;
    fs::copy(Fixture("gb10"), dir_.path(), fs::copy_options::recursive);
    fs::copy(Fixture("power/spbm_ewma"), dir_.path(), fs::copy_options::recursive | fs::copy_options::skip_existing);
    guard::Ledger l;
    l.pid = 950;
    l.start_ticks = 100950;
    l.mode = "host";
    l.min_available_bytes = 8ull << 30;
    dir_.Write("run/sparkops/guard/950.json", guard::LedgerJson(l));
    // A host guard runs as root: a ledger in /run/sparkops/guard is trusted only when its pid runs as
    // the directory's owner (guard/ledger.h), so pid 950 stands in for a root guard here.
    std::string status = testing::ReadFileOrDie(dir_.path() + "/proc/950/status");
    status = std::regex_replace(status, std::regex("Uid:\t1000\t1000\t1000\t1000"), "Uid:\t0\t0\t0\t0");
    dir_.Write("proc/950/status", status);
  }
  const std::string& path() const { return dir_.path(); }

 private:
  testing::TempDir dir_;
};

std::string MaskTime(const std::string& s) {
  return std::regex_replace(s, std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{3})?Z)"), "<time>");
}

TEST(Top, OnceGoldenAt80And200Columns) {
  TopRoot root;
  ScopedEnv sc("SPARKOPS_STUB_NVML_SCENARIO", Scenario());
  for (const char* cols : {"80", "200"}) {
    auto r = RunInProcess({"--root", root.path(), "--nvml", BuildArtifact("libnvidia-ml-stub.so"), "--nvidia-smi",
                           "none", "top", "--once"},
                          {{"COLUMNS", cols}});
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(CheckGolden(std::string("top_gb10_") + cols + ".txt", MaskTime(r.out)), "");
    int width = 0;  // in code points: every character top prints is one column
    for (char c : r.out) {
      if (c == '\n') {
        width = 0;
      } else if ((static_cast<unsigned char>(c) & 0xC0) != 0x80) {
        EXPECT_LE(++width, std::stoi(cols)) << r.out;
      }
    }
  }
}

TEST(Top, OnceShowsPoolGpuPressureGuardAndWorkloads) {
  TopRoot root;
  ScopedEnv sc("SPARKOPS_STUB_NVML_SCENARIO", Scenario());
  auto r = RunInProcess({"--root", root.path(), "--nvml", BuildArtifact("libnvidia-ml-stub.so"), "--nvidia-smi", "none",
                         "top", "--once"});
  ASSERT_EQ(r.rc, 0) << r.err;
  // meminfo: MemTotal 127600748 kB = 121.7 GiB, MemAvailable 118566368 kB = 113.1 GiB.
  EXPECT_NE(r.out.find("total 121.7G  available 113.1G (93%)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("guard floor 8.0G (host pid 950), 105.1G above"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("60 C  85 W  SM 2420"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("PROCHOT"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("memory some"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("vllm +1"), std::string::npos) << r.out;  // the EngineCore child folded in
  EXPECT_NE(r.out.find("capped"), std::string::npos) << r.out;
}

TEST(Top, JsonSnapshotIsVersionedAndOmitsAbsentValues) {
  TopRoot root;
  ScopedEnv sc("SPARKOPS_STUB_NVML_SCENARIO", Scenario());
  auto r = RunInProcess({"--root", root.path(), "--nvml", BuildArtifact("libnvidia-ml-stub.so"), "--nvidia-smi", "none",
                         "top", "--json"});
  ASSERT_EQ(r.rc, 0) << r.err;
  auto j = nlohmann::ordered_json::parse(r.out);
  EXPECT_EQ(j["schema"], "sparkops.top/1");
  EXPECT_EQ(j["pool"]["mem_available_bytes"], 118566368ull * 1024);
  EXPECT_EQ(j["pool"]["mlocked_bytes"], 27648ull * 1024);
  EXPECT_EQ(j["guard"]["min_available_bytes"], 8ull << 30);
  EXPECT_EQ(j["gpu"]["temp_c"], 60.0);
  EXPECT_EQ(j["processes"].size(), 2u);
  EXPECT_FALSE(j["processes"][0].contains("cpu_cores"));  // one reading: no CPU rate, omitted not 0
  j["time"] = "<time>";
  j.erase("gpu");  // the stub's identity fields are the GPU layer's, not this golden's
  EXPECT_EQ(CheckGolden("top_gb10.json", j.dump(2) + "\n"), "");
}

TEST(Top, NoGpuNoGuardAndBadFlags) {
  auto r = RunInProcess({"--root", Fixture("laptop"), "top", "--once"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("GPU   no GPU readable"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("no guard running"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("no ML workloads on the pool"), std::string::npos) << r.out;
  EXPECT_EQ(RunInProcess({"top", "--interval", "0"}).rc, 2);
  EXPECT_EQ(RunInProcess({"top", "--interval", "nan"}).rc, 2);
  EXPECT_EQ(RunInProcess({"top", "--bogus"}).rc, 2);
}

/// sparkops top on a pseudo-terminal of `cols` x `rows`.
class PtyTop {
 public:
  PtyTop(int cols, int rows, const std::vector<std::string>& env) {
    struct winsize ws {};
    ws.ws_col = static_cast<unsigned short>(cols);
    ws.ws_row = static_cast<unsigned short>(rows);
    std::vector<std::string> argv =
        testing::TargetArgv({testing::SparkopsBin(), "--root", Fixture("gb10"), "top", "--interval", "0.1"});
    pid_ = forkpty(&master_, nullptr, nullptr, &ws);
    if (pid_ == 0) {
      std::vector<char*> a, e;
      for (auto& s : argv) a.push_back(s.data());
      a.push_back(nullptr);
      std::vector<std::string> envs = env;
      for (auto& s : envs) e.push_back(s.data());
      e.push_back(nullptr);
      execve(a[0], a.data(), e.data());
      _exit(127);
    }
  }
  ~PtyTop() {
    if (pid_ > 0 && !reaped_) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    if (master_ >= 0) close(master_);
  }
  /// Reads until `re` matches what was read since the last call (or 10 s pass); true on a match.
  bool WaitFor(const std::string& re) {
    std::regex r(re);
    auto end = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (std::chrono::steady_clock::now() < end) {
      if (std::regex_search(seen_, r)) return true;
      struct pollfd p {
        master_, POLLIN, 0
      };
      if (poll(&p, 1, 100) <= 0) continue;
      char buf[4096];
      ssize_t n = read(master_, buf, sizeof buf);
      if (n <= 0) return std::regex_search(seen_, r);
      seen_.append(buf, static_cast<size_t>(n));
    }
    return false;
  }
  void Clear() { seen_.clear(); }
  void Key(char c) { ASSERT_EQ(write(master_, &c, 1), 1); }
  void Resize(int cols, int rows) {
    struct winsize ws {};
    ws.ws_col = static_cast<unsigned short>(cols);
    ws.ws_row = static_cast<unsigned short>(rows);
    ioctl(master_, TIOCSWINSZ, &ws);  // the kernel sends SIGWINCH to the foreground group
  }
  /// Exit status after `q`, or -1 when it did not exit within 10 s. Keeps reading the pty so the
  /// child is never blocked on its output.
  int Exit() {
    auto end = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    char buf[4096];
    while (std::chrono::steady_clock::now() < end) {
      int st = 0;
      struct pollfd p {
        master_, POLLIN, 0
      };
      ssize_t n = -1;
      if (poll(&p, 1, 10) > 0 && (n = read(master_, buf, sizeof buf)) > 0) seen_.append(buf, static_cast<size_t>(n));
      if (n <= 0) usleep(10000);  // the pty hung up: the child is exiting (a busy host may take a while)
      if (waitpid(pid_, &st, WNOHANG) == pid_) {
        reaped_ = true;
        while (poll(&p, 1, 0) > 0 && (n = read(master_, buf, sizeof buf)) > 0)
          seen_.append(buf, static_cast<size_t>(n));
        return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
      }
    }
    return -1;
  }
  const std::string& seen() const { return seen_; }

 private:
  int master_ = -1;
  pid_t pid_ = -1;
  bool reaped_ = false;
  std::string seen_;
};

TEST(TopPty, FrameKeysResizeAndQuit) {
  PtyTop top(80, 24, {"TERM=xterm-256color"});
  ASSERT_TRUE(top.WaitFor("\\x1b\\[\\?1049h[\\s\\S]*POOL  total 121.7G[\\s\\S]*vllm \\+1")) << top.seen();
  EXPECT_EQ(top.seen().find("COMMAND"), std::string::npos);  // 80 columns: no command column
  top.Clear();
  top.Resize(200, 60);
  ASSERT_TRUE(top.WaitFor("COMMAND")) << top.seen();  // redrawn at the new width
  top.Clear();
  top.Key('t');
  ASSERT_TRUE(top.WaitFor("trees: expanded[\\s\\S]*`- ")) << top.seen();
  top.Clear();
  top.Key('s');
  ASSERT_TRUE(top.WaitFor("sort: cpu")) << top.seen();
  top.Clear();
  top.Key('p');
  ASSERT_TRUE(top.WaitFor("PAUSED")) << top.seen();
  top.Key('q');
  EXPECT_EQ(top.Exit(), 0) << top.seen();
  EXPECT_NE(top.seen().find("\x1b[?1049l"), std::string::npos);  // left the alternate screen
}

TEST(TopPty, DumbTerminalAndNoColorGetPlainRedraws) {
  PtyTop dumb(80, 24, {"TERM=dumb"});
  ASSERT_TRUE(dumb.WaitFor("POOL[\\s\\S]*POOL")) << dumb.seen();  // two frames, one after the other
  EXPECT_EQ(dumb.seen().find('\x1b'), std::string::npos) << dumb.seen();
  dumb.Key('q');
  EXPECT_EQ(dumb.Exit(), 0);

  PtyTop mono(80, 24, {"TERM=xterm", "NO_COLOR=1"});
  ASSERT_TRUE(mono.WaitFor("POOL[\\s\\S]*vllm")) << mono.seen();
  EXPECT_EQ(mono.seen().find("\x1b[7m"), std::string::npos);  // no SGR colour or reverse video
  EXPECT_EQ(mono.seen().find("\x1b[33m"), std::string::npos);
  mono.Key('q');
  EXPECT_EQ(mono.Exit(), 0);
}

}  // namespace
}  // namespace sparkops
