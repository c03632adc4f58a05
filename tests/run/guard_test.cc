// `sparkops run`'s memory guard against real child processes: fixture --root trees whose meminfo and
// pressure files the test rewrites while the job runs; one test on this machine's real memory; and
// what happens to the job when run itself is killed with SIGKILL.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <thread>

#include "base/strings.h"
#include "base/timefmt.h"
#include "guard/event.h"
#include "guard/ledger.h"
#include "host/child.h"
#include "host/meminfo.h"
#include "live_run.h"
#include "test_util.h"

namespace sparkops {
namespace {

using namespace std::chrono_literals;
using testing::ReadFileOrDie;
using testing::TempDir;

constexpr uint64_t kGiB = 1ull << 30;

using testing::FakeHost;
using testing::LiveRun;

std::vector<nlohmann::json> OfType(const std::string& dir, const std::string& type) {
  return testing::RunEventsOfType(dir, type);
}

std::vector<nlohmann::json> OfTypeSoFar(const std::string& dir, const std::string& type) {
  std::vector<nlohmann::json> out;
  for (auto& e : testing::RunEventsSoFar(dir))
    if (e["type"] == type) out.push_back(e);
  return out;
}
LiveRun Start(const std::string& root, const std::string& dir, std::vector<std::string> flags,
              const std::string& script) {
  return testing::StartRun(root, dir, flags, script);
}
int Finish(LiveRun& lr, std::string* err = nullptr) { return testing::FinishRun(lr, err); }

const char* kTrapsTerm = "trap 'echo got TERM; exit 0' TERM; echo ready; while :; do sleep 0.05; done";
const char* kIgnoresTerm = "trap 'echo ignoring TERM' TERM; echo ready; while :; do sleep 0.05; done";

TEST(RunGuard, TerminatesTheJobWhenMemAvailableFallsBelowTheFloor) {
  FakeHost h(20 * kGiB);
  testing::ScopedEnv ledger("SPARKOPS_GUARD_LEDGER", h.d.path() + "/ledgers");  // inherited by run
  auto lr = Start(h.root, h.d.path() + "/r", {"--min-available", "8G", "--grace", "5"}, kTrapsTerm);
  std::this_thread::sleep_for(1500ms);  // above the floor: nothing happens
  EXPECT_TRUE(OfType(lr.dir, "memory_guard").empty());
  h.SetMem(12 * kGiB);  // under twice the floor: the guard reads the job's footprint, polls every 100 ms
  std::this_thread::sleep_for(1500ms);
  EXPECT_TRUE(OfType(lr.dir, "memory_guard").empty());
  h.SetMem(2 * kGiB);
  std::string err;
  EXPECT_EQ(Finish(lr, &err), 75) << err;
  EXPECT_NE(err.find("memory guard stopped the job"), std::string::npos) << err;
  EXPECT_NE(ReadFileOrDie(lr.dir + "/train.log").find("got TERM"), std::string::npos);
  auto g = OfType(lr.dir, "memory_guard");
  ASSERT_EQ(g.size(), 1u) << ReadFileOrDie(lr.dir + "/events.jsonl");
  EXPECT_EQ(g[0]["action"], "terminate");
  EXPECT_EQ(g[0]["reason"], "min_available");
  EXPECT_EQ(g[0]["signal"], "SIGTERM");
  EXPECT_EQ(g[0]["mem_available_bytes"], 2 * kGiB);
  EXPECT_EQ(g[0]["min_available_bytes"], 8 * kGiB);
  EXPECT_EQ(g[0]["page_cache_bytes"], 3 * kGiB);
  EXPECT_NEAR(g[0]["psi_full_avg10"].get<double>(), 0.5, 1e-9);
  EXPECT_GT(g[0]["job_rss_bytes"].get<uint64_t>(), 0u);  // bash, from this machine's /proc
  // The guard's ledger (for the exporter): mode run, its floor, one terminate.
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(h.d.path() + "/ledgers")) files.push_back(e.path().string());
  ASSERT_EQ(files.size(), 1u);
  auto l = guard::ParseLedger(ReadFileOrDie(files[0]));
  ASSERT_TRUE(l) << l.error().message;
  EXPECT_EQ(l->mode, "run");
  EXPECT_EQ(l->min_available_bytes, 8 * kGiB);
  EXPECT_EQ((l->actions[{"terminate", "min_available"}]), 1u) << ReadFileOrDie(files[0]);
  EXPECT_EQ(l->run_dir, std::filesystem::weakly_canonical(lr.dir).string());  // for top's RUNS pane
  EXPECT_FALSE(g[0].contains("job_gpu_bytes"));          // no GPU under --root: absent, not 0
  auto exits = OfType(lr.dir, "exit");
  ASSERT_EQ(exits.size(), 1u);
  EXPECT_EQ(exits[0]["code"], 0);  // the job's own status (its TERM trap exited 0)
  auto meta = nlohmann::json::parse(ReadFileOrDie(lr.dir + "/meta.json"));
  EXPECT_EQ(meta["memory_guard"]["min_available_bytes"], 8 * kGiB);
}

// A job that started near the floor and grew there: the stop reports what it held just before the
// SIGTERM (re-read at most a second apart while near the floor), not its size at start-up. The
// allocator dies of the SIGTERM at once, so the reading after the signal finds nothing.
TEST(RunGuard, TheStopReportsTheFootprintNearTheStopNotAtStartUp) {
  FakeHost h(12 * kGiB);  // under twice the 8 GiB floor from the start
  const std::string alloc = testing::TargetShell({testing::BuildArtifact("guard_alloc"), "64", "0", "256"});
  auto lr =
      Start(h.root, h.d.path() + "/r", {"--min-available", "8G", "--grace", "5"}, "echo ready; sleep 1; exec " + alloc);
  for (int i = 0; i < 600 && ReadFileOrDie(lr.dir + "/train.log").find("allocated 256 MiB") == std::string::npos; ++i)
    std::this_thread::sleep_for(50ms);
  std::this_thread::sleep_for(2500ms);  // more than one refresh while near the floor
  h.SetMem(2 * kGiB);
  std::string err;
  const int rc = Finish(lr, &err);
  EXPECT_EQ(rc, 75) << err;
  auto g = OfType(lr.dir, "memory_guard");
  ASSERT_EQ(g.size(), 1u) << ReadFileOrDie(lr.dir + "/events.jsonl");
  EXPECT_GE(g[0]["job_rss_bytes"].get<uint64_t>(), 200ull << 20) << g[0].dump();
}

TEST(RunGuard, KillsAJobThatIgnoresSigtermAfterTheGrace) {
  FakeHost h(20 * kGiB);
  auto lr = Start(h.root, h.d.path() + "/r", {"--min-available", "8G", "--grace", "0.5"}, kIgnoresTerm);
  auto t0 = std::chrono::steady_clock::now();
  h.SetMem(1 * kGiB);
  EXPECT_EQ(Finish(lr), 75);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 15s);
  auto g = OfType(lr.dir, "memory_guard");
  ASSERT_EQ(g.size(), 2u) << ReadFileOrDie(lr.dir + "/events.jsonl");
  EXPECT_EQ(g[0]["action"], "terminate");
  EXPECT_EQ(g[1]["action"], "kill");
  EXPECT_EQ(g[1]["signal"], "SIGKILL");
  EXPECT_EQ(g[1]["mem_available_bytes"], 1 * kGiB);
  // The kill is its own moment, after the 0.5 s grace: not a copy of the terminate record's time.
  EXPECT_GT(g[1]["time"].get<std::string>(), g[0]["time"].get<std::string>());  // ISO UTC: text order is time order
  EXPECT_NE(ReadFileOrDie(lr.dir + "/train.log").find("ignoring TERM"), std::string::npos);
  const auto exit = OfType(lr.dir, "exit").at(0);  // the signal or the status, never both
  EXPECT_EQ(exit["signal"], strsignal(SIGKILL));
  EXPECT_FALSE(exit.contains("code")) << exit.dump();
}

