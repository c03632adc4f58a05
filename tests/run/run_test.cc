// `sparkops run`: exit status, the run directory, signals, and the end-to-end stories with analyze.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <thread>

#include "base/strings.h"
#include "host/child.h"
#include "live_run.h"
#include "test_util.h"

namespace sparkops {
namespace {

using testing::BuildArtifact;
using testing::Fixture;
using testing::ReadFileOrDie;
using testing::RunBinary;
using testing::TempDir;

std::string Trainer() { return std::string(SPARKOPS_TEST_SOURCE_DIR) + "/fake/trainer.sh"; }

std::vector<nlohmann::json> Events(const std::string& dir) { return testing::RunEvents(dir); }

TEST(Run, ExitStatusOutputStreamsAndRunDirectory) {
  TempDir d;
  std::string dir = d.path() + "/r";
  auto r = RunBinary({"--root", Fixture("gb10"), "run", "--out", dir, "--interval", "0.05", "--", "bash", "-c",
                      "printf 'a\\rb\\n'; echo oops >&2; exit 3"});
  EXPECT_EQ(r.rc, 3) << r.err;
  EXPECT_NE(r.out.find("a\rb\n"), std::string::npos) << "output is shown live, unchanged";
  for (const char* f : {"train.log", "thermal.csv", "events.jsonl", "meta.json", "summary.json", "report.html"})
    EXPECT_TRUE(std::filesystem::exists(dir + "/" + f)) << f;
  const std::string log_text = ReadFileOrDie(dir + "/train.log");
  auto log = SplitLines(log_text);
  ASSERT_EQ(log.size(), 3u);
  EXPECT_TRUE(EndsWith(log[0], "\to\ta"));  // a carriage-return update is its own record
  EXPECT_TRUE(EndsWith(log[1], "\to\tb"));
  EXPECT_TRUE(EndsWith(log[2], "\te\toops"));
  EXPECT_EQ(log[0].size(), 24u + 4u);  // UTC ms timestamp, tab, stream, tab, text
  auto ev = Events(dir);
  ASSERT_FALSE(ev.empty());
  EXPECT_EQ(ev.back()["type"], "exit");
  EXPECT_EQ(ev.back()["code"], 3);
  auto meta = nlohmann::json::parse(ReadFileOrDie(dir + "/meta.json"));
  EXPECT_EQ(meta["argv"][0], "bash");
  EXPECT_TRUE(meta["pid"].is_number());
  EXPECT_EQ(meta["boot_id"], "");  // the gb10 fixture has no boot id
}

TEST(Run, CommandThatCannotStartIs127) {
  TempDir d;
  auto r = RunBinary({"--root", Fixture("gb10"), "run", "--out", d.path() + "/r", "--", "/nonexistent/trainer"});
  EXPECT_EQ(r.rc, 127);
  EXPECT_NE(r.err.find("cannot start"), std::string::npos) << r.err;
}

TEST(Run, UsageErrors) {
  TempDir d;
  EXPECT_EQ(RunBinary({"run", "--out", d.path() + "/a"}).rc, 2);  // no command
  EXPECT_EQ(RunBinary({"run", "--interval", "0", "--", "true"}).rc, 2);
  std::filesystem::create_directories(d.path() + "/used");
  d.Write("used/train.log", "x\n");
  auto r = RunBinary({"--root", Fixture("gb10"), "run", "--out", d.path() + "/used", "--", "true"});
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("already holds a run"), std::string::npos);
}

/// Starts `sparkops run` as a real child so the test can signal it.
struct LiveRun {
  Child child;
  std::string dir;
};

LiveRun StartRun(const TempDir& d, const std::string& script, const std::string& grace = "5") {
  LiveRun lr;
  lr.dir = d.path() + "/r";
  std::vector<std::string> argv =
      testing::TargetArgv({testing::SparkopsBin(), "--root", Fixture("gb10"), "run", "--out", lr.dir, "--interval",
                           "0.1", "--grace", grace, "--", "bash", "-c", script});
  auto c = SpawnChild(argv, false);
  EXPECT_TRUE(c) << (c ? "" : c.error().message);
  lr.child = *c;
  // Wait until the job has printed its first line (its signal handlers are set by then). Up to
  // 60 s: under qemu on a loaded machine start-up took more than the 5 s this once allowed, and a
  // SIGINT sent before the job was in its loop came back as 137 (grace period, SIGKILL), not 130.
  for (int i = 0; i < 2400; ++i) {
    std::error_code ec;
    auto size = std::filesystem::file_size(lr.dir + "/train.log", ec);
    if (!ec && size > 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  return lr;
}

int Finish(LiveRun& lr) {
  // Drain the pipes so the child never blocks on a full pipe.
  char buf[4096];
  while (::read(lr.child.out_fd, buf, sizeof buf) > 0) {}
  ::close(lr.child.out_fd);
  ::close(lr.child.err_fd);
  return WaitChild(lr.child);
}

TEST(Run, SigtermIsForwardedAndTheJobsStatusReturned) {
  TempDir d;
  auto lr = StartRun(d, "trap 'echo got TERM; exit 0' TERM; echo ready; while :; do sleep 0.05; done");
  ::kill(lr.child.pid, SIGTERM);
  EXPECT_EQ(Finish(lr), 0);
  EXPECT_NE(ReadFileOrDie(lr.dir + "/train.log").find("got TERM"), std::string::npos);
  auto ev = Events(lr.dir);
  bool forwarded = false;
  for (auto& e : ev) forwarded |= e["type"] == "signal";
  EXPECT_TRUE(forwarded);
}

// The job execs sleep, which dies of the forwarded SIGINT. (A `while :; do sleep; done` bash loop
// was flaky here: bash's wait-and-cooperative-exit ignores a SIGINT whose foreground child then
// exits normally, which happens when the signal lands between two sleeps; 4 of 60 such loops
// survived a group SIGINT on a loaded VM. run then SIGKILLs after the grace period: 137.)
TEST(Run, KilledJobIs128PlusSignal) {
  TempDir d;
  auto lr = StartRun(d, "echo ready; exec sleep 600");
  ::kill(lr.child.pid, SIGINT);
  EXPECT_EQ(Finish(lr), 128 + SIGINT);
}

TEST(Run, JobIgnoringSigtermIsKilledAfterTheGracePeriod) {
  TempDir d;
  auto lr = StartRun(d, "trap '' TERM INT; echo ready; while :; do sleep 0.05; done", "0.5");
  auto t0 = std::chrono::steady_clock::now();
  ::kill(lr.child.pid, SIGTERM);
  EXPECT_EQ(Finish(lr), 128 + SIGKILL);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(20));
}

TEST(Run, OomExitPrintsTheNextLadderStep) {
  TempDir d;
  std::string dir = d.path() + "/r";
  auto r = RunBinary({"--root", Fixture("gb10"), "run", "--out", dir, "--interval", "0.1", "--", "bash", "-c",
                      "echo 'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a "
                      "total capacity of 119.70 GiB of which 1.10 GiB is free.' >&2; exit 1"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("out of memory"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("next step of the OOM ladder"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("1. "), std::string::npos) << r.err;  // the gb10 fixture holds 52 GiB of page cache
  bool oom = false;
  for (auto& e : Events(dir)) oom |= e["type"] == "oom";
  EXPECT_TRUE(oom);
}

TEST(Run, WarnsAboutUncappedServersBeforeStartingButStillRuns) {
  TempDir d;
  auto r = RunBinary({"--root", Fixture("workloads/contention"), "run", "--out", d.path() + "/r", "--", "true"});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.err.find("warning: G6"), std::string::npos) << r.err;
}

std::string AnalyzeJson(const std::string& dir, const std::string& root) {
  auto r = RunBinary({"--root", root, "analyze", dir, "--json"});
  EXPECT_EQ(r.rc, 0) << r.err;
  return r.out;
}

// The story of issue 5: the GPU heats up; when the step time triples midway it sets SW thermal
// slowdown and its clocks fall (the trainer's hook opens the stub scenario's gate); `analyze`
// finds one thermal slowdown starting at the right step. (Steps of 30/60 ms let a loaded CI
// machine's scheduling delays move the change point early: seen 2 steps, and 3 once the episode
// rules of issue 24 merged short gaps, at load average ~6.)
TEST(RunEndToEnd, ThermalSlowdownIsFoundAtTheRightStep) {
  TempDir d;
  std::string dir = d.path() + "/r", gate = d.path() + "/gate";
  auto r = RunBinary({"--root", Fixture("gb10"), "--nvml", BuildArtifact("libnvidia-ml-stub.so"), "run", "--out", dir,
                      "--interval", "0.1", "--", Trainer(), "50", "50", "0.06", "0.18"},
                     {{"SPARKOPS_STUB_NVML_SCENARIO",
                       std::string(SPARKOPS_TEST_SOURCE_DIR) + "/stub_nvml/scenarios/run_thermal.txt"},
                      {"SPARKOPS_STUB_NVML_GATE", gate},
                      {"TRAINER_HOOK", "touch " + gate}},
                     120000);
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(ReadFileOrDie(dir + "/thermal.csv").find(",0x20,sw_thermal,"), std::string::npos);
  bool throttle_event = false;
  for (auto& e : Events(dir)) throttle_event |= e["type"] == "throttle" && e["reasons"] == "sw_thermal";
  EXPECT_TRUE(throttle_event);
  auto j = nlohmann::json::parse(AnalyzeJson(dir, Fixture("gb10")));
  ASSERT_EQ(j["events"].size(), 1u) << j.dump(2);
  EXPECT_EQ(j["events"][0]["cause"], "thermal") << j.dump(2);
  int64_t start = j["events"][0]["start_step"];
  EXPECT_GE(start, 48);
  EXPECT_LE(start, 56);
  auto summary = nlohmann::json::parse(ReadFileOrDie(dir + "/summary.json"));
  EXPECT_EQ(summary["events"][0]["cause"], "thermal");
}

// A second, uncapped server appears on the machine at the slowdown: contention.
TEST(RunEndToEnd, NewUncappedServerIsContention) {
  TempDir d;
  std::filesystem::copy(Fixture("gb10"), d.path() + "/root", std::filesystem::copy_options::recursive);
  std::string dir = d.path() + "/r", vllm = Fixture("workloads/vllm-default/proc");
  std::string pid;
  for (auto& e : std::filesystem::directory_iterator(vllm))
    if (e.is_directory() && ParseUint(e.path().filename().string()) && e.path().filename() != "1")
      if (ReadFileOrDie(e.path().string() + "/cmdline").find("vllm") != std::string::npos) pid = e.path().filename();
  ASSERT_FALSE(pid.empty());
  std::string hook = "cp -r " + vllm + "/" + pid + " " + d.path() + "/root/proc/" + pid;
  auto r = RunBinary({"--root", d.path() + "/root", "run", "--out", dir, "--interval", "0.1", "--", Trainer(), "50",
                      "50", "0.06", "0.18"},
                     {{"TRAINER_HOOK", hook}}, 120000);
  ASSERT_EQ(r.rc, 0) << r.err;
  bool started = false;
  for (auto& e : Events(dir)) started |= e["type"] == "process_start" && e["kind"] == "vllm";
  EXPECT_TRUE(started) << ReadFileOrDie(dir + "/events.jsonl");
  auto j = nlohmann::json::parse(AnalyzeJson(dir, d.path() + "/root"));
  ASSERT_EQ(j["events"].size(), 1u) << j.dump(2);
  EXPECT_EQ(j["events"][0]["cause"], "contention") << j.dump(2);
}

}  // namespace
}  // namespace sparkops
