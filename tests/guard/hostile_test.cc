// The guard as a hostile local user would try it (issue 31): a matcher that cannot be made to
// recurse per byte, victims chosen from kernel facts (fixture /proc trees and real processes in a
// PID namespace of their own), signals that reach only the chosen process.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "base/strings.h"
#include "guard/candidates.h"
#include "guard/pattern.h"
#include "guard/victim.h"
#include "test_util.h"

namespace sparkops::guard {
namespace {

constexpr uint64_t kMiB = 1ull << 20;

TEST(GuardPattern, FourMiBLineForEachFlag) {
  // libstdc++'s std::regex_search overflowed the stack near 30 KB on this very pattern.
  std::string line = "python " + std::string(4u << 20, 'a') + " train";
  auto re = Pattern::Compile("--prefer", "python.*train");
  ASSERT_TRUE(re);
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_FALSE(re->Search(line)) << "only the first 4 KiB are searched: 'train' lies beyond";
  EXPECT_TRUE(re->Search("python x train"));
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(1));

  Candidate hog;
  hog.pid = 10, hog.exe = "/usr/bin/python3.12", hog.cmdline = line, hog.rss = 900 * kMiB;
  Candidate other;
  other.pid = 20, other.exe = "/usr/bin/sleep", other.cmdline = "sleep 1", other.rss = kMiB;
  std::vector<Candidate> procs = {hog, other};
  for (const char* flag : {"--prefer", "--only", "--avoid"}) {
    VictimRules r;
    auto p = Pattern::Compile(flag, "python.*(x|y)+z");
    ASSERT_TRUE(p);
    (std::string(flag) == "--prefer" ? r.prefer : std::string(flag) == "--only" ? r.only : r.avoid) = *p;
    auto v = PickVictim(procs, r);  // must return, not crash
    if (std::string(flag) == "--only") EXPECT_FALSE(v) << flag;
    else ASSERT_TRUE(v) << flag;
  }
}

TEST(GuardPattern, RefusesWhatItCannotRunSafely) {
  EXPECT_FALSE(Pattern::Compile("--avoid", ""));
  EXPECT_FALSE(Pattern::Compile("--avoid", "("));
  EXPECT_FALSE(Pattern::Compile("--avoid", "(a)\\1")) << "back-references need backtracking";
  EXPECT_FALSE(Pattern::Compile("--avoid", std::string(2000, 'a')));
  auto ok = Pattern::Compile("--avoid", "a\\\\1");  // an escaped backslash, then 1
  ASSERT_TRUE(ok);
  EXPECT_TRUE(ok->Search("xa\\1"));
  auto err = Pattern::Compile("--only", "(");
  EXPECT_NE(err.error().message.find("--only"), std::string::npos);
}

std::string Stat(uint32_t pid, const char* comm, char state, uint32_t ppid, uint64_t flags, uint64_t start) {
  return std::to_string(pid) + " (" + comm + ") " + state + " " + std::to_string(ppid) + " 1 1 0 -1 " +
         std::to_string(flags) + " 0 0 0 0 1 1 0 0 20 0 1 0 " + std::to_string(start) + " 1000 100\n";
}

TEST(GuardStatFacts, Table) {
  auto f = ParseStatFacts(Stat(7, "a) (b", 'S', 1, 0x00200040, 4242));
  ASSERT_TRUE(f);
  EXPECT_EQ(f->comm, "a) (b");
  EXPECT_EQ(f->ppid, 1u);
  EXPECT_EQ(f->flags & kPfKthread, kPfKthread);
  EXPECT_EQ(f->start_ticks, 4242u);
  EXPECT_FALSE(ParseStatFacts("7 (x) S 1"));
  EXPECT_FALSE(ParseStatFacts("garbage"));
  EXPECT_FALSE(ParseStatFacts(""));
}

TEST(GuardProcFacts, FixtureHostilesAreSeenForWhatTheyAre) {
  testing::TempDir d;
  auto proc = [&](uint32_t pid, const std::string& rel, const std::string& text) {
    d.Write("proc/" + std::to_string(pid) + "/" + rel, text);
  };
  // A kernel thread by its flag (a user cannot set PF_KTHREAD), though it has a name and no parent 2.
  proc(3, "stat", Stat(3, "kworker/0:1", 'I', 0, kPfKthread, 5));
  proc(3, "status", "Name:\tkworker/0:1\nUid:\t0\t0\t0\t0\n");
  proc(2, "stat", Stat(2, "kthreadd", 'S', 0, kPfKthread, 1));
  // A child of kthreadd whose flags were not read as such still counts (the ppid 2 rule).
  proc(4, "stat", Stat(4, "rcu_gp", 'I', 2, 0, 6));
  // An empty command line (argv zeroed): still a candidate, by its memory.
  proc(10, "stat", Stat(10, "hog", 'S', 1, 0x400000, 100));
  proc(10, "status", "Name:\thog\nUid:\t1000\t1000\t1000\t1000\nVmRSS:\t 2097152 kB\n");
  proc(10, "cmdline", std::string(64, '\0'));
  // A zombie leader: no VmRSS, its live thread holds the memory and names the executable.
  proc(20, "stat", Stat(20, "leader", 'Z', 1, 0x400000, 200));
  proc(20, "status", "Name:\tleader\nUid:\t1000\t1000\t1000\t1000\n");
  proc(20, "task/20/status", "Name:\tleader\nState:\tZ (zombie)\n");
  proc(20, "task/21/status", "Name:\tleader\nVmRSS:\t1048576 kB\n");
  proc(20, "oom_score_adj", "-1000\n");
  proc(20, "oom_score", "0\n");
  proc(20, "cgroup", "0::/user.slice/user-1000.slice/session-4.scope\n");
  // A 4 MiB command line is read only to kMatchBytes.
  proc(30, "stat", Stat(30, "python", 'R', 1, 0, 300));
  proc(30, "status", "Name:\tpython\nVmRSS:\t4 kB\n");
  proc(30, "cmdline", "python\0" + std::string(4u << 20, 'x') + "\0");
  ASSERT_EQ(::symlink("/usr/bin/python3", (d.path() + "/proc/30/exe").c_str()), 0);
  ASSERT_EQ(::symlink("/home/u/hog", (d.path() + "/proc/20/task/21/exe").c_str()), 0);

  HostFs fs(d.path());
  auto all = ReadAllProcFacts(fs);
  ASSERT_EQ(all.size(), 6u);
  std::map<uint32_t, Candidate> by;
  for (auto& p : all) by[p.c.pid] = p.c;
  EXPECT_TRUE(by[3].kthread);
  EXPECT_TRUE(by[4].kthread) << "a child of kthreadd";
  EXPECT_FALSE(by[10].kthread);
  EXPECT_EQ(by[10].cmdline, "");
  EXPECT_EQ(by[10].rss, 2048 * kMiB);
  EXPECT_EQ(by[10].uid, 1000u);
  EXPECT_EQ(by[20].rss, 1024 * kMiB) << "the zombie leader's thread group";
  EXPECT_EQ(by[20].exe, "/home/u/hog");
  EXPECT_EQ(by[20].oom_score_adj, -1000);
  EXPECT_EQ(by[20].oom_score, 0);
  EXPECT_EQ(by[20].cgroup, "/user.slice/user-1000.slice/session-4.scope");
  EXPECT_EQ(by[30].cmdline.size(), kMatchBytes);
  EXPECT_EQ(by[30].exe, "/usr/bin/python3");
  EXPECT_EQ(StartTicksOf(fs, 30), 300u);
  EXPECT_FALSE(StartTicksOf(fs, 31));

  std::vector<Candidate> c;
  for (auto& [pid, k] : by) c.push_back(k);
  auto v = PickVictim(c, {});
  ASSERT_TRUE(v);
  EXPECT_EQ(c[*v].pid, 10u) << "the empty-argv hog; not the kernel thread, not oom_score_adj -1000";
}

// ---- Real processes, each test in a PID namespace of its own (only its processes are candidates).

bool CanUnshare() {
  static const bool ok = std::system("unshare --pid --fork --mount-proc true >/dev/null 2>&1") == 0;
  return ok;
}

struct NsRun {
  std::string log;            ///< the script's stdout (key=value lines)
  std::vector<nlohmann::json> guard;  ///< the guard's JSON lines
  std::string Get(const std::string& key) const {
    for (auto l : SplitLines(log))
      if (l.starts_with(key + "=")) return std::string(l.substr(key.size() + 1));
    return "";
  }
  /// The first memory_guard terminate event's pid, or -1.
  int64_t FirstTerminated() const {
    for (auto& j : guard)
      if (j.value("type", "") == "memory_guard" && j.value("action", "") == "terminate") return j.value("pid", -1);
    return -1;
  }
};

/// Runs, in a new PID namespace: the hog (`hog_prefix` before guard_alloc, 128 MiB), a small
/// innocent `sleep`, `setup` (shell), then the guard with `guard_args` over a fixture meminfo that
/// is always below the floor, until `until` (a shell condition) holds or 15 s pass; then `after`.
NsRun InNamespace(const std::string& hog_prefix, const std::string& setup, const std::string& guard_args,
                  const std::string& until, const std::string& after = "") {
  testing::TempDir d;
  d.Write("root/proc/meminfo",
          "MemTotal: 33554432 kB\nMemAvailable: 1048576 kB\nCached: 0 kB\nBuffers: 0 kB\nShmem: 0 kB\n");
  const std::string script = "set -u\nexport SPARKOPS_GUARD_LEDGER=none\ncd '" + d.path() + "'\n" + hog_prefix + " " +
                             testing::TargetShell({testing::BuildArtifact("guard_alloc"), "64", "0", "128"}) +
                             " > hog.out 2>&1 &\nH=$!\necho hog=$H\n"
                             "for i in $(seq 1500); do grep -q 'allocated 128 MiB' hog.out && break; sleep 0.01; done\n"
                             "(exec -a innocent sleep 600) & S=$!\necho innocent=$S\n" +
                             setup + "\n" + testing::TargetShell({testing::SparkopsBin()}) +
                             " --root root guard --grace 1 " + guard_args +
                             " > guard.out 2> guard.err &\nG=$!\n"
                             "for i in $(seq 1500); do " +
                             until + " && break; sleep 0.01; done\n" + "echo done=1\n" + after + "\n";
  d.Write("run.sh", script + "kill $G; wait $G 2>/dev/null\nkill -9 $S 2>/dev/null\n");
  NsRun r;
  const std::string out = d.path() + "/run.out";
  (void)std::system(
      ("timeout 30 unshare --pid --fork --mount-proc bash '" + d.path() + "/run.sh' > '" + out + "' 2>&1").c_str());
  r.log = testing::ReadFileOrDie(out);
  const std::string g = testing::ReadFileOrDie(d.path() + "/guard.out");
  for (auto l : SplitLines(g)) {
    auto j = nlohmann::json::parse(l, nullptr, false);
    if (!j.is_discarded()) r.guard.push_back(j);
  }
  return r;
}

const char* kTerminated = "grep -q '\"action\":\"terminate\"' guard.out";

TEST(GuardHostile, EmptyArgvHogIsChosen) {
  if (!CanUnshare()) GTEST_SKIP() << "cannot create a PID namespace here (unshare --pid --fork --mount-proc)";
  auto r = InNamespace("GUARD_ALLOC_MODE=clear-argv", "", "", kTerminated);
  EXPECT_EQ(std::to_string(r.FirstTerminated()), r.Get("hog")) << r.log;
}

TEST(GuardHostile, ZombieLeaderHogIsChosenAndSeenToExit) {
  if (!CanUnshare()) GTEST_SKIP() << "cannot create a PID namespace here";
  auto r = InNamespace("GUARD_ALLOC_MODE=zombie-leader", "", "", "grep -q victim_exited guard.out");
  EXPECT_EQ(std::to_string(r.FirstTerminated()), r.Get("hog")) << r.log;
  bool exited = false;
  for (auto& j : r.guard)
    exited |= j.value("type", "") == "victim_exited" && std::to_string(j.value("pid", 0)) == r.Get("hog");
  EXPECT_TRUE(exited) << "the pidfd reports the whole thread group's exit";
}

TEST(GuardHostile, HogPosingAsSshdUnderAvoid) {
  if (!CanUnshare()) GTEST_SKIP() << "cannot create a PID namespace here";
  auto r = InNamespace("exec -a 'sshd: alice [priv]'", "", "--avoid sshd", kTerminated);
  EXPECT_EQ(std::to_string(r.FirstTerminated()), r.Get("hog")) << "--avoid never reads argv\n" << r.log;
}

TEST(GuardHostile, OomScoreAdjMinus1000IsNeverChosen) {
  if (!CanUnshare()) GTEST_SKIP() << "cannot create a PID namespace here";
  // --only keeps the choice between the hog and the innocent (not the script's short-lived greps).
  auto r = InNamespace("", "echo -1000 > /proc/$H/oom_score_adj && echo adj=1", "--only 'guard_alloc|innocent'",
                       kTerminated);
  if (r.Get("adj") != "1") GTEST_SKIP() << "this sandbox cannot set oom_score_adj -1000\n" << r.log;
  EXPECT_EQ(std::to_string(r.FirstTerminated()), r.Get("innocent")) << r.log;
}

TEST(GuardHostile, ReusedPidAfterSigtermIsNotKilled) {
  if (!CanUnshare()) GTEST_SKIP() << "cannot create a PID namespace here";
  // The hog dies of the SIGTERM; its PID goes at once to a new `sleep` (ns_last_pid). The guard must
  // not SIGKILL that sleep after the grace (it did, by PID, in 4 of 4 rounds before pidfds).
  // The guard logs "none" (nothing else matches --only) once it is past the grace and any SIGKILL.
  auto r = InNamespace("", "", "--only guard_alloc", kTerminated,
                       "wait $H; echo $((H - 1)) > /proc/sys/kernel/ns_last_pid; sleep 600 & R=$!; echo reused=$R\n"
                       "for j in $(seq 1500); do grep -q '\"action\":\"none\"' guard.out && break; sleep 0.01; done\n"
                       "grep -q '^State:.*[SR]' /proc/$R/status && echo reused_alive=1\nkill -9 $R");
  if (r.Get("reused") != r.Get("hog")) GTEST_SKIP() << "the PID was not reused here (ns_last_pid)\n" << r.log;
  EXPECT_EQ(r.Get("reused_alive"), "1") << r.log;
  for (auto& j : r.guard) EXPECT_NE(j.value("signal", ""), "SIGKILL") << j.dump();
}

}  // namespace
}  // namespace sparkops::guard