TEST(RunGuard, NothingIsStoppedAboveTheFloor) {
  FakeHost h(9 * kGiB, 30);  // near the floor, pressure below the limit
  auto lr = Start(h.root, h.d.path() + "/r", {"--min-available", "8G"},
                  "echo ready; for i in $(seq 20); do echo step $i; sleep 0.05; done; exit 4");
  h.SetMem(8 * kGiB + 4096);
  EXPECT_EQ(Finish(lr), 4);
  EXPECT_TRUE(OfType(lr.dir, "memory_guard").empty());
  EXPECT_NE(ReadFileOrDie(lr.dir + "/train.log").find("step 20"), std::string::npos);
}

TEST(RunGuard, SustainedPressureStopsTheJob) {
  FakeHost h(20 * kGiB, 75);
  auto lr = Start(h.root, h.d.path() + "/r", {"--max-pressure", "40", "--pressure-window", "0.3"}, kTrapsTerm);
  EXPECT_EQ(Finish(lr), 75);
  auto g = OfType(lr.dir, "memory_guard");
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(g[0]["reason"], "pressure");
  EXPECT_NEAR(g[0]["psi_full_avg10"].get<double>(), 75, 1e-9);
  EXPECT_EQ(g[0]["max_pressure"], 40.0);
}

TEST(RunGuard, FlushesFirstWhenAllowedThenStopsIfThatWasNotEnough) {
  FakeHost h(20 * kGiB);
  auto lr = Start(h.root, h.d.path() + "/r", {"--min-available", "8G", "--flush-cache"}, kTrapsTerm);
  h.SetMem(2 * kGiB, 10 * kGiB);  // 10 GiB of cache would lift it above 8 GiB; the fixture never changes
  EXPECT_EQ(Finish(lr), 75);
  EXPECT_EQ(ReadFileOrDie(h.root + "/proc/sys/vm/drop_caches"), "3\n");
  auto g = OfType(lr.dir, "memory_guard");
  ASSERT_EQ(g.size(), 2u) << ReadFileOrDie(lr.dir + "/events.jsonl");
  EXPECT_EQ(g[0]["action"], "flush");
  EXPECT_EQ(g[0]["flushed"], true);
  EXPECT_EQ(g[0]["page_cache_bytes"], 10 * kGiB);
  EXPECT_EQ(g[1]["action"], "terminate");
}

