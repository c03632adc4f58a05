// The memory guard's ledger (guard/ledger.h) and the exporter's guard metrics
// (report/guard_metrics.h): the file format, fixture /run trees read by the exporter, and real
// guards (`sparkops guard`, `run`'s guard) writing their ledgers where SPARKOPS_GUARD_LEDGER says.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "base/strings.h"
#include "guard/ledger.h"
#include "host/child.h"
#include "host/hostfs.h"
#include "report/guard_metrics.h"
#include "test_util.h"

namespace sparkops {
namespace {

using namespace std::chrono_literals;
using guard::Ledger;

Ledger Sample(const char* mode, uint32_t pid) {
  Ledger l;
  l.pid = pid, l.start_ticks = 555, l.mode = mode, l.min_available_bytes = 8ull << 30, l.max_pressure = 40;
  return l;
}

TEST(GuardLedger, JsonRoundTripAndErrorsNameTheField) {
  Ledger l = Sample("run", 4242);
  l.actions[{"terminate", "min_available"}] = 2;
  l.actions[{"flush", "pressure"}] = 1;
  auto back = guard::ParseLedger(guard::LedgerJson(l));
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(back->pid, 4242u);
  EXPECT_EQ(back->start_ticks, 555u);
  EXPECT_EQ(back->mode, "run");
  EXPECT_EQ(back->min_available_bytes, 8ull << 30);
  EXPECT_EQ(back->max_pressure, 40.0);
  EXPECT_EQ(back->actions, l.actions);
  EXPECT_EQ(back->run_dir, "");
  l.run_dir = "/home/u/runs/a";
  EXPECT_EQ(guard::ParseLedger(guard::LedgerJson(l))->run_dir, "/home/u/runs/a");

  const std::string ok = R"("start_ticks":1,"mode":"host","min_available_bytes":1,"actions":[])";
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"[]", "JSON object"},
      {"{" + ok + "}", "field pid"},
      {R"({"pid":-1,)" + ok + "}", "field pid"},
      {R"({"pid":4294967296,)" + ok + "}", "field pid"},
      {R"({"pid":1,"start_ticks":1,"mode":"x","min_available_bytes":1,"actions":[]})", "field mode"},
      {R"({"pid":1,"start_ticks":1,"mode":"run","min_available_bytes":1.5,"actions":[]})", "field min_available_bytes"},
      {R"({"pid":1,"start_ticks":1,"mode":"run","min_available_bytes":1})", "field actions"},
      {R"({"pid":1,"start_ticks":1,"mode":"run","min_available_bytes":1,"actions":[{"action":"kill"}]})",
       "field actions"},
      {R"({"pid":1,"start_ticks":1,"mode":"run","min_available_bytes":1,"actions":[{"action":"kill","reason":"pressure","count":-2}]})",
       "field actions"},
      {R"({"pid":1,"start_ticks":1,"mode":"run","min_available_bytes":1,"actions":[{"action":"x","reason":"pressure","count":2}]})",
       "unknown action 'x'"},
      {R"({"pid":1,"start_ticks":1,"mode":"run","min_available_bytes":1,"actions":[{"action":"kill","reason":"y","count":2}]})",
       "unknown reason 'y'"},
      {R"({"pid":1,"start_ticks":1,"mode":"run","min_available_bytes":1,"max_pressure":1e400,"actions":[]})",
       "JSON object"},
      {R"({"pid":1,"start_ticks":1,"mode":"run","min_available_bytes":1,"max_pressure":101,"actions":[]})",
       "field max_pressure"},
      {R"({"pid":1,"start_ticks":1,"mode":"host","min_available_bytes":1,"actions":[],"run_dir":"/a"})",
       "field run_dir"},
      {R"({"pid":1,"start_ticks":1,"mode":"run","min_available_bytes":1,"actions":[],"run_dir":"a/b"})",
       "field run_dir"},
      {R"({"pid":1,"start_ticks":1,"mode":"run","min_available_bytes":1,"actions":[],"run_dir":"/a/../etc"})",
       "field run_dir"},
      {R"({"pid":1,"start_ticks":1,"mode":"run","min_available_bytes":1,"actions":[],"run_dir":"/a\u001b[2J"})",
       "field run_dir"},
  };
  for (const auto& [text, field] : bad) {
    auto r = guard::ParseLedger(text);
    ASSERT_FALSE(r) << text;
    EXPECT_NE(r.error().message.find(field), std::string::npos) << text << " -> " << r.error().message;
  }
}

TEST(GuardLedger, DirectoryFromTheSetting) {
  EXPECT_EQ(guard::ResolveLedgerDir("", 0), "/run/sparkops/guard");
  EXPECT_EQ(guard::ResolveLedgerDir("", 1000), "/run/user/1000/sparkops/guard");
  EXPECT_EQ(guard::ResolveLedgerDir("none", 0), "");
  EXPECT_EQ(guard::ResolveLedgerDir("/tmp/x", 0), "/tmp/x");
}

TEST(GuardMetrics, CountersSumEveryLedgerFromZeroAndFloorsAreTheLiveGuards) {
  Ledger a = Sample("run", 10), b = Sample("run", 11), c = Sample("host", 12);
  a.actions[{"terminate", "min_available"}] = 1;
  b.actions[{"terminate", "min_available"}] = 2;
  b.actions[{"kill", "pressure"}] = 1;
  c.max_pressure.reset();
  auto points = GuardMetricPoints({{a, false}, {b, true}, {c, true}});
  auto value = [&](const char* family,
                   std::vector<std::pair<std::string, std::string>> labels) -> std::optional<double> {
    for (const MetricPoint& p : points)
      if (std::string(p.family) == family && p.labels == labels) return p.value;
    return std::nullopt;
  };
  const char* kA = "sparkops_memory_guard_actions_total";
  EXPECT_EQ(value(kA, {{"mode", "run"}, {"action", "terminate"}, {"reason", "min_available"}}), 3.0)
      << "exited guards still count";
  EXPECT_EQ(value(kA, {{"mode", "run"}, {"action", "kill"}, {"reason", "pressure"}}), 1.0);
  EXPECT_EQ(value(kA, {{"mode", "host"}, {"action", "flush"}, {"reason", "pressure"}}), 0.0)
      << "seeded at 0 for increase()";
  EXPECT_FALSE(value(kA, {{"mode", "host"}, {"action", "would_terminate"}, {"reason", "min_available"}}));
  const char* kF = "sparkops_memory_guard_min_available_bytes";
  EXPECT_FALSE(value(kF, {{"mode", "run"}, {"pid", "10"}})) << "a guard that exited has no floor in force";
  EXPECT_EQ(value(kF, {{"mode", "run"}, {"pid", "11"}}), static_cast<double>(8ull << 30));
  EXPECT_EQ(value("sparkops_memory_guard_max_pressure_ratio", {{"mode", "run"}, {"pid", "11"}}), 0.4);
  EXPECT_FALSE(value("sparkops_memory_guard_max_pressure_ratio", {{"mode", "host"}, {"pid", "12"}})) << "PSI not used";
  EXPECT_TRUE(GuardMetricPoints({}).empty()) << "no guard: no series";
}

std::string Stat(uint32_t pid, uint64_t start) {
  return std::to_string(pid) + " (sparkops) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 " + std::to_string(start) +
         " 0 0\n";
}

TEST(GuardMetrics, ExporterReadsTheLedgersUnderItsRoot) {
  testing::TempDir d;
  d.Write("root/proc/meminfo", "MemTotal: 33554432 kB\nMemAvailable: 16777216 kB\n");
  Ledger live = Sample("host", 100), gone = Sample("run", 200), reused = Sample("run", 300);
  live.actions[{"terminate", "min_available"}] = 1;
  gone.actions[{"kill", "min_available"}] = 4;
  d.Write("root/proc/100/stat", Stat(100, 555));
  d.Write("root/proc/100/status", "Name:\tsparkops\nUid:\t0\t0\t0\t0\n");
  d.Write("root/proc/300/stat", Stat(300, 999));  // PID 300 now belongs to another process
  d.Write("root/run/sparkops/guard/100.json", guard::LedgerJson(live));
  d.Write("root/run/user/1000/sparkops/guard/200.json", guard::LedgerJson(gone));
  d.Write("root/run/user/1000/sparkops/guard/300.json", guard::LedgerJson(reused));
  d.Write("root/run/user/1000/sparkops/guard/300.json.tmp.7", "{half");  // a temporary: not a ledger
  auto r = testing::RunInProcess(
      {"--root", d.path() + "/root", "--nvml", "none", "--nvidia-smi", "none", "exporter", "--once"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find(
                "sparkops_memory_guard_actions_total{mode=\"host\",action=\"terminate\",reason=\"min_available\"} 1\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find(
                "sparkops_memory_guard_actions_total{mode=\"run\",action=\"kill\",reason=\"min_available\"} 4\n"),
            std::string::npos);
  EXPECT_NE(r.out.find("sparkops_memory_guard_min_available_bytes{mode=\"host\",pid=\"100\"} 8589934592\n"),
            std::string::npos);
  EXPECT_EQ(r.out.find("sparkops_memory_guard_min_available_bytes{mode=\"run\""), std::string::npos)
      << "200 gone, 300 reused";
  EXPECT_NE(r.out.find("sparkops_collector_success{collector=\"guard\"} 1\n"), std::string::npos);

  d.Write("root/run/sparkops/guard/999.json",
          "{\"pid\": \"x\"}");  // a malformed ledger fails the collector, not the rest
  r = testing::RunInProcess(
      {"--root", d.path() + "/root", "--nvml", "none", "--nvidia-smi", "none", "exporter", "--once"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("sparkops_collector_success{collector=\"guard\"} 0\n"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("collector guard: /run/sparkops/guard/999.json: field pid"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("action=\"kill\",reason=\"min_available\"} 4\n"), std::string::npos);

  // Another user's runtime directory is hostile ground: a FIFO and a link to /dev/zero named like
  // ledgers are refused at once (never read, never waited on), the good ledgers still count.
  ::unlink((d.path() + "/root/run/sparkops/guard/999.json").c_str());
  ASSERT_EQ(::mkfifo((d.path() + "/root/run/user/1000/sparkops/guard/500.json").c_str(), 0600), 0);
  ASSERT_EQ(::symlink("/dev/zero", (d.path() + "/root/run/user/1000/sparkops/guard/600.json").c_str()), 0);
  const auto t0 = std::chrono::steady_clock::now();
  r = testing::RunInProcess(
      {"--root", d.path() + "/root", "--nvml", "none", "--nvidia-smi", "none", "exporter", "--once"});
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(5));
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("sparkops_collector_success{collector=\"guard\"} 0\n"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("500.json"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("action=\"kill\",reason=\"min_available\"} 4\n"), std::string::npos);
}

// A real `sparkops guard` keeps its ledger in SPARKOPS_GUARD_LEDGER: a start state, then each action.
TEST(GuardLedger, StandaloneGuardCountsItsActions) {
  testing::TempDir d;
  d.Write("root/proc/meminfo",
          "MemTotal: 33554432 kB\nMemAvailable: 1048576 kB\nCached: 0 kB\nBuffers: 0 kB\nShmem: 0 kB\n");
  const std::string dir = d.path() + "/ledgers";
  const std::string tag = "ledgertest-" + std::to_string(::getpid());
  auto victim = SpawnChild({"bash", "-c", "exec -a " + tag + " sleep 600"}, false);
  ASSERT_TRUE(victim);
  std::this_thread::sleep_for(300ms);
  testing::ScopedEnv env("SPARKOPS_GUARD_LEDGER", dir);
  pid_t g = testing::SpawnSparkops({"--root", d.path() + "/root", "--nvml", "none", "--nvidia-smi", "none", "guard",
                                    "--only", tag, "--grace", "1"},
                                   {.out = d.path() + "/guard.out", .err = d.path() + "/guard.err"});
  ASSERT_GT(g, 0);
  int st = 0;
  for (int i = 0; i < 400 && ::waitpid(victim->pid, &st, WNOHANG) == 0; ++i) std::this_thread::sleep_for(25ms);
  ::kill(g, SIGTERM);
  ::waitpid(g, &st, 0);
  ::kill(victim->pid, SIGKILL);
  WaitChild(*victim);
  ::close(victim->out_fd), ::close(victim->err_fd);
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(dir)) files.push_back(e.path().string());
  ASSERT_EQ(files.size(), 1u) << "one ledger, no temporaries left";
  auto l = guard::ParseLedger(testing::ReadFileOrDie(files[0]));
  ASSERT_TRUE(l) << l.error().message;
  EXPECT_EQ(l->mode, "host");
  EXPECT_EQ(l->min_available_bytes, 4ull << 30);
  EXPECT_EQ((l->actions[{"terminate", "min_available"}]), 1u) << testing::ReadFileOrDie(d.path() + "/guard.out");
  EXPECT_NE(testing::ReadFileOrDie(d.path() + "/guard.out").find("\"ledger\":\"" + files[0] + "\""), std::string::npos);
}

TEST(GuardLedger, NoLedgerWhenTheDirectoryCannotBeMadeAndTheGuardGoesOn) {
  testing::TempDir d;
  d.Write("root/proc/meminfo", "MemTotal: 33554432 kB\nMemAvailable: 16777216 kB\n");
  const std::string file = d.Write("plain", "x");
  auto r = testing::RunBinary({"--root", d.path() + "/root", "--nvml", "none", "--nvidia-smi", "none", "guard",
                               "--only", "nothing"},
                              {{"SPARKOPS_GUARD_LEDGER", file + "/sub"}}, 3000);
  EXPECT_NE(r.err.find("no ledger"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(file + "/sub"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("guard_start"), std::string::npos) << "the guard still runs";
}

/// The labels of every ledger ReadLedgers believes, "pid:mode", in order.
std::vector<std::string> Believed(const std::string& root, std::vector<std::string>* problems) {
  std::vector<std::string> out;
  for (const Ledger& l : guard::ReadLedgers(HostFs(root), problems))
    out.push_back(std::to_string(l.pid) + ":" + l.mode);
  return out;
}

std::string Joined(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += x + "\n";
  return s;
}

// A user's runtime directory is theirs to fill: forged, duplicated and linked ledgers are refused
// each with a reason, and junk in one user's directory hides no other user's guard (issue 29).
TEST(GuardLedgerTrust, ForgedDuplicatedAndLinkedLedgersAreNotCounted) {
  testing::TempDir d;
  const std::string root = d.path() + "/root";
  d.Write("root/proc/meminfo", "MemTotal: 33554432 kB\nMemAvailable: 16777216 kB\n");
  d.Write("root/proc/100/stat", Stat(100, 555));  // root's live host guard
  d.Write("root/proc/100/status", "Name:\tsparkops\nUid:\t0\t0\t0\t0\n");
  d.Write("root/proc/300/stat", Stat(300, 555));  // a live process of uid 0, claimed by uid 1000
  d.Write("root/proc/300/status", "Name:\tsparkops\nUid:\t0\t0\t0\t0\n");
  d.Write("root/proc/310/stat", Stat(310, 555));  // uid 1000's live run guard
  d.Write("root/proc/310/status", "Name:\tsparkops\nUid:\t1000\t1000\t1000\t1000\n");
  auto put = [&](const std::string& dir, const Ledger& l, std::string name = "") {
    d.Write("root" + dir + "/" + (name.empty() ? std::to_string(l.pid) + ".json" : name), guard::LedgerJson(l));
  };
  const std::string kRoot = "/run/sparkops/guard", kU1000 = "/run/user/1000/sparkops/guard";
  put(kRoot, Sample("host", 100));
  put(kRoot, Sample("run", 200));          // an exited guard: still counted
  put(kU1000, Sample("run", 200));         // the same pid again: one series per pid
  put(kU1000, Sample("host", 400));        // host mode from a user's directory
  Ledger floor = Sample("run", 401);
  floor.min_available_bytes = UINT64_MAX;  // served as 1.8e19 before
  put(kU1000, floor);
  put(kU1000, Sample("run", 402), "403.json");  // the name and the pid disagree
  put(kU1000, Sample("run", 300));               // a live pid of another uid
  put(kU1000, Sample("run", 310));               // good
  d.Write("root/secret/405.json", guard::LedgerJson(Sample("run", 405)));
  ASSERT_EQ(::symlink((root + "/secret/405.json").c_str(), (root + kU1000 + "/405.json").c_str()), 0);
  d.Write(
      "root" + kU1000 + "/406.json",
      R"({"pid":406,"start_ticks":1,"mode":"run","min_available_bytes":1,"actions":[{"action":"kill","reason":"pressure","count":18446744073709551615}]})");
  for (uint32_t pid = 1000; pid < 1000 + guard::kMaxLedgersPerUid + 20; ++pid)  // junk of uid 1001
    put("/run/user/1001/sparkops/guard", Sample("run", pid));
  put("/run/user/1002/sparkops/guard", Sample("run", 5000));  // uid 1002's guard is still seen
  // uid 1003's `sparkops` is a link to root's ledgers: not followed.
  std::filesystem::create_directories(root + "/run/user/1003");
  ASSERT_EQ(::symlink((root + "/run/sparkops").c_str(), (root + "/run/user/1003/sparkops").c_str()), 0);

  std::vector<std::string> problems;
  auto got = Believed(root, &problems);
  std::vector<std::string> want = {"100:host", "200:run", "310:run"};
  for (uint32_t pid = 1000; pid < 1000 + guard::kMaxLedgersPerUid; ++pid) want.push_back(std::to_string(pid) + ":run");
  want.push_back("5000:run");
  EXPECT_EQ(got, want);
  const std::string p = Joined(problems);
  for (const char* why :
       {"1000/sparkops/guard/200.json: a second ledger for pid 200",
        "400.json: mode \"host\" outside /run/sparkops/guard",
        "401.json: field min_available_bytes 18446744073709551615 exceeds MemTotal 34359738368",
        "403.json: field pid 402 is not the file's name", "300.json: pid 300 runs as uid 0, not uid 1000",
        "405.json: a symbolic link, not followed", "406.json: field actions: a count beyond 1000000",
        "/run/user/1001/sparkops/guard: uid 1001 has more than 64 ledgers",
        "/run/user/1003/sparkops/guard: its path goes through a link"})
    EXPECT_NE(p.find(why), std::string::npos) << why << "\n" << p;
}

// As root (CI): a ledger in uid 1000's directory owned by another user is refused.
TEST(GuardLedgerTrust, LedgerOwnedByAnotherUserIsRefused) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to chown";
  testing::TempDir d;
  const std::string root = d.path() + "/root";
  d.Write("root/proc/meminfo", "MemTotal: 33554432 kB\n");
  const std::string path = d.Write("root/run/user/1000/sparkops/guard/700.json", guard::LedgerJson(Sample("run", 700)));
  std::vector<std::string> problems;
  EXPECT_EQ(Believed(root, &problems), std::vector<std::string>{"700:run"}) << "owned by root: believed";
  ASSERT_EQ(::chown(path.c_str(), 65534, 65534), 0);
  problems.clear();
  EXPECT_TRUE(Believed(root, &problems).empty());
  EXPECT_NE(Joined(problems).find("700.json: owned by uid 65534, not uid 1000"), std::string::npos) << Joined(problems);
}

}  // namespace
}  // namespace sparkops
