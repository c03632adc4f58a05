// The host guard stops a whole systemd unit where cgroups say which one holds the memory (like
// systemd-oomd), else the process alone (guard/victim.h ChooseStop, guard/unit_stop.h).
#include "guard/unit_stop.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <map>

#include "guard/candidates.h"
#include "guard/victim.h"
#include "test_util.h"

namespace sparkops::guard {
namespace {

constexpr uint64_t kMiB = 1ull << 20;

Candidate In(uint32_t pid, std::string cgroup) {
  Candidate c;
  c.pid = pid, c.cgroup = std::move(cgroup), c.rss = 100 * kMiB;
  return c;
}

TEST(GuardChooseStop, Table) {
  const std::set<std::string> guard_own = {"/system.slice/sparkops-guard.service", "/init.scope"};
  struct Case {
    const char* cgroup;
    const char* unit;  // "" : the process alone
    const char* why;   // part of the reason when alone
  } cases[] = {
      {"/system.slice/vllm.service", "vllm.service", ""},
      {"/system.slice/docker-0123abcd.scope", "docker-0123abcd.scope", ""},
      {"/user.slice/user-1000.slice/session-4.scope", "session-4.scope", ""},
      {"/system.slice/system-train.slice/train@1.service", "train@1.service", ""},
      // the guard's own unit, PID 1's scope, and a unit the guard sits below
      {"/system.slice/sparkops-guard.service", "", "the guard"},
      {"/init.scope", "", "not under system.slice or user.slice"},
      // not a unit's own cgroup: the root, a slice, a delegated sub-cgroup, a unit inside a unit
      {"/", "", "not a systemd service or scope"},
      {"", "", "not a systemd service or scope"},
      {"/user.slice/user-1000.slice", "", "not a systemd service or scope"},
      {"/system.slice/containerd.service/payload", "", "not a systemd service or scope"},
      {"/user.slice/user-1000.slice/user@1000.service/app.slice/app-term.scope", "", "inside another unit"},
      {"/machine.slice/machine-vm.scope", "", "not under system.slice or user.slice"},
      // --avoid-unit
      {"/system.slice/ssh.service", "", "--avoid-unit ssh.service"},
  };
  VictimRules rules;
  rules.avoid_units = {"ssh.service"};
  for (const Case& c : cases) {
    StopChoice s = ChooseStop(In(500, c.cgroup), guard_own, rules);
    EXPECT_EQ(s.unit, c.unit) << c.cgroup;
    if (*c.unit) EXPECT_EQ(s.cgroup, c.cgroup);
    else EXPECT_NE(s.why_process.find(c.why), std::string::npos) << c.cgroup << ": " << s.why_process;
  }
  // a guard started from a login shell: its ancestor's scope is never stopped whole, nor one above it
  const std::set<std::string> from_shell = {"/user.slice/user-1000.slice/session-4.scope/sub"};
  EXPECT_EQ(ChooseStop(In(500, "/user.slice/user-1000.slice/session-4.scope"), from_shell, {}).unit, "");
  EXPECT_EQ(ChooseStop(In(500, "/user.slice/user-1000.slice/session-5.scope"), from_shell, {}).unit, "session-5.scope")
      << "a sibling's unit is not protected";
  // a prefix of a protected path that is not its parent does not protect
  EXPECT_EQ(ChooseStop(In(500, "/system.slice/sparkops-guard.serv.scope"), guard_own, {}).unit,
            "sparkops-guard.serv.scope");
}

TEST(GuardCgroupDir, Table) {
  EXPECT_EQ(CgroupDir("/sys/fs/cgroup", "/", "/system.slice/a.service"), "/sys/fs/cgroup/system.slice/a.service");
  EXPECT_EQ(CgroupDir("/sys/fs/cgroup", "/", "/"), "/sys/fs/cgroup");
  EXPECT_EQ(CgroupDir("/sys/fs/cgroup", "/ns", "/ns/system.slice/a.service"), "/sys/fs/cgroup/system.slice/a.service");
  EXPECT_FALSE(CgroupDir("/sys/fs/cgroup", "/ns", "/nsx/a.service"));
  EXPECT_FALSE(CgroupDir("/sys/fs/cgroup", "/", "/system.slice/../../etc"));
  EXPECT_FALSE(CgroupDir("/sys/fs/cgroup", "/", "relative"));
}

// From a fixture /proc and cgroup tree: the hog is read, chosen, its unit stopped whole through the
// unit's cgroup.kill; a PID listed in cgroup.procs that /proc does not put in the unit is not signalled.
TEST(GuardUnitStop, FixtureProcAndCgroupTree) {
  testing::TempDir d;
  auto proc = [&](uint32_t pid, const std::string& comm, const std::string& cgroup, uint64_t rss_kb) {
    const std::string p = "proc/" + std::to_string(pid) + "/";
    d.Write(p + "stat", std::to_string(pid) + " (" + comm + ") S 1 1 1 0 -1 4194304 0 0 0 0 1 1 0 0 20 0 1 0 " +
                            std::to_string(100 + pid) + " 1000 100\n");
    d.Write(p + "status", "Name:\t" + comm + "\nUid:\t0\t0\t0\t0\nVmRSS:\t" + std::to_string(rss_kb) + " kB\n");
    d.Write(p + "cgroup", "0::" + cgroup + "\n");
  };
  proc(1, "systemd", "/init.scope", 10000);
  proc(40, "sparkops", "/system.slice/sparkops-guard.service", 5000);
  proc(70, "python3", "/system.slice/vllm.service", 8 * 1024 * 1024);
  proc(71, "python3", "/system.slice/vllm.service", 1024);
  auto facts = ReadAllProcFacts(HostFs(d.path()));
  std::vector<Candidate> cands;
  for (auto& f : facts) cands.push_back(f.c);
  VictimRules rules;
  rules.protect = {40};
  auto v = PickVictim(cands, rules);
  ASSERT_TRUE(v);
  ASSERT_EQ(cands[*v].pid, 70u);
  std::set<std::string> prot;
  for (const auto& c : cands)
    if (c.pid == 1 || rules.protect.count(c.pid)) prot.insert(c.cgroup);
  StopChoice s = ChooseStop(cands[*v], prot, rules);
  ASSERT_EQ(s.unit, "vllm.service");

  const std::string self = std::to_string(::getpid());
  d.Write("cg/system.slice/vllm.service/cgroup.procs", "70\n71\n" + self + "\n");
  d.Write("cg/system.slice/vllm.service/cgroup.events", "populated 1\nfrozen 0\n");
  d.Write("cg/system.slice/vllm.service/cgroup.kill", "");
  auto dir = CgroupDir(d.path() + "/cg", "/", s.cgroup);
  ASSERT_TRUE(dir);
  EXPECT_FALSE(UnitStop::Open(*dir, s.cgroup, 99)) << "a unit whose cgroup does not list the victim";
  auto unit = UnitStop::Open(*dir, s.cgroup, 70);
  ASSERT_TRUE(unit);
  // SIGTERM by pidfd: this test process is listed but /proc puts it elsewhere (70 and 71 do not
  // exist here, or are other processes): nothing is signalled.
  EXPECT_EQ(unit->Signal(SIGTERM), 0u);
  EXPECT_FALSE(unit->WaitEmpty(0.1));
  EXPECT_EQ(unit->Signal(SIGKILL), 3u) << "cgroup.kill: every process listed";
  EXPECT_TRUE(unit->used_cgroup_kill());
  EXPECT_EQ(testing::ReadFileOrDie(*dir + "/cgroup.kill"), "1");
  d.Write("cg/system.slice/vllm.service/cgroup.events", "populated 0\nfrozen 0\n");
  EXPECT_TRUE(unit->WaitEmpty(5));
}

}  // namespace
}  // namespace sparkops::guard