TEST(RunGuard, NoGuardAndBadFlags) {
  FakeHost h(1 * kGiB);  // below any floor from the start
  TempDir d;
  auto r = testing::RunBinary({"--root", h.root, "run", "--no-guard", "--out", d.path() + "/a", "--", "true"});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_TRUE(nlohmann::json::parse(ReadFileOrDie(d.path() + "/a/meta.json"))["memory_guard"].is_null());
  r = testing::RunBinary({"--root", h.root, "run", "--out", d.path() + "/b", "--", "bash", "-c", "sleep 5"});
  EXPECT_EQ(r.rc, 75) << "the default floor (4 GiB of this fixture's 32) is above 1 GiB";
  for (const char* bad : {"0", "8X", "100%", "nan"}) {
    r = testing::RunBinary({"--root", h.root, "run", "--min-available", bad, "--out", d.path() + "/c", "--", "true"});
    EXPECT_EQ(r.rc, 2) << bad;
    EXPECT_NE(r.err.find("--min-available"), std::string::npos) << r.err;
  }
  r = testing::RunBinary({"--root", h.root, "run", "--max-pressure", "101", "--out", d.path() + "/c", "--", "true"});
  EXPECT_EQ(r.rc, 2);
}

// issue 33: an NVRM NV_ERR_NO_MEMORY record logged while the job runs counts as crossing the floor.
// Real record texts (tests/fixtures/wedge/README.md); the one already in the ring is from before run started.
constexpr const char* kOldNoMem =
    "4,1480,1832115022,-;NVRM: nvCheckOkFailedNoLog: Check failed: Out of memory [NV_ERR_NO_MEMORY] (0x00000051) "
    "returned from _memdescAllocInternal(pMemDesc) @ mem_desc.c:1359\n";
constexpr const char* kNewNoMem = "4,1600,1900000000,-;NVRM: nvAssertFailedNoLog: Assertion failed: NV_ERR_NO_MEMORY\n";

void AppendKmsg(const FakeHost& h, const std::string& text) {
  std::ofstream(h.root + "/dev/kmsg", std::ios::app) << text;  // the same file: the guard holds it open
}

/// Waits up to `limit` for `part` in the run's train.log.
bool WaitForLog(const std::string& dir, const std::string& part, std::chrono::milliseconds limit) {
  for (auto t0 = std::chrono::steady_clock::now(); std::chrono::steady_clock::now() - t0 < limit;) {
    if (testing::ReadFileOrDie(dir + "/train.log").find(part) != std::string::npos) return true;
    std::this_thread::sleep_for(10ms);
  }
  return false;
}

