// `sparkops guard`: the victim choice (pure) and the command against real processes, with a fixture
// --root whose meminfo says the pool is nearly empty. --only keeps every test's choice among its own
// children (the machine is shared).
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <thread>

#include "base/strings.h"
#include "guard/event.h"
#include "guard/victim.h"
#include "host/child.h"
#include "test_util.h"

namespace sparkops {
namespace {

using namespace std::chrono_literals;
using guard::Candidate;
using guard::PickVictim;
using guard::VictimRules;

constexpr uint64_t kMiB = 1ull << 20;

TEST(GuardPickVictim, Table) {
  const std::vector<Candidate> procs = {
      {1, "systemd", "/sbin/init", 900 * kMiB, {}},
      {2, "kthreadd", "", {}, {}},
      {50, "sshd", "sshd: /usr/sbin/sshd -D", 10 * kMiB, {}},
      {100, "python3", "python3 train.py", 2000 * kMiB, 60000 * kMiB},  // UMA: GPU memory counts
      {200, "python3", "python3 -m vllm.entrypoints.openai.api_server", 30000 * kMiB, {}},
      {300, "sparkops", "sparkops guard", 5 * kMiB, {}},
      {400, "chrome", "chrome --type=renderer", 40000 * kMiB, {}},
      {500, "zombie", "zombie", {}, {}},
  };
  auto pick = [&](const char* prefer, const char* avoid, const char* only) -> uint32_t {
    VictimRules r;
    if (prefer) r.prefer = std::regex(prefer);
    if (avoid) r.avoid = std::regex(avoid);
    if (only) r.only = std::regex(only);
    r.self = 300;
    auto i = PickVictim(procs, r);
    return i ? procs[*i].pid : 0;
  };
  EXPECT_EQ(pick(nullptr, nullptr, nullptr), 100u) << "largest resident + GPU memory";
  EXPECT_EQ(pick(nullptr, "train", nullptr), 400u);
  EXPECT_EQ(pick("vllm", nullptr, nullptr), 200u) << "preferred first, though smaller";
  EXPECT_EQ(pick("nomatch", nullptr, nullptr), 100u);
  EXPECT_EQ(pick(nullptr, ".", nullptr), 0u) << "everything avoided: nobody";
  EXPECT_EQ(pick(nullptr, nullptr, "sshd|init|guard"), 50u) << "never PID 1 or itself";
  EXPECT_EQ(pick(nullptr, nullptr, "kthreadd|zombie"), 0u) << "never kernel threads or no RSS";
  EXPECT_EQ(pick("python", "train", nullptr), 200u) << "avoid beats prefer";
  std::vector<Candidate> tie = {{20, "a", "a", kMiB, {}}, {10, "b", "b", kMiB, {}}};
  EXPECT_EQ(tie[*PickVictim(tie, {})].pid, 10u) << "ties: lower PID";
  EXPECT_FALSE(PickVictim(std::vector<Candidate>{}, {}));
}

struct Kid {
  Child c;
  explicit Kid(const std::string& script) {
    auto k = SpawnChild({"bash", "-c", script}, false);
    EXPECT_TRUE(k);
    c = *k;
  }
  ~Kid() {
    ::kill(c.pid, SIGKILL);
    WaitChild(c);
    ::close(c.out_fd), ::close(c.err_fd);
  }
};

/// Reads the kid's stdout until `want` appeared (true), it closed or 20 s passed (false).
bool WaitForOutput(const Kid& k, std::string_view want) {
  std::string got;
  char buf[256];
  const auto t0 = std::chrono::steady_clock::now();
  while (got.find(want) == std::string::npos) {
    if (std::chrono::steady_clock::now() - t0 > 20s) return false;
    pollfd p{k.c.out_fd, POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0) continue;
    const ssize_t n = ::read(k.c.out_fd, buf, sizeof buf);
    if (n <= 0) return false;
    got.append(buf, static_cast<size_t>(n));
  }
  return true;
}

/// Until the kid's /proc/PID/cmdline starts with `name` (its `exec -a` happened), or 20 s.
bool WaitForName(const Kid& k, const std::string& name) {
  const auto t0 = std::chrono::steady_clock::now();
  while (std::chrono::steady_clock::now() - t0 < 20s) {
    std::ifstream f("/proc/" + std::to_string(k.c.pid) + "/cmdline");
    std::string cmd((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    if (cmd.rfind(name, 0) == 0) return true;
    std::this_thread::sleep_for(10ms);
  }
  return false;
}

/// Both exec'd under their names and the big one holds its 128 MiB (a fixed sleep was not enough
/// on a loaded 2-core host).
void WaitForBoth(const Kid& big, const Kid& small, const std::string& small_name) {
  ASSERT_TRUE(WaitForOutput(big, "allocated 128 MiB"));
  ASSERT_TRUE(WaitForName(small, small_name));
}

std::string LowMemRoot(const testing::TempDir& d) {
  d.Write("root/proc/meminfo",
          "MemTotal: 33554432 kB\nMemAvailable: 1048576 kB\nCached: 0 kB\nBuffers: 0 kB\nShmem: 0 kB\n");
  return d.path() + "/root";
}

/// Runs `sparkops guard ARGS` until `done()` or 20 s, then SIGTERM; its stdout lines as JSON.
std::vector<nlohmann::json> RunGuard(const testing::TempDir& d, std::vector<std::string> args,
                                     const std::function<bool()>& done, int* rc) {
  std::string out = d.path() + "/guard.out";
  pid_t g = testing::SpawnSparkops(args, {.out = out, .err = d.path() + "/guard.err"});
  EXPECT_GT(g, 0);
  auto t0 = std::chrono::steady_clock::now();
  while (!done() && std::chrono::steady_clock::now() - t0 < 20s) std::this_thread::sleep_for(20ms);
  ::kill(g, SIGTERM);
  int st = 0;
  ::waitpid(g, &st, 0);
  *rc = ShellStatus(st);
  std::vector<nlohmann::json> lines;
  const std::string text = testing::ReadFileOrDie(out);  // SplitLines views into it: keep it alive
  for (auto l : SplitLines(text)) {
    if (l.empty()) continue;
    auto j = nlohmann::json::parse(l, nullptr, false);
    EXPECT_FALSE(j.is_discarded()) << "not a JSON line: '" << l << "'";
    if (!j.is_discarded()) lines.push_back(std::move(j));
  }
  return lines;
}

TEST(GuardCmd, StopsTheLargestAllowedProcessAndRespectsAvoid) {
  testing::TempDir d;
  // Through the emulator in a cross build (an aarch64 program cannot be exec'd on the build host).
  std::string alloc = testing::TargetShell({testing::BuildArtifact("guard_alloc"), "64", "0", "128"});
  Kid big("exec -a guardtest-avoidme-" + std::to_string(::getpid()) + " " + alloc);
  Kid small("exec -a guardtest-small-" + std::to_string(::getpid()) + " sleep 600");
  WaitForBoth(big, small, "guardtest-small-" + std::to_string(::getpid()));
  int rc = -1;
  std::string tag = "guardtest-.*-" + std::to_string(::getpid());
  auto lines = RunGuard(
      d, {"--root", LowMemRoot(d), "guard", "--only", tag, "--avoid", "avoidme", "--grace", "1"},
      [&] { return !guard::ProcessAlive(small.c.pid); }, &rc);
  EXPECT_EQ(rc, 0);
  EXPECT_FALSE(guard::ProcessAlive(small.c.pid));
  EXPECT_TRUE(guard::ProcessAlive(big.c.pid)) << "--avoid";
  ASSERT_GE(lines.size(), 2u);
  EXPECT_EQ(lines[0]["type"], "guard_start");
  EXPECT_EQ(lines[0]["min_available_bytes"], 4ull << 30);  // the default on a 32 GiB fixture
  EXPECT_EQ(lines[1]["type"], "memory_guard");
  EXPECT_EQ(lines[1]["action"], "terminate");
  EXPECT_EQ(lines[1]["pid"], small.c.pid);
  EXPECT_EQ(lines[1]["mem_available_bytes"], 1ull << 30);
  EXPECT_GT(lines[1]["job_rss_bytes"].get<uint64_t>(), 0u);
  for (auto& l : lines) EXPECT_NE(l.value("pid", 0), big.c.pid);
}

TEST(GuardCmd, DryRunOnlyLogsTheLargest) {
  testing::TempDir d;
  std::string alloc = testing::TargetShell({testing::BuildArtifact("guard_alloc"), "64", "0", "128"});
  Kid big("exec -a guardtest-big-" + std::to_string(::getpid()) + " " + alloc);
  Kid small("exec -a guardtest-small-" + std::to_string(::getpid()) + " sleep 600");
  WaitForBoth(big, small, "guardtest-small-" + std::to_string(::getpid()));
  int rc = -1;
  std::string out = d.path() + "/guard.out";
  auto lines = RunGuard(
      d, {"--root", LowMemRoot(d), "guard", "--dry-run", "--only", "guardtest-.*-" + std::to_string(::getpid())},
      [&] {
        std::error_code ec;
        const auto size = std::filesystem::file_size(out, ec);  // (uintmax_t)-1 on error
        return !ec && size > 0 && testing::ReadFileOrDie(out).find("would_terminate") != std::string::npos;
      },
      &rc);
  EXPECT_TRUE(guard::ProcessAlive(big.c.pid));
  EXPECT_TRUE(guard::ProcessAlive(small.c.pid));
  ASSERT_GE(lines.size(), 2u);
  EXPECT_EQ(lines[1]["action"], "would_terminate");
  EXPECT_EQ(lines[1]["pid"], big.c.pid);
  EXPECT_GE(lines[1]["job_rss_bytes"].get<uint64_t>(), 128 * kMiB);
  EXPECT_EQ(lines[1]["dry_run"], true);
}

TEST(GuardCmd, ALineSayingNothingWasChosenCarriesNoSignal) {
  testing::TempDir d;
  std::string out = d.path() + "/guard.out";
  int rc = -1;
  auto lines = RunGuard(
      d, {"--root", LowMemRoot(d), "guard", "--only", "no-such-process-" + std::to_string(::getpid())},
      [&] {
        std::error_code ec;
        const auto size = std::filesystem::file_size(out, ec);
        return !ec && size > 0 && testing::ReadFileOrDie(out).find("\"none\"") != std::string::npos;
      },
      &rc);
  ASSERT_GE(lines.size(), 2u);
  EXPECT_EQ(lines[1]["action"], "none");
  EXPECT_FALSE(lines[1].contains("signal")) << lines[1].dump();  // nothing was signalled
}

TEST(GuardCmd, NothingHappensAboveTheFloorAndBadFlagsAreUsageErrors) {
  testing::TempDir d;
  d.Write("root/proc/meminfo", "MemTotal: 33554432 kB\nMemAvailable: 20971520 kB\n");
  int rc = -1;
  auto t0 = std::chrono::steady_clock::now();
  auto lines = RunGuard(
      d, {"--root", d.path() + "/root", "guard", "--only", "guardtest-none"},
      [&] { return std::chrono::steady_clock::now() - t0 > 1500ms; }, &rc);
  EXPECT_EQ(rc, 0);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0]["type"], "guard_start");
  EXPECT_EQ(testing::RunBinary({"--root", d.path() + "/root", "guard", "--avoid", "("}).rc, 2);
  EXPECT_EQ(testing::RunBinary({"--root", d.path() + "/root", "guard", "--min-available", "0"}).rc, 2);
}

}  // namespace
}  // namespace sparkops
