// `sparkops guard`: the victim choice (pure) and the command against real processes, with a fixture
// --root whose meminfo says the pool is nearly empty. --only keeps every test's choice among its own
// children (the machine is shared).
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>

#include "base/strings.h"
#include "guard/event.h"
#include "guard/pattern.h"
#include "guard/victim.h"
#include "host/child.h"
#include "run/job_cgroup.h"
#include "test_util.h"

namespace sparkops {
namespace {

using namespace std::chrono_literals;
using guard::Candidate;
using guard::PickVictim;
using guard::VictimRules;

constexpr uint64_t kMiB = 1ull << 20;

/// A candidate as the reader fills it: `exe` is what the kernel says it runs.
Candidate C(uint32_t pid, std::string exe, std::string cmd, std::optional<uint64_t> rss,
            std::optional<uint64_t> gpu = {}) {
  Candidate c;
  c.pid = pid, c.name = BaseName(exe), c.exe = std::move(exe), c.cmdline = std::move(cmd), c.rss = rss, c.gpu = gpu;
  return c;
}

/// `s` as an ERE matching it literally (each character but [A-Za-z0-9/_-] in brackets).
std::string EreQuote(const std::string& s) {
  std::string out;
  for (char ch : s) {
    if (std::isalnum(static_cast<unsigned char>(ch)) || ch == '/' || ch == '_' || ch == '-') out += ch;
    else out += std::string("[") + ch + "]";
  }
  return out;
}

guard::Pattern P(const char* re) { return *guard::Pattern::Compile("--test", re); }

TEST(GuardPickVictim, Table) {
  std::vector<Candidate> procs = {
      C(1, "/usr/lib/systemd/systemd", "/sbin/init", 900 * kMiB),
      C(2, "", "", {}),
      C(50, "/usr/sbin/sshd", "sshd: /usr/sbin/sshd -D", 10 * kMiB),
      C(100, "/usr/bin/python3.12", "python3 train.py", 2000 * kMiB, 60000 * kMiB),  // UMA: GPU memory counts
      C(200, "/usr/bin/python3.12", "python3 -m vllm.entrypoints.openai.api_server", 30000 * kMiB),
      C(300, "/usr/bin/sparkops", "sparkops guard", 5 * kMiB),
      C(400, "/opt/google/chrome/chrome", "chrome --type=renderer", 40000 * kMiB),
      C(500, "/usr/bin/zombie", "zombie", {}),
  };
  procs[1].kthread = true;
  procs[2].cgroup = "/system.slice/ssh.service";
  auto pick = [&](const char* prefer, const char* avoid, const char* only) -> uint32_t {
    VictimRules r;
    if (prefer) r.prefer = P(prefer);
    if (avoid) r.avoid = P(avoid);
    if (only) r.only = P(only);
    r.protect = {300};
    auto i = PickVictim(procs, r);
    return i ? procs[*i].pid : 0;
  };
  EXPECT_EQ(pick(nullptr, nullptr, nullptr), 100u) << "largest resident + GPU memory";
  EXPECT_EQ(pick(nullptr, "python", nullptr), 400u) << "--avoid on the executable";
  EXPECT_EQ(pick(nullptr, "train", nullptr), 100u) << "--avoid never reads the command line";
  EXPECT_EQ(pick("vllm", nullptr, nullptr), 200u) << "preferred first (command line), though smaller";
  EXPECT_EQ(pick("^/opt/google", nullptr, nullptr), 400u) << "preferred by executable";
  EXPECT_EQ(pick("nomatch", nullptr, nullptr), 100u);
  EXPECT_EQ(pick(nullptr, ".", nullptr), 0u) << "everything avoided: nobody";
  EXPECT_EQ(pick(nullptr, nullptr, "sshd|init|sparkops"), 50u) << "never PID 1 or protected";
  EXPECT_EQ(pick(nullptr, "^/system\\.slice/", "sshd"), 0u) << "--avoid on the cgroup";
  EXPECT_EQ(pick(nullptr, nullptr, "zombie"), 0u) << "no memory reading: gone";
  EXPECT_EQ(pick("python", "^/usr/bin/python", nullptr), 400u) << "avoid beats prefer";

  VictimRules r;
  r.avoid_units = {"ssh.service"};
  r.only = P("sshd");
  EXPECT_FALSE(PickVictim(procs, r)) << "--avoid-unit";
  procs[4].uid = 1000;
  VictimRules by_user;
  by_user.avoid_uids = {1000};
  by_user.only = P("python");
  EXPECT_EQ(procs[*PickVictim(procs, by_user)].pid, 100u) << "--avoid-user";

  procs[3].oom_score_adj = -1000;
  EXPECT_EQ(pick(nullptr, nullptr, nullptr), 400u) << "oom_score_adj -1000 is never chosen";

  std::vector<Candidate> tie = {C(20, "/a", "a", kMiB), C(10, "/b", "b", kMiB)};
  EXPECT_EQ(tie[*PickVictim(tie, {})].pid, 10u) << "ties: lower PID";
  tie[0].oom_score = 700, tie[1].oom_score = 300;
  EXPECT_EQ(tie[*PickVictim(tie, {})].pid, 20u) << "ties: the kernel's oom_score first";
  EXPECT_FALSE(PickVictim(std::vector<Candidate>{}, {}));
}

TEST(GuardPickVictim, EmptyCommandLineDoesNotHide) {
  std::vector<Candidate> procs = {C(10, "/home/u/hog", "", 900 * kMiB), C(20, "/usr/bin/python3", "python3 x", kMiB)};
  EXPECT_EQ(procs[*PickVictim(procs, {})].pid, 10u);
}

TEST(GuardUnitOf, Table) {
  EXPECT_EQ(guard::UnitOf("/system.slice/sshd.service"), "sshd.service");
  EXPECT_EQ(guard::UnitOf("/user.slice/user-1000.slice/session-3.scope"), "session-3.scope");
  EXPECT_EQ(guard::UnitOf("/system.slice/docker.service/sub/leaf"), "docker.service");
  EXPECT_EQ(guard::UnitOf("/"), "");
  EXPECT_EQ(guard::UnitOf(""), "");
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
  // --avoid names the executable the kernel reports (the emulator's, in a cross build), never argv.
  const std::string exe = std::filesystem::read_symlink("/proc/" + std::to_string(big.c.pid) + "/exe").string();
  auto lines = RunGuard(
      d, {"--root", LowMemRoot(d), "guard", "--only", tag, "--avoid", "^" + EreQuote(exe) + "$", "--grace", "1"},
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

/// A cgroup that looks like a systemd service (/system.slice/NAME under the cgroup2 mount), made for
/// one test and removed after; `dir` is "" where it cannot be made (not root, no writable cgroup2).
struct FakeUnit {
  std::string dir, slice, path;
  bool made_slice = false;
  explicit FakeUnit(const std::string& name) {
    std::ifstream mi("/proc/self/mountinfo");
    std::string text((std::istreambuf_iterator<char>(mi)), std::istreambuf_iterator<char>());
    auto mount = ParseCgroup2Mount(text);
    if (::geteuid() != 0 || !mount || mount->second != "/") return;
    slice = mount->first + "/system.slice";
    made_slice = ::mkdir(slice.c_str(), 0755) == 0;
    if (!made_slice && errno != EEXIST) return;
    if (::mkdir((slice + "/" + name).c_str(), 0755) != 0) return;
    dir = slice + "/" + name, path = "/system.slice/" + name;
  }
  bool Move(pid_t pid) const {
    std::ofstream f(dir + "/cgroup.procs");
    f << pid << "\n";
    f.flush();
    return static_cast<bool>(f);
  }
  ~FakeUnit() {
    for (int i = 0; !dir.empty() && ::rmdir(dir.c_str()) != 0 && i < 100; ++i) std::this_thread::sleep_for(20ms);
    if (made_slice) ::rmdir(slice.c_str());
  }
};

// The victim is in a service's own cgroup: the whole unit is stopped, with a process of it that
// --only would never have chosen (the per-process guard left it running).
TEST(GuardCmd, StopsTheVictimsWholeUnit) {
  const std::string id = std::to_string(::getpid());
  FakeUnit unit("sparkops-test-" + id + ".service");
  if (unit.dir.empty()) GTEST_SKIP() << "needs root and a writable cgroup v2 mounted at its root";
  testing::TempDir d;
  std::string alloc = testing::TargetShell({testing::BuildArtifact("guard_alloc"), "64", "0", "128"});
  Kid big("exec -a guardtest-unit-" + id + " " + alloc);
  Kid sibling("exec -a unitsibling-" + id + " sleep 600");
  WaitForBoth(big, sibling, "unitsibling-" + id);
  if (!unit.Move(big.c.pid) || !unit.Move(sibling.c.pid)) GTEST_SKIP() << "cannot move processes into " << unit.dir;
  int rc = -1;
  auto lines = RunGuard(
      d, {"--root", LowMemRoot(d), "guard", "--only", "guardtest-unit-" + id, "--grace", "5"},
      [&] { return !guard::ProcessAlive(big.c.pid) && !guard::ProcessAlive(sibling.c.pid); }, &rc);
  EXPECT_EQ(rc, 0);
  EXPECT_FALSE(guard::ProcessAlive(big.c.pid));
  EXPECT_FALSE(guard::ProcessAlive(sibling.c.pid)) << "the unit's other process";
  ASSERT_GE(lines.size(), 2u);
  EXPECT_EQ(lines[1]["action"], "terminate");
  EXPECT_EQ(lines[1]["pid"], big.c.pid);
  EXPECT_EQ(lines[1]["unit"], "sparkops-test-" + id + ".service") << lines[1].dump();
  EXPECT_EQ(lines[1]["unit_cgroup"], unit.path);
  EXPECT_EQ(lines[1]["unit_processes"], 2);
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

// issue 34: the host guard tells what it did to the targets of the notify config file (found in
// $XDG_CONFIG_HOME), named once on stderr; a group-writable config is refused with exit 2.
TEST(GuardCmd, NotifiesFromTheConfigFile) {
  testing::TempDir d;
  const std::string told = d.path() + "/told.json";
  d.Write("cfg/sparkops/notify.conf",
          "# test\nnotify-cmd = cat > '" + told + ".tmp' && mv '" + told + ".tmp' '" + told + "'\n");
  ::chmod((d.path() + "/cfg/sparkops/notify.conf").c_str(), 0600);
  testing::ScopedEnv xdg("XDG_CONFIG_HOME", d.path() + "/cfg");
  int rc = -1;
  auto lines = RunGuard(
      d, {"--root", LowMemRoot(d), "guard", "--only", "no-such-process-" + std::to_string(::getpid())},
      [&] { return std::filesystem::exists(told); }, &rc);
  ASSERT_TRUE(std::filesystem::exists(told)) << testing::ReadFileOrDie(d.path() + "/guard.err");
  auto j = nlohmann::json::parse(testing::ReadFileOrDie(told), nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << testing::ReadFileOrDie(told);
  EXPECT_EQ(j["schema"], "sparkops.notify/1");
  EXPECT_EQ(j["event"], "memory_guard");
  EXPECT_EQ(j["action"], "none");
  EXPECT_NE(j["text"].get<std::string>().find("the memory guard found nothing it may stop"), std::string::npos) << j;
  EXPECT_NE(testing::ReadFileOrDie(d.path() + "/guard.err").find("notify targets from " + d.path() + "/cfg/"),
            std::string::npos);
  ::chmod((d.path() + "/cfg/sparkops/notify.conf").c_str(), 0666);
  auto bad =
      testing::RunBinary({"--root", LowMemRoot(d), "guard", "--dry-run"}, {{"XDG_CONFIG_HOME", d.path() + "/cfg"}});
  EXPECT_EQ(bad.rc, 2);
  EXPECT_NE(bad.err.find("writable by group or others"), std::string::npos) << bad.err;
  EXPECT_EQ(testing::RunBinary({"--root", LowMemRoot(d), "guard", "--notify-config", d.path() + "/none.conf"}).rc, 2);
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

// issue 33: a driver no-memory record logged while the guard runs counts as crossing the floor:
// the largest allowed process is stopped, with the record as the reason's evidence. Records from
// before the start, and any record with --kernel-signals off, stop nothing.
constexpr const char* kOldNoMem =
    "4,1480,1832115022,-;NVRM: nvCheckOkFailedNoLog: Check failed: Out of memory [NV_ERR_NO_MEMORY] (0x00000051) "
    "returned from _memdescAllocInternal(pMemDesc) @ mem_desc.c:1359\n";
constexpr const char* kNewNoMem = "4,1600,1900000000,-;NVRM: nvAssertFailedNoLog: Assertion failed: NV_ERR_NO_MEMORY\n";

std::string RoomyRoot(const testing::TempDir& d) {
  d.Write("root/proc/meminfo", "MemTotal: 33554432 kB\nMemAvailable: 20971520 kB\n");  // 20 of 32 GiB free
  d.Write("root/dev/kmsg", kOldNoMem);
  return d.path() + "/root";
}

bool Contains(const std::string& path, const std::string& part) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  return !ec && size > 0 && testing::ReadFileOrDie(path).find(part) != std::string::npos;
}

TEST(GuardCmd, DriverNoMemoryRecordStopsTheLargestAllowedProcess) {
  testing::TempDir d;
  const std::string name = "guardtest-kmsg-" + std::to_string(::getpid());
  Kid kid("exec -a " + name + " sleep 600");
  ASSERT_TRUE(WaitForName(kid, name));
  const std::string root = RoomyRoot(d), out = d.path() + "/guard.out";
  std::optional<std::chrono::steady_clock::time_point> started, appended, stopped;
  int rc = -1;
  auto lines = RunGuard(
      d, {"--root", root, "guard", "--only", name, "--grace", "1"},
      [&] {
        const auto now = std::chrono::steady_clock::now();
        if (!started && Contains(out, "guard_start")) started = now;  // the log is followed from here
        if (started && !appended && now - *started > 1500ms) {         // a second poll or more: nothing yet
          EXPECT_TRUE(guard::ProcessAlive(kid.c.pid)) << "a record from before the start stopped it";
          std::ofstream(root + "/dev/kmsg", std::ios::app) << kNewNoMem;
          appended = now;
        }
        if (appended && !stopped && !guard::ProcessAlive(kid.c.pid)) stopped = now;
        return stopped.has_value();
      },
      &rc);
  EXPECT_EQ(rc, 0);
  ASSERT_TRUE(appended && stopped) << "not stopped within the test's 20 s";
  const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(*stopped - *appended);
  EXPECT_LT(took, 10s);
  std::cout << "[ measure ] guard: record appended -> process gone " << took.count() << " ms\n";
  ASSERT_GE(lines.size(), 2u);
  EXPECT_EQ(lines[0]["type"], "guard_start");
  EXPECT_EQ(lines[0]["kernel_signals"], true);
  EXPECT_EQ(lines[0]["kernel_log_followed"], true);
  EXPECT_EQ(lines[1]["type"], "memory_guard");
  EXPECT_EQ(lines[1]["action"], "terminate");
  EXPECT_EQ(lines[1]["reason"], "kernel_nvrm_no_memory");
  EXPECT_EQ(lines[1]["kernel_line"], "NVRM: nvAssertFailedNoLog: Assertion failed: NV_ERR_NO_MEMORY");
  EXPECT_EQ(lines[1]["pid"], kid.c.pid);
  EXPECT_EQ(lines[1]["via"], "pidfd");
  for (size_t i = 2; i < lines.size(); ++i) EXPECT_NE(lines[i]["type"], "memory_guard") << "one record, one stop";
}

TEST(GuardCmd, KernelSignalsOffStopsNothingAndBadValuesAreUsageErrors) {
  testing::TempDir d;
  const std::string name = "guardtest-kmsg-off-" + std::to_string(::getpid());
  Kid kid("exec -a " + name + " sleep 600");
  ASSERT_TRUE(WaitForName(kid, name));
  const std::string root = RoomyRoot(d), out = d.path() + "/guard.out";
  std::optional<std::chrono::steady_clock::time_point> appended;
  int rc = -1;
  auto lines = RunGuard(
      d, {"--root", root, "guard", "--only", name, "--kernel-signals", "off"},
      [&] {
        if (!appended && Contains(out, "guard_start")) {
          std::ofstream(root + "/dev/kmsg", std::ios::app) << kNewNoMem;
          appended = std::chrono::steady_clock::now();
        }
        return appended && std::chrono::steady_clock::now() - *appended > 2500ms;
      },
      &rc);
  EXPECT_EQ(rc, 0);
  EXPECT_TRUE(guard::ProcessAlive(kid.c.pid));
  ASSERT_EQ(lines.size(), 1u) << lines.back().dump();
  EXPECT_EQ(lines[0]["kernel_signals"], false);
  for (const char* bad : {"maybe", "1"}) {
    auto r = testing::RunBinary({"--root", root, "guard", "--kernel-signals", bad});
    EXPECT_EQ(r.rc, 2) << bad;
    EXPECT_NE(r.err.find("--kernel-signals"), std::string::npos) << r.err;
  }
}

// issue 33: the fragmentation trigger in the host guard. The fixture's buddyinfo has no free block at
// the 2 MiB order (9: Hugepagesize 2048 kB) or above in the zones that serve the driver (Movable's do
// not count); MemAvailable sits under twice the 8 GiB floor, flat at first (idle: nothing), then falls
// 0.5 GiB a second, never to the floor: the largest allowed process is stopped, reason fragmentation,
// with the buddyinfo line as evidence. With --kernel-signals off, nothing is stopped.
constexpr const char* kBuddyNone =
    "Node 0, zone    DMA32     5    5    5    5    5    5    5    5    5    0    0\n"
    "Node 0, zone   Normal   900  400  100   30    9    3    1    1    1    0    0\n"
    "Node 0, zone  Movable     0    0    0    0    0    0    0    0    0   12   40\n";

/// Written whole and renamed into place: the guard never reads a half-written meminfo.
void PutMeminfo(const std::string& root, double avail_gib) {
  const auto kib = [](double gib) { return std::to_string(static_cast<uint64_t>(gib * 1024 * 1024)); };
  const std::string tmp = root + "/proc/meminfo.tmp";
  std::ofstream(tmp) << "MemTotal: " << kib(32) << " kB\nMemFree: 1024 kB\nMemAvailable: " << kib(avail_gib)
                     << " kB\nBuffers: 0 kB\nCached: " << kib(3) << " kB\nShmem: 0 kB\nHugepagesize: 2048 kB\n";
  std::filesystem::rename(tmp, root + "/proc/meminfo");
}

struct FragRun {
  std::vector<nlohmann::json> lines;
  int rc = -1;
  bool alive_while_flat = false;
  std::optional<std::chrono::milliseconds> fall_to_gone;  ///< from the fall's start to the process gone
  double avail_at_end = 0;
};

/// Runs the guard on a fragmented fixture root: 2 s flat at 15.5 GiB, then the fall; until `kid` is
/// gone, or (`until_gone` false) 5 s of fall. The guard's own bound (20 s) ends it on a failure.
FragRun RunFragmented(const testing::TempDir& d, const Kid& kid, const std::string& name, bool kernel_signals) {
  const std::string root = d.path() + "/root", out = d.path() + "/guard.out";
  d.Write("root/proc/buddyinfo", kBuddyNone);
  PutMeminfo(root, 15.5);
  std::vector<std::string> args = {"--root", root, "guard", "--only", name, "--min-available", "8G", "--grace", "1"};
  if (!kernel_signals) args.insert(args.end(), {"--kernel-signals", "off"});
  FragRun f;
  std::optional<std::chrono::steady_clock::time_point> started, falling;
  f.lines = RunGuard(
      d, args,
      [&] {
        const auto now = std::chrono::steady_clock::now();
        if (!started && Contains(out, "guard_start")) started = now;
        if (!started) return false;
        if (!falling && now - *started > 2s) {  // two slow polls or more of a flat pool: not growth
          f.alive_while_flat = guard::ProcessAlive(kid.c.pid);
          falling = now;
        }
        if (!falling) return false;
        const double s = std::chrono::duration<double>(now - *falling).count();
        f.avail_at_end = std::max(8.5, 15.5 - 0.5 * s);  // the job grows; the floor (8 GiB) is never crossed
        PutMeminfo(root, f.avail_at_end);
        if (!guard::ProcessAlive(kid.c.pid)) {
          f.fall_to_gone = std::chrono::duration_cast<std::chrono::milliseconds>(now - *falling);
          return true;
        }
        return !kernel_signals && now - *falling > 5s;  // long enough to have acted
      },
      &f.rc);
  return f;
}

TEST(GuardCmd, NoFreeTwoMiBBlockWhileThePoolShrinksStopsTheLargestAllowedProcess) {
  testing::TempDir d;
  const std::string name = "guardtest-frag-" + std::to_string(::getpid());
  Kid kid("exec -a " + name + " sleep 600");  // killed by ~Kid on any failure
  ASSERT_TRUE(WaitForName(kid, name));
  FragRun f = RunFragmented(d, kid, name, true);
  EXPECT_EQ(f.rc, 0);
  EXPECT_TRUE(f.alive_while_flat) << "stopped while MemAvailable was flat";
  ASSERT_TRUE(f.fall_to_gone) << "not stopped within the test's 20 s";
  EXPECT_GT(f.avail_at_end, 8.5) << "the pool reached its lowest point first: the trigger was late";
  std::cout << "[ measure ] guard: fall starts -> process gone " << f.fall_to_gone->count() << " ms\n";
  ASSERT_GE(f.lines.size(), 2u);
  EXPECT_EQ(f.lines[0]["type"], "guard_start");
  EXPECT_EQ(f.lines[0]["fragmentation_watched"], true);
  const nlohmann::json& g = f.lines[1];
  EXPECT_EQ(g["type"], "memory_guard");
  EXPECT_EQ(g["action"], "terminate");
  EXPECT_EQ(g["reason"], "fragmentation");
  EXPECT_EQ(g["pid"], kid.c.pid);
  const std::string b = g.value("buddyinfo", "");
  EXPECT_NE(b.find("no free 2 MiB block (order 9 on 4 KiB pages) in DMA32, Normal"), std::string::npos) << b;
  EXPECT_NE(b.find("MemAvailable fell"), std::string::npos) << b;
  EXPECT_LT(g["mem_available_bytes"].get<double>(), 16.0 * (1ull << 30));
  EXPECT_GT(g["mem_available_bytes"].get<double>(), 8.0 * (1ull << 30)) << "the floor did not act: the blocks did";
  for (size_t i = 2; i < f.lines.size(); ++i) EXPECT_NE(f.lines[i]["type"], "memory_guard") << f.lines[i].dump();
}

TEST(GuardCmd, KernelSignalsOffLeavesFragmentationAlone) {
  testing::TempDir d;
  const std::string name = "guardtest-frag-off-" + std::to_string(::getpid());
  Kid kid("exec -a " + name + " sleep 600");
  ASSERT_TRUE(WaitForName(kid, name));
  FragRun f = RunFragmented(d, kid, name, false);
  EXPECT_EQ(f.rc, 0);
  EXPECT_TRUE(guard::ProcessAlive(kid.c.pid));
  ASSERT_EQ(f.lines.size(), 1u) << f.lines.back().dump();
  EXPECT_EQ(f.lines[0]["kernel_signals"], false);
  EXPECT_FALSE(f.lines[0].contains("fragmentation_watched"));
}

}  // namespace
}  // namespace sparkops