TEST(RunGuard, DriverNoMemoryRecordStopsTheJob) {
  FakeHost h(20 * kGiB);  // far above the floor: only the kernel's record can stop the job
  h.Put("dev/kmsg", kOldNoMem);
  testing::ScopedEnv ledger("SPARKOPS_GUARD_LEDGER", h.d.path() + "/ledgers");
  auto lr = Start(h.root, h.d.path() + "/r", {"--grace", "5"}, kTrapsTerm);
  std::this_thread::sleep_for(1500ms);  // the guard polls every second: the old record is not acted on
  EXPECT_TRUE(OfType(lr.dir, "memory_guard").empty()) << "a record from before the start stopped the job";
  const auto wall = std::chrono::system_clock::now();
  const auto t0 = std::chrono::steady_clock::now();
  AppendKmsg(h, kNewNoMem);
  // Bound immune to a busy machine: the guard's cadence is 1 s.
  EXPECT_TRUE(WaitForLog(lr.dir, "got TERM", 10s)) << "the job was not stopped within 10 s";
  const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0);
  std::string err;
  EXPECT_EQ(Finish(lr, &err), 75) << err;
  EXPECT_NE(err.find("NV_ERR_NO_MEMORY"), std::string::npos) << err;
  auto g = OfType(lr.dir, "memory_guard");
  ASSERT_EQ(g.size(), 1u) << ReadFileOrDie(lr.dir + "/events.jsonl");
  EXPECT_EQ(g[0]["action"], "terminate");
  EXPECT_EQ(g[0]["reason"], "kernel_nvrm_no_memory");
  EXPECT_EQ(g[0]["kernel_line"], "NVRM: nvAssertFailedNoLog: Assertion failed: NV_ERR_NO_MEMORY");
  EXPECT_EQ(g[0]["mem_available_bytes"], 20 * kGiB);
  auto acted = ParseTimestamp(g[0]["time"].get<std::string>());
  ASSERT_TRUE(acted);
  std::cout << "[ measure ] run: record appended -> SIGTERM sent "
            << std::chrono::duration_cast<std::chrono::milliseconds>(*acted - wall).count()
            << " ms; -> job's TERM trap in train.log " << took.count() << " ms\n";
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(h.d.path() + "/ledgers")) files.push_back(e.path().string());
  ASSERT_EQ(files.size(), 1u);
  auto l = guard::ParseLedger(ReadFileOrDie(files[0]));
  ASSERT_TRUE(l) << l.error().message;
  EXPECT_EQ((l->actions[{"terminate", "kernel_nvrm_no_memory"}]), 1u) << ReadFileOrDie(files[0]);
  auto meta = nlohmann::json::parse(ReadFileOrDie(lr.dir + "/meta.json"));
  EXPECT_EQ(meta["memory_guard"]["kernel_signals"], true);
  // analyze (run's own summary) names the cause, with the kernel line as evidence.
  auto summary = nlohmann::json::parse(ReadFileOrDie(lr.dir + "/summary.json"));
  EXPECT_EQ(summary["end"]["cause"], "driver_memory_error") << summary["end"].dump();
  ASSERT_FALSE(summary["end"]["evidence"].empty());
  EXPECT_NE(summary["end"]["evidence"][0].get<std::string>().find("Assertion failed: NV_ERR_NO_MEMORY"),
            std::string::npos);
  auto text = testing::RunBinary({"analyze", lr.dir});
  EXPECT_NE(text.out.find("cause    driver_memory_error"), std::string::npos) << text.out;
}

// issue 33: a record logged in the job's first milliseconds (here by the job itself, before anything
// else) is not history: run takes the kernel log's mark before spawning the job. The ring holds many
// older records, so that reading it after the spawn (as run did before) would take the job's record
// for one of them.
TEST(RunGuard, ARecordLoggedAsTheJobStartsStopsIt) {
  FakeHost h(20 * kGiB);
  std::string ring;
  for (int i = 0; i < 60000; ++i)
    ring += "6," + std::to_string(2000 + i) + ",1000,-;usb 1-1: new high-speed USB device number " + std::to_string(i) +
            " using xhci_hcd\n";
  h.Put("dev/kmsg", kOldNoMem + ring);  // seq 1480 here is history
  const std::string record = "4,900000,1900000000,-;NVRM: nvAssertFailedNoLog: Assertion failed: NV_ERR_NO_MEMORY";
  const std::string job = "printf '%s\\n' '" + record + "' >> '" + h.root + "/dev/kmsg'; " + kTrapsTerm;
  testing::ScopedEnv ledger("SPARKOPS_GUARD_LEDGER", h.d.path() + "/ledgers");
  auto lr = Start(h.root, h.d.path() + "/r", {"--grace", "5"}, job);
  const bool stopped = WaitForLog(lr.dir, "got TERM", 15s);
  EXPECT_TRUE(stopped) << "the job was not stopped within 15 s";
  if (!stopped) ::kill(lr.child.pid, SIGTERM);  // run forwards it: the job's trap ends it
  std::string err;
  EXPECT_EQ(Finish(lr, &err), 75) << err;
  auto g = OfType(lr.dir, "memory_guard");
  ASSERT_EQ(g.size(), 1u) << ReadFileOrDie(lr.dir + "/events.jsonl");
  EXPECT_EQ(g[0]["reason"], "kernel_nvrm_no_memory");
  EXPECT_EQ(g[0]["kernel_line"], "NVRM: nvAssertFailedNoLog: Assertion failed: NV_ERR_NO_MEMORY");
  auto sampled = OfType(lr.dir, "kernel_nvrm_no_memory");
  ASSERT_EQ(sampled.size(), 1u) << "the sampler counts it too, and not the older record";
  EXPECT_EQ(sampled[0]["seq"], 900000);
}

// issue 33: the fragmentation trigger end to end. The fixture's meminfo falls (the job grows) under
// twice the 8 GiB floor while its buddyinfo is rewritten: free 2 MiB blocks first (no stop), then none
// in the zones that serve the driver (Movable's do not count): the guard stops the job.
std::string FragMeminfo(double avail_gib) {
  const auto kib = [](double gib) { return std::to_string(static_cast<uint64_t>(gib * 1024 * 1024)); };
  return "MemTotal: " + kib(32) + " kB\nMemFree: 1024 kB\nMemAvailable: " + kib(avail_gib) +
         " kB\nBuffers: 0 kB\nCached: " + kib(3) + " kB\nShmem: 0 kB\nHugepagesize: 2048 kB\n";
}
constexpr const char* kBuddyFree = "Node 0, zone   Normal   900  400  100   30    9    3    1    1    1    4    2\n";
constexpr const char* kBuddyNone =
    "Node 0, zone    DMA32     5    5    5    5    5    5    5    5    5    0    0\n"
    "Node 0, zone   Normal   900  400  100   30    9    3    1    1    1    0    0\n"
    "Node 0, zone  Movable     0    0    0    0    0    0    0    0    0   12   40\n";

