// /proc's PIDs against this process's own (host/pidns.h): the mapping (pure) and, where
// `unshare --pid` is permitted, the guard and `run` inside a PID namespace whose /proc is the outer
// one, as some sandboxes and CI runners set them up.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "base/strings.h"
#include "host/child.h"
#include "host/pidns.h"
#include "test_util.h"

namespace sparkops {
namespace {

using namespace std::chrono_literals;

TEST(PidNs, ParseNsPid) {
  EXPECT_EQ(ParseNsPid("Name:\tx\nNSpid:\t4242\n"), (std::vector<uint32_t>{4242}));
  EXPECT_EQ(ParseNsPid("NSpid:\t11471\t3\nNStgid:\t1\n"), (std::vector<uint32_t>{11471, 3}));
  EXPECT_EQ(ParseNsPid("NSpid: 7 2 1"), (std::vector<uint32_t>{7, 2, 1}));
  EXPECT_TRUE(ParseNsPid("Name:\tx\nPid:\t9\n").empty()) << "Linux < 4.1: no NSpid line";
  EXPECT_TRUE(ParseNsPid("NSpid:\t12\tx\n").empty());
  EXPECT_TRUE(ParseNsPid("NSpid:\t0\n").empty()) << "no PID is 0";
  EXPECT_TRUE(ParseNsPid("NSpid:\t99999999999\n").empty());
  std::string deep = "NSpid:";
  for (int i = 1; i <= 70; ++i) deep += "\t" + std::to_string(i);
  EXPECT_TRUE(ParseNsPid(deep).empty()) << "deeper than the kernel allows";
}

TEST(PidNs, SpaceFromSelfAndTheMapping) {
  const std::string ns = "pid:[4026532001]", other = "pid:[4026532999]";
  PidSpace same("Name:\tsparkops\nPid:\t100\nNSpid:\t100\n", 100, ns);
  EXPECT_TRUE(same.same());
  EXPECT_EQ(same.Local(555, {}, ""), 555u) << "same space: /proc's number is the one to signal";

  PidSpace inner("Name:\tsparkops\nPid:\t5000\nNSpid:\t5000\t3\n", 3, ns);
  EXPECT_FALSE(inner.same());
  EXPECT_TRUE(inner.known());
  EXPECT_EQ(inner.depth(), 1u);
  EXPECT_EQ(inner.self_proc_pid(), 5000u);
  EXPECT_EQ(inner.Local(5001, {5001, 7}, ns), 7u) << "a process of this namespace";
  EXPECT_FALSE(inner.Local(5002, {5002}, "pid:[4026531836]")) << "the outer namespace's: never signalled";
  EXPECT_FALSE(inner.Local(5003, {5003, 8}, other)) << "a sibling namespace at the same depth";
  EXPECT_FALSE(inner.Local(5004, {5004, 9, 1}, other)) << "nested below: not this namespace";
  EXPECT_FALSE(inner.Local(5005, {}, ns)) << "no NSpid: cannot tell";
  EXPECT_TRUE(inner.Matches(7, {5001, 7}, ns));
  EXPECT_FALSE(inner.Matches(8, {5001, 7}, ns));

  PidSpace old_same("Name:\tx\nPid:\t42\n", 42, ns);
  EXPECT_TRUE(old_same.same()) << "an old kernel where the numbers agree";
  PidSpace old_differ("Name:\tx\nPid:\t4242\n", 42, ns);
  EXPECT_FALSE(old_differ.known());
  EXPECT_FALSE(old_differ.Local(4243, {}, ns)) << "cannot be mapped: nothing is signalled";
  PidSpace lying("Name:\tx\nNSpid:\t5000\t3\n", 4, ns);
  EXPECT_FALSE(lying.known()) << "/proc/self is not this process";
  EXPECT_TRUE(PidSpace("", 42, ns).same()) << "no /proc at all";
}

TEST(PidNs, RealSpaceMapsThisProcessBothWays) {
  const uint32_t self = static_cast<uint32_t>(::getpid());
  auto in_proc = ProcPidOf(self);
  ASSERT_TRUE(in_proc) << "this process not found in /proc";
  EXPECT_EQ(*in_proc, PidSpace::Real().self_proc_pid());
  EXPECT_EQ(LocalPidOf(*in_proc), self);
  std::printf("/proc numbers this process %u, getpid() %u (depth %zu)\n", *in_proc, self, PidSpace::Real().depth());
}

bool CanUnsharePid() { return std::system("unshare --pid --fork true >/dev/null 2>&1") == 0; }

/// One single-quoted shell word.
std::string Quoted(const std::string& s) { return "'" + s + "'"; }

// Inside `unshare --pid --fork` (no --mount-proc) /proc lists the outer namespace. The guard must
// stop the tagged process of its own namespace and never the larger tagged one outside it, whose
// /proc number would name another process (or none) inside.
TEST(PidNs, GuardInsideANamespaceWithTheOuterProcSignalsOnlyItsOwn) {
  if (!CanUnsharePid()) GTEST_SKIP() << "unshare --pid is not permitted here";
  testing::TempDir d;
  d.Write("root/proc/meminfo",
          "MemTotal: 33554432 kB\nMemAvailable: 1048576 kB\nCached: 0 kB\nBuffers: 0 kB\nShmem: 0 kB\n");
  const std::string tag = "nstest-" + std::to_string(::getpid());
  auto outer = SpawnChild({"bash", "-c",
                           "exec -a " + tag + "-outer " +
                               testing::TargetShell({testing::BuildArtifact("guard_alloc"), "64", "0", "128"})},
                          false);
  ASSERT_TRUE(outer);
  std::this_thread::sleep_for(300ms);
  const std::string script = "(exec -a " + tag + "-inner sleep 600) & inner=$!; echo $inner > " + d.path() +
                             "/inner.pid; sleep 0.3; " + testing::TargetShell({testing::SparkopsBin()}) + " --root " +
                             d.path() + "/root --nvml none --nvidia-smi none " + "guard --only '" + tag +
                             "-' --grace 1 > " + d.path() + "/guard.out 2> " + d.path() + "/guard.err & g=$!; " +
                             "for i in $(seq 300); do kill -0 $inner 2>/dev/null || break; sleep 0.05; done; " +
                             "kill -0 $inner 2>/dev/null && echo alive > " + d.path() + "/inner.state || echo gone > " +
                             d.path() + "/inner.state; " + "kill $g; wait $g; kill -9 $inner 2>/dev/null; true";
  const std::string cmd = "timeout 60 unshare --pid --fork bash " + d.Write("inside.sh", script);
  EXPECT_EQ(std::system(cmd.c_str()), 0);
  const bool outer_alive = ::kill(outer->pid, 0) == 0;
  ::kill(outer->pid, SIGKILL);
  WaitChild(*outer);
  ::close(outer->out_fd), ::close(outer->err_fd);

  const std::string inner_pid = std::string(Trim(testing::ReadFileOrDie(d.path() + "/inner.pid")));
  EXPECT_EQ(Trim(testing::ReadFileOrDie(d.path() + "/inner.state")), "gone")
      << testing::ReadFileOrDie(d.path() + "/guard.err");
  EXPECT_TRUE(outer_alive) << "a process outside the namespace was signalled";
  const std::string out = testing::ReadFileOrDie(d.path() + "/guard.out");
  bool saw = false;
  for (auto line : SplitLines(out)) {
    auto j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded() || j.value("type", "") != "memory_guard" || !j.contains("pid")) continue;
    EXPECT_EQ(std::to_string(j["pid"].get<uint32_t>()), inner_pid) << "the namespace's own number";
    saw = true;
  }
  EXPECT_TRUE(saw) << out;
}

// `run` inside such a namespace: the job's CPU is found under /proc's number for it (job_cores).
TEST(PidNs, RunInsideANamespaceWithTheOuterProcMeasuresTheJob) {
  if (!CanUnsharePid()) GTEST_SKIP() << "unshare --pid is not permitted here";
  testing::TempDir d;
  const std::string dir = d.path() + "/r";
  const std::string cmd = "timeout 60 unshare --pid --fork " + testing::TargetShell({testing::SparkopsBin()}) +
                          " --nvml none --nvidia-smi none run --out " + dir + " --interval 0.5 -- bash -c " +
                          Quoted("end=$((SECONDS+3)); while [ $SECONDS -lt $end ]; do :; done") + " > " + d.path() +
                          "/run.out 2>&1";
  EXPECT_EQ(std::system(cmd.c_str()), 0) << testing::ReadFileOrDie(d.path() + "/run.out");
  const std::string csv = testing::ReadFileOrDie(dir + "/thermal.csv");
  auto lines = SplitLines(csv);
  ASSERT_GE(lines.size(), 3u) << csv;
  // job_cores, other_cores, then issue 33's six columns
  ASSERT_NE(lines[0].find(",job_cores,other_cores,free_2mib_blocks,"), std::string::npos) << lines[0];
  auto head = Split(lines[0], ',');
  const size_t from_end =
      head.size() - static_cast<size_t>(std::find(head.begin(), head.end(), "job_cores") - head.begin());
  double best = 0;
  for (size_t i = 1; i < lines.size(); ++i) {
    auto f = Split(lines[i], ',');  // counted from the end: an event cell earlier may hold commas
    if (f.size() >= from_end && !f[f.size() - from_end].empty())
      best = std::max(best, std::strtod(std::string(f[f.size() - from_end]).c_str(), nullptr));
  }
  // A busy job on a loaded 2-core machine gets well under a core; not found, it reads ~0.02.
  EXPECT_GT(best, 0.15) << "the busy job was not found under /proc's number for it\n" << csv;
}

}  // namespace
}  // namespace sparkops