TEST(RunGuard, NoFreeTwoMiBBlockWhileTheJobGrowsStopsIt) {
  for (bool kernel_signals : {true, false}) {
    SCOPED_TRACE(kernel_signals ? "--kernel-signals on" : "--kernel-signals off");
    FakeHost h(20 * kGiB);
    double avail = 15.0;  // under twice the floor from the start
    h.Put("proc/meminfo", FragMeminfo(avail));
    h.Put("proc/buddyinfo", kBuddyFree);
    std::vector<std::string> flags = {"--min-available", "8G", "--grace", "5"};
    if (!kernel_signals) flags.insert(flags.end(), {"--kernel-signals", "off"});
    auto lr = Start(h.root, h.d.path() + "/r", flags, kTrapsTerm);
    auto grow = [&] {  // the job takes 0.15 GiB every 0.3 s, never down to the floor
      avail = std::max(8.5, avail - 0.15);
      h.Put("proc/meminfo", FragMeminfo(avail));
      std::this_thread::sleep_for(300ms);
    };
    for (int i = 0; i < 12; ++i) grow();  // 3.6 s: a full growth window, 2 MiB blocks still free
    EXPECT_TRUE(OfTypeSoFar(lr.dir, "memory_guard").empty()) << "stopped while 2 MiB blocks were free";
    h.Put("proc/buddyinfo", kBuddyNone);
    bool stopped = false;
    // Bound immune to a busy machine: the guard reads buddyinfo once a second.
    for (auto t0 = std::chrono::steady_clock::now(); !stopped && std::chrono::steady_clock::now() - t0 < 12s;) {
      grow();
      stopped = ReadFileOrDie(lr.dir + "/train.log").find("got TERM") != std::string::npos;
      if (!kernel_signals && std::chrono::steady_clock::now() - t0 > 4s) break;  // long enough to have acted
    }
    if (!kernel_signals || !stopped) {
      EXPECT_EQ(stopped, kernel_signals) << "stopped on fragmentation, --kernel-signals "
                                         << (kernel_signals ? "on" : "off");
      ::kill(lr.child.pid, SIGTERM);  // run forwards it; the job's trap exits 0
      (void)Finish(lr);
      EXPECT_TRUE(OfType(lr.dir, "memory_guard").empty()) << ReadFileOrDie(lr.dir + "/events.jsonl");
      continue;
    }
    std::string err;
    EXPECT_EQ(Finish(lr, &err), 75) << err;
    EXPECT_NE(err.find("no free 2 MiB block for the driver while the job grew"), std::string::npos) << err;
    auto g = OfType(lr.dir, "memory_guard");
    ASSERT_EQ(g.size(), 1u) << ReadFileOrDie(lr.dir + "/events.jsonl");
    EXPECT_EQ(g[0]["reason"], "fragmentation");
    const std::string b = g[0]["buddyinfo"];
    EXPECT_NE(b.find("no free 2 MiB block (order 9 on 4 KiB pages) in DMA32, Normal"), std::string::npos) << b;
    EXPECT_NE(b.find("MemAvailable fell"), std::string::npos) << b;
    EXPECT_LT(g[0]["mem_available_bytes"].get<double>(), 16.0 * kGiB);
    EXPECT_GT(g[0]["mem_available_bytes"].get<double>(), 8.0 * kGiB) << "the floor did not act: the blocks did";
    auto summary = nlohmann::json::parse(ReadFileOrDie(lr.dir + "/summary.json"));
    EXPECT_EQ(summary["end"]["cause"], "fragmentation");
    ASSERT_FALSE(summary["end"]["evidence"].empty());
    EXPECT_NE(summary["end"]["evidence"][0].get<std::string>().find("order 9 on 4 KiB pages"), std::string::npos);
    EXPECT_EQ(summary["memory"]["advice"], "fragmentation");
    auto text = testing::RunBinary({"analyze", lr.dir});
    EXPECT_NE(text.out.find("cause    fragmentation"), std::string::npos) << text.out;
    EXPECT_NE(text.out.find("no free 2 MiB block for the driver while the job grew (buddyinfo:"), std::string::npos)
        << text.out;
    EXPECT_NE(text.out.find("next: 1. save and stop: the host may wedge"), std::string::npos) << text.out;
  }
}

TEST(RunGuard, KernelSignalsOffAndRecordsFromBeforeTheStartDoNotStopTheJob) {
  const char* job = "echo ready; for i in $(seq 25); do sleep 0.1; done; echo finished";
  {
    FakeHost h(20 * kGiB);
    h.Put("dev/kmsg", kOldNoMem);
    auto lr = Start(h.root, h.d.path() + "/off", {"--kernel-signals", "off"}, job);
    std::this_thread::sleep_for(500ms);  // the sampler follows the log from its own start
    AppendKmsg(h, kNewNoMem);
    EXPECT_EQ(Finish(lr), 0);
    EXPECT_TRUE(OfType(lr.dir, "memory_guard").empty()) << ReadFileOrDie(lr.dir + "/events.jsonl");
    EXPECT_NE(ReadFileOrDie(lr.dir + "/train.log").find("finished"), std::string::npos);
    EXPECT_EQ(nlohmann::json::parse(ReadFileOrDie(lr.dir + "/meta.json"))["memory_guard"]["kernel_signals"], false);
    EXPECT_FALSE(OfType(lr.dir, "kernel_nvrm_no_memory").empty()) << "still recorded by the sampler";
  }
  {
    FakeHost h(20 * kGiB);
    h.Put("dev/kmsg", std::string(kOldNoMem) + kNewNoMem);  // both in the ring before run started
    auto lr = Start(h.root, h.d.path() + "/old", {}, job);
    EXPECT_EQ(Finish(lr), 0);
    EXPECT_TRUE(OfType(lr.dir, "memory_guard").empty()) << ReadFileOrDie(lr.dir + "/events.jsonl");
  }
  FakeHost h(20 * kGiB);
  TempDir d;
  for (const char* bad : {"maybe", "", "ON"}) {
    auto r = testing::RunBinary(
        {"--root", h.root, "run", "--kernel-signals", bad, "--out", d.path() + "/bad", "--", "true"});
    EXPECT_EQ(r.rc, 2) << bad;
    EXPECT_NE(r.err.find("--kernel-signals"), std::string::npos) << r.err;
  }
}

}  // namespace
}  // namespace sparkops

namespace sparkops {
namespace {

/// The last "allocated N MiB" of train.log, in MiB (0 when none).
long LastAllocated(const std::string& log) {
  long last = 0;
  for (auto line : SplitLines(log)) {
    auto at = line.find("allocated ");
    if (at == std::string_view::npos) continue;
    if (auto v = ParseUint(Split(line.substr(at + 10), ' ')[0])) last = static_cast<long>(*v);
  }
  return last;
}

// No fixture: this machine's own MemAvailable. The floor sits 1 GiB below what is available now;
// the child allocates 64 MiB every 50 ms up to 3 GiB. The guard (polling every 100 ms this close to
// the floor) must stop it before it holds 2 GiB. Other processes on a shared machine may move
// MemAvailable either way by a little; the margin is 1 GiB.
TEST(RunGuard, StopsARealAllocatingProcessBeforeTwoGiB) {
  auto mem = ReadMemInfo(HostFs("/"));
  ASSERT_TRUE(mem && mem->available);
  if (*mem->available < 4 * kGiB)
    GTEST_SKIP() << "MemAvailable is " << ToGiB(*mem->available) << " GiB (< 4 GiB): not enough room to test safely";
  TempDir d;
  uint64_t floor_mib = (*mem->available - kGiB) >> 20;
  auto lr = Start("", d.path() + "/r", {"--min-available", std::to_string(floor_mib) + "M", "--grace", "2"},
                  "exec " + testing::TargetShell({testing::BuildArtifact("guard_alloc"), "64", "50", "3072"}));
  std::string err;
  EXPECT_EQ(Finish(lr, &err), 75) << err;
  auto g = OfType(lr.dir, "memory_guard");
  ASSERT_FALSE(g.empty()) << ReadFileOrDie(lr.dir + "/events.jsonl");
  EXPECT_EQ(g[0]["reason"], "min_available");
  EXPECT_LT(g[0]["mem_available_bytes"].get<uint64_t>(), floor_mib << 20);
  long got = LastAllocated(ReadFileOrDie(lr.dir + "/train.log"));
  EXPECT_LT(got, 2048) << "the guard let the job allocate " << got << " MiB";
  EXPECT_EQ(OfType(lr.dir, "exit").at(0)["signal"], strsignal(SIGTERM));
}

pid_t JobPid(const std::string& dir) {
  for (int i = 0; i < 400; ++i) {
    try {
      auto meta = nlohmann::json::parse(ReadFileOrDie(dir + "/meta.json"));
      if (meta["pid"].is_number()) return meta["pid"].get<pid_t>();
    } catch (...) {}
    std::this_thread::sleep_for(25ms);
  }
  return -1;
}

/// kill -9 of run, then waits (up to 10 s) for its job to be gone; the job's pid and the seconds waited.
std::pair<pid_t, double> KillRunAndWaitForJob(LiveRun& lr) {
  pid_t job = JobPid(lr.dir);
  EXPECT_GT(job, 0);
  ::kill(lr.child.pid, SIGKILL);
  Finish(lr);
  auto t0 = std::chrono::steady_clock::now();
  while (job > 0 && guard::ProcessAlive(job) && std::chrono::steady_clock::now() - t0 < 10s)
    std::this_thread::sleep_for(20ms);
  EXPECT_FALSE(job > 0 && guard::ProcessAlive(job));
  return {job, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()};
}

// kill -9 of run: the sentinel sends SIGTERM to the job's group; the job's output (also what it
// prints after run died) still reaches train.log; the job is not killed by SIGPIPE.
TEST(RunKilled, JobIsTerminatedWithTheGraceAndItsOutputStillRecorded) {
  FakeHost h(20 * kGiB);
  auto lr = Start(h.root, h.d.path() + "/r", {"--grace", "5"},
                  "trap 'sleep 0.3; echo after TERM 1; echo after TERM 2; exit 0' TERM; echo ready; "
                  "while :; do sleep 0.05; done");
  auto [job, waited] = KillRunAndWaitForJob(lr);
  ASSERT_GT(job, 0);
  EXPECT_LT(waited, 4.0) << "terminated, not left to the grace";
  std::string log;
  for (int i = 0; i < 100 && log.find("after TERM 2") == std::string::npos; ++i) {
    std::this_thread::sleep_for(50ms);
    log = ReadFileOrDie(lr.dir + "/train.log");
  }
  EXPECT_NE(log.find("\to\tafter TERM 1"), std::string::npos) << log;
  EXPECT_NE(log.find("\to\tafter TERM 2"), std::string::npos) << log;
  auto lost = OfType(lr.dir, "supervisor_lost");
  ASSERT_GE(lost.size(), 1u);
  EXPECT_EQ(lost[0]["stage"], "terminate");
  EXPECT_EQ(lost[0]["job_pgid"], job);
}

TEST(RunKilled, JobIgnoringSigtermIsKilledAfterTheGrace) {
  FakeHost h(20 * kGiB);
  auto lr = Start(h.root, h.d.path() + "/r", {"--grace", "0.5"}, kIgnoresTerm);
  auto [job, waited] = KillRunAndWaitForJob(lr);
  ASSERT_GT(job, 0);
  (void)waited;
  bool killed = false;
  for (int i = 0; i < 100 && !killed; ++i) {
    for (auto& e : OfType(lr.dir, "supervisor_lost")) killed |= e["stage"] == "kill";
    if (!killed) std::this_thread::sleep_for(50ms);
  }
  EXPECT_TRUE(killed);
  EXPECT_NE(ReadFileOrDie(lr.dir + "/train.log").find("ignoring TERM"), std::string::npos);
}

// issue 30: after a real kill -9 of run, analyze reads the end from the sentinel's records: run was
// lost and the sentinel stopped the job (status supervisor_lost), not "the run is still going".
TEST(RunKilled, AnalyzeSaysRunWasLostAndTheSentinelStoppedTheJob) {
  FakeHost h(20 * kGiB);
  auto lr = Start(h.root, h.d.path() + "/r", {"--grace", "5"},
                  "trap 'exit 0' TERM; echo ready; while :; do sleep 0.05; done");
  auto [job, waited] = KillRunAndWaitForJob(lr);
  ASSERT_GT(job, 0);
  (void)waited;
  for (int i = 0; i < 200 && OfTypeSoFar(lr.dir, "supervisor_lost").size() < 2; ++i) std::this_thread::sleep_for(50ms);
  auto r = testing::RunBinary({"--root", h.root, "analyze", lr.dir, "--json"}, {{"TZ", "UTC"}});
  ASSERT_EQ(r.rc, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["end"]["status"], "supervisor_lost") << j["end"].dump(2);
  EXPECT_TRUE(j["end"]["sentinel"]["terminate"].is_string()) << j["end"].dump(2);
  EXPECT_TRUE(j["end"]["sentinel"]["done"].is_string()) << j["end"].dump(2);
  EXPECT_TRUE(j["end"]["sentinel"]["kill"].is_null()) << "the job left on SIGTERM, within the grace";
  EXPECT_NE(j["end"]["detail"].get<std::string>().find("its sentinel stopped the job"), std::string::npos);
}

// A normal end leaves no sentinel behind and no supervisor_lost event.
TEST(RunKilled, NormalEndDisarmsTheSentinel) {
  FakeHost h(20 * kGiB);
  TempDir d;
  auto r = testing::RunBinary({"--root", h.root, "run", "--out", d.path() + "/r", "--", "bash", "-c", "echo hi"});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_TRUE(OfType(d.path() + "/r", "supervisor_lost").empty());
}

// Issue 31: the guard stops every process of the job, also one that left its process group (setsid),
// in the job's cgroup and under the subreaper fallback.
class RunHold : public ::testing::TestWithParam<const char*> {};

/// Until `path` holds a line starting with `want`, or 20 s.
bool WaitForFile(const std::string& path, const std::string& want) {
  for (int i = 0; i < 2000; ++i) {
    std::ifstream f(path);
    std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    if (text.find(want) != std::string::npos) return true;
    std::this_thread::sleep_for(10ms);
  }
  return false;
}

TEST_P(RunHold, SetsidChildHoldingMemoryIsStopped) {
  // Under qemu-user (the aarch64 stage) the setsid child outlived the subreaper stop, while it
  // stops natively and in cgroup mode under qemu; the cause (how qemu-user handles the subreaper's
  // reparenting) is not yet diagnosed: skipped there, with this reason.
  if (GetParam() == std::string("subreaper") && !testing::TargetEmulator().empty())
    GTEST_SKIP() << "subreaper mode under qemu-user: not yet diagnosed (see the comment)";
  FakeHost h(20 * kGiB);
  testing::ScopedEnv mode("SPARKOPS_RUN_HOLD", GetParam());
  const std::string alloc = testing::TargetShell({testing::BuildArtifact("guard_alloc"), "64", "0", "128"});
  const std::string kid = h.d.path() + "/kid";
  auto lr =
      Start(h.root, h.d.path() + "/r", {"--min-available", "8G", "--grace", "1"},
            "echo ready; setsid " + alloc + " > " + kid + ".out 2>&1 < /dev/null & echo $! > " + kid + ".pid; wait");
  ASSERT_TRUE(WaitForFile(kid + ".out", "allocated 128 MiB"));
  const pid_t child = static_cast<pid_t>(std::stol(ReadFileOrDie(kid + ".pid")));
  EXPECT_NE(::getpgid(child), ::getpgid(lr.child.pid)) << "it left the job's process group";
  h.SetMem(1 * kGiB);
  std::string err;
  EXPECT_EQ(Finish(lr, &err), 75) << err;
  bool gone = false;
  for (int i = 0; i < 3000 && !gone; ++i) {  // up to 30 s: qemu-aarch64 on a loaded machine is slow
    std::ifstream st("/proc/" + std::to_string(child) + "/stat");
    std::string line;
    std::getline(st, line);
    const auto paren = line.rfind(')');
    const bool zombie = paren != std::string::npos && paren + 2 < line.size() && line[paren + 2] == 'Z';
    gone = zombie || !guard::ProcessAlive(static_cast<uint32_t>(child));  // a killed, unreaped child is gone
    if (!gone) std::this_thread::sleep_for(10ms);
  }
  EXPECT_TRUE(gone) << "the setsid child holding 128 MiB outlived the guard's stop\n" << err;
  if (!gone) ::kill(child, SIGKILL);
  auto meta = nlohmann::json::parse(ReadFileOrDie(lr.dir + "/meta.json"));
  const std::string want = GetParam();
  if (want == "subreaper") EXPECT_EQ(meta["job_hold"]["mode"], "subreaper");
  else EXPECT_TRUE(meta["job_hold"]["mode"] == "cgroup" || meta["job_hold"].contains("why_not_cgroup")) << meta.dump();
  EXPECT_NE(err.find("sparkops run: job held "), std::string::npos) << err;
}

TEST_P(RunHold, JobForkingHundredsOfShortLivedChildrenIsStoppedWhole) {
  FakeHost h(20 * kGiB);
  testing::ScopedEnv mode("SPARKOPS_RUN_HOLD", GetParam());
  auto lr = Start(h.root, h.d.path() + "/r", {"--min-available", "8G", "--grace", "1"},
                  "echo ready; trap '' TERM; while :; do for i in $(seq 100); do (exit 0) & done; wait; "
                  "echo round; done");
  ASSERT_TRUE(WaitForFile(lr.dir + "/train.log", "round"));
  h.SetMem(1 * kGiB);
  std::string err;
  EXPECT_EQ(Finish(lr, &err), 75) << err;
  auto g = OfType(lr.dir, "memory_guard");
  ASSERT_GE(g.size(), 1u);
  EXPECT_EQ(g.back()["action"], "kill") << "it ignores SIGTERM: SIGKILL after the grace";
  auto meta = nlohmann::json::parse(ReadFileOrDie(lr.dir + "/meta.json"));
  if (meta["job_hold"]["mode"] == "cgroup") {
    EXPECT_FALSE(std::filesystem::exists(meta["job_hold"]["cgroup"].get<std::string>()))
        << "the empty cgroup is removed";
  }
}

INSTANTIATE_TEST_SUITE_P(Modes, RunHold, ::testing::Values("cgroup", "subreaper"));

}  // namespace
}  // namespace sparkops
