// Issue 34: checkpoint early, stop late. `run --checkpoint-signal` sends the signal once to the job's
// processes that catch it when MemAvailable first falls under the level (default twice the floor);
// the guard's stop waits for the job's acknowledgement (SPARKOPS_CHECKPOINT_DONE) at most the grace,
// while MemAvailable stays at least half the floor. Fixture --root trees whose meminfo the test
// rewrites while real jobs run.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>

#include "base/strings.h"
#include "base/timefmt.h"
#include "guard/checkpoint.h"
#include "host/child.h"
#include "live_run.h"
#include "test_util.h"

namespace sparkops {
namespace {

using namespace std::chrono_literals;
using testing::ReadFileOrDie;
using testing::TempDir;

constexpr uint64_t kGiB = 1ull << 30;

TEST(Checkpoint, SignalNamesAndCaughtMasks) {
  EXPECT_EQ(guard::ParseCheckpointSignal("USR1").value(), SIGUSR1);
  EXPECT_EQ(guard::ParseCheckpointSignal("sigusr2").value(), SIGUSR2);
  EXPECT_EQ(guard::ParseCheckpointSignal("SIGHUP").value(), SIGHUP);
  for (const char* bad : {"KILL", "SIGSTOP", "", "9", "USR3", "SIG"}) {
    auto r = guard::ParseCheckpointSignal(bad);
    ASSERT_FALSE(r) << bad;
    EXPECT_NE(r.error().message.find("--checkpoint-signal"), std::string::npos);
  }
  EXPECT_EQ(guard::SignalName(SIGUSR1), "SIGUSR1");
  // SigCgt: bit (sig - 1). 0x200 = SIGUSR1 (10); bash's usual mask 0x4b817efb has SIGTERM? no; SIGINT yes.
  struct Case {
    const char* status;
    int sig;
    bool caught;
  } cases[] = {
      {"Name:\tpython3\nSigCgt:\t0000000000000200\n", SIGUSR1, true},
      {"Name:\tpython3\nSigCgt:\t0000000000000200\n", SIGUSR2, false},
      {"SigCgt:\t0000000000000800\n", SIGUSR2, true},
      {"SigCgt:\t0000000180014002\n", SIGINT, true},
      {"SigCgt:\t0000000180014002\n", SIGUSR1, false},
      {"SigIgn:\t0000000000000200\n", SIGUSR1, false},  // ignored is not caught; no SigCgt line at all
      {"SigCgt:\tzz00000000000200\n", SIGUSR1, false},   // malformed
      {"SigCgt:\t00000000000000000200\n", SIGUSR1, false},  // longer than 64 bits
      {"SigCgt:\t", SIGUSR1, false},
      {"", SIGUSR1, false},
  };
  for (const auto& c : cases) EXPECT_EQ(guard::CatchesSignal(c.status, c.sig), c.caught) << c.status << c.sig;
  EXPECT_FALSE(guard::CatchesSignal("SigCgt:\tffffffffffffffff\n", 0));
  EXPECT_FALSE(guard::CatchesSignal("SigCgt:\tffffffffffffffff\n", 65));
}

TEST(Checkpoint, LevelAndHold) {
  guard::CheckpointOptions o;
  EXPECT_EQ(guard::CheckpointLevel(o, 8 * kGiB), 16 * kGiB);
  EXPECT_EQ(guard::CheckpointLevel(o, UINT64_MAX), UINT64_MAX);
  o.at_bytes = 20 * kGiB;
  EXPECT_EQ(guard::CheckpointLevel(o, 8 * kGiB), 20 * kGiB);
  EXPECT_TRUE(guard::HoldStopForCheckpoint(1, 120, 5 * kGiB, 8 * kGiB));
  EXPECT_TRUE(guard::HoldStopForCheckpoint(1, 120, 4 * kGiB, 8 * kGiB));    // exactly half: still waits
  EXPECT_FALSE(guard::HoldStopForCheckpoint(1, 120, 4 * kGiB - 1, 8 * kGiB));  // under half: stop now
  EXPECT_FALSE(guard::HoldStopForCheckpoint(120, 120, 7 * kGiB, 8 * kGiB));  // the grace is over
}

// Issue 34: the request's PSI level. MemAvailable is checked first; pressure asks at or above the level.
TEST(Checkpoint, TriggerTable) {
  using guard::CheckpointTrigger;
  struct Case {
    uint64_t available;
    std::optional<double> psi_reading;
    std::optional<double> psi_level;
    CheckpointTrigger want;
  } cases[] = {
      {20 * kGiB, 0.5, 20.0, CheckpointTrigger::kNone},
      {15 * kGiB, 0.5, 20.0, CheckpointTrigger::kMemAvailable},
      {16 * kGiB, 0.5, 20.0, CheckpointTrigger::kNone},  // at the level is not under it
      {20 * kGiB, 20.0, 20.0, CheckpointTrigger::kPressure},  // at the level asks
      {20 * kGiB, 19.99, 20.0, CheckpointTrigger::kNone},
      {20 * kGiB, 35.0, 20.0, CheckpointTrigger::kPressure},
      {12 * kGiB, 35.0, 20.0, CheckpointTrigger::kMemAvailable},  // both: MemAvailable is named
      {20 * kGiB, std::nullopt, 20.0, CheckpointTrigger::kNone},  // no PSI on this kernel
      {20 * kGiB, 90.0, std::nullopt, CheckpointTrigger::kNone},  // no PSI level
  };
  for (const auto& c : cases) {
    guard::Reading r;
    r.available = c.available;
    r.psi_full_avg10 = c.psi_reading;
    EXPECT_EQ(guard::CheckpointTriggerFor(r, 16 * kGiB, c.psi_level), c.want)
        << c.available << " " << c.psi_reading.value_or(-1) << " " << c.psi_level.value_or(-1);
  }
  EXPECT_EQ(guard::ToString(CheckpointTrigger::kMemAvailable), "mem_available");
  EXPECT_EQ(guard::ToString(CheckpointTrigger::kPressure), "pressure");
  guard::CheckpointOptions o;
  EXPECT_EQ(guard::CheckpointPsiLevel(o, 40.0), 20.0);  // default: half the guard's --max-pressure
  EXPECT_EQ(guard::CheckpointPsiLevel(o, std::nullopt), std::nullopt);
  o.psi_pct = 10;
  EXPECT_EQ(guard::CheckpointPsiLevel(o, 40.0), 10.0);
}

using testing::FakeHost;
using testing::FinishRun;
using testing::RunEventsOfType;
using testing::RunEventsSoFar;
using testing::StartRun;

/// The index of the first event of `type` in events.jsonl so far; -1 when none.
int IndexOf(const std::string& dir, const std::string& type) {
  auto ev = RunEventsSoFar(dir);
  for (size_t i = 0; i < ev.size(); ++i)
    if (ev[i]["type"] == type) return static_cast<int>(i);
  return -1;
}

bool WaitFor(const std::string& dir, const std::string& type, std::chrono::seconds limit) {
  for (auto t0 = std::chrono::steady_clock::now(); std::chrono::steady_clock::now() - t0 < limit;) {
    if (IndexOf(dir, type) >= 0) return true;
    std::this_thread::sleep_for(25ms);
  }
  return false;
}

double Seconds(const nlohmann::json& e) {
  auto t = ParseTimestamp(e["time"].get<std::string>());
  EXPECT_TRUE(t.has_value()) << e.dump();
  return t ? std::chrono::duration<double>(t->time_since_epoch()).count() : 0;
}

// The job saves for 1 s after the signal; the pool falls under the floor (above half of it) meanwhile:
// the stop waits for the acknowledgement, then the job gets SIGTERM.
TEST(RunCheckpoint, TheSignalComesFirstAndTheStopWaitsForTheSave) {
  FakeHost h(20 * kGiB);
  const char* job =
      "trap 'echo got USR1; sleep 1; echo saved > \"$SPARKOPS_CHECKPOINT_DONE\"; echo checkpoint saved' USR1; "
      "trap 'echo got TERM; exit 0' TERM; echo ready $SPARKOPS_CHECKPOINT_SIGNAL; while :; do sleep 0.05; done";
  auto lr = StartRun(h.root, h.d.path() + "/r", {"--min-available", "8G", "--checkpoint-signal", "usr1"}, job);
  h.SetMem(12 * kGiB);  // under twice the floor (the default level): the request
  ASSERT_TRUE(WaitFor(lr.dir, "checkpoint_requested", 20s)) << ReadFileOrDie(lr.dir + "/events.jsonl");
  h.SetMem(6 * kGiB);  // under the floor, above half of it: the stop waits for the save
  std::string err;
  EXPECT_EQ(FinishRun(lr, &err), 75) << err;
  const std::string log = ReadFileOrDie(lr.dir + "/train.log");
  EXPECT_NE(log.find("ready SIGUSR1"), std::string::npos) << log;
  ASSERT_NE(log.find("checkpoint saved"), std::string::npos) << log;
  ASSERT_NE(log.find("got TERM"), std::string::npos) << log;
  EXPECT_LT(log.find("checkpoint saved"), log.find("got TERM")) << log;
  auto req = RunEventsOfType(lr.dir, "checkpoint_requested");
  ASSERT_EQ(req.size(), 1u);
  EXPECT_EQ(req[0]["signal"], "SIGUSR1");
  EXPECT_EQ(req[0]["checkpoint_at_bytes"], 16 * kGiB);
  EXPECT_EQ(req[0]["mem_available_bytes"], 12 * kGiB);
  EXPECT_EQ(req[0]["trigger"], "mem_available");
  // bash catches it (and, for an instant, a child it forked for `sleep` before the exec resets it)
  const auto job_pid = nlohmann::json::parse(ReadFileOrDie(lr.dir + "/meta.json"))["pid"];
  EXPECT_NE(std::find(req[0]["pids"].begin(), req[0]["pids"].end(), job_pid), req[0]["pids"].end()) << req[0].dump();
  auto saved = RunEventsOfType(lr.dir, "checkpoint_saved");
  ASSERT_EQ(saved.size(), 1u) << ReadFileOrDie(lr.dir + "/events.jsonl");
  EXPECT_GE(saved[0]["seconds"].get<double>(), 0.9);
  EXPECT_LT(IndexOf(lr.dir, "checkpoint_requested"), IndexOf(lr.dir, "checkpoint_saved"));
  EXPECT_LT(IndexOf(lr.dir, "checkpoint_saved"), IndexOf(lr.dir, "memory_guard"));
  auto meta = nlohmann::json::parse(ReadFileOrDie(lr.dir + "/meta.json"));
  EXPECT_EQ(meta["checkpoint"]["signal"], "SIGUSR1");
  EXPECT_EQ(meta["checkpoint"]["done_path"], std::filesystem::absolute(lr.dir).string() + "/checkpoint.done");
}

// Memory pressure at the PSI level while MemAvailable stays high: the request comes from pressure,
// once; the guard's stop (pressure above --max-pressure for the window) has not come.
TEST(RunCheckpoint, PressureAtThePsiLevelAsksWhileMemAvailableIsHigh) {
  FakeHost h(20 * kGiB, 0.5);
  const char* job = "trap 'echo got USR1' USR1; trap 'exit 0' TERM; echo ready; while :; do sleep 0.05; done";
  auto lr = StartRun(h.root, h.d.path() + "/r",
                     {"--min-available", "8G", "--checkpoint-signal", "USR1", "--checkpoint-psi", "15"}, job);
  h.SetPsi(25);  // at/above 15, below --max-pressure (40)
  ASSERT_TRUE(WaitFor(lr.dir, "checkpoint_requested", 20s)) << ReadFileOrDie(lr.dir + "/events.jsonl");
  for (int i = 0; i < 400 && ReadFileOrDie(lr.dir + "/train.log").find("got USR1") == std::string::npos; ++i)
    std::this_thread::sleep_for(25ms);
  EXPECT_NE(ReadFileOrDie(lr.dir + "/train.log").find("got USR1"), std::string::npos);
  EXPECT_TRUE(RunEventsOfType(lr.dir, "memory_guard").empty());
  h.SetMem(2 * kGiB);  // end it
  EXPECT_EQ(FinishRun(lr), 75);
  auto req = RunEventsOfType(lr.dir, "checkpoint_requested");
  ASSERT_EQ(req.size(), 1u) << ReadFileOrDie(lr.dir + "/events.jsonl");
  EXPECT_EQ(req[0]["trigger"], "pressure");
  EXPECT_EQ(req[0]["checkpoint_psi"], 15.0);
  EXPECT_NEAR(req[0]["psi_full_avg10"].get<double>(), 25.0, 0.01);
  EXPECT_EQ(req[0]["mem_available_bytes"], 20 * kGiB);
  EXPECT_FALSE(req[0]["pids"].empty());
  EXPECT_EQ(nlohmann::json::parse(ReadFileOrDie(lr.dir + "/meta.json"))["checkpoint"]["checkpoint_psi"], 15.0);
}

// A launcher that does not catch the signal (it would die of it) is not sent it; its child is.
TEST(RunCheckpoint, OnlyTheProcessesThatCatchTheSignalGetIt) {
  FakeHost h(20 * kGiB);
  const char* job =
      "sh -c 'trap \"echo child got USR1\" USR1; trap \"exit 0\" TERM; echo ready; while :; do sleep 0.05; done' "
      "& wait";
  auto lr = StartRun(h.root, h.d.path() + "/r",
                     {"--min-available", "8G", "--checkpoint-signal", "USR1", "--grace", "2"}, job);
  h.SetMem(12 * kGiB);
  ASSERT_TRUE(WaitFor(lr.dir, "checkpoint_requested", 20s));
  for (int i = 0; i < 200 && ReadFileOrDie(lr.dir + "/train.log").find("child got USR1") == std::string::npos; ++i)
    std::this_thread::sleep_for(25ms);
  EXPECT_NE(ReadFileOrDie(lr.dir + "/train.log").find("child got USR1"), std::string::npos);
  h.SetMem(2 * kGiB);  // under half the floor: no wait
  EXPECT_EQ(FinishRun(lr), 75);
  auto req = RunEventsOfType(lr.dir, "checkpoint_requested").at(0);
  // The inner sh (and, for an instant, a child it forked for `sleep`), never the launcher bash.
  const auto launcher = nlohmann::json::parse(ReadFileOrDie(lr.dir + "/meta.json"))["pid"];
  EXPECT_FALSE(req["pids"].empty()) << req.dump();
  EXPECT_EQ(std::find(req["pids"].begin(), req["pids"].end(), launcher), req["pids"].end()) << req.dump();
  auto exit = RunEventsOfType(lr.dir, "exit").at(0);
  EXPECT_NE(exit.value("signal", ""), strsignal(SIGUSR1)) << "the launcher died of the checkpoint signal";
}

// Under the level from the start, before the job installed its handler: said once, tried again
// every 5 s until a process catches the signal.
TEST(RunCheckpoint, AJobNotYetCatchingTheSignalIsAskedAgain) {
  FakeHost h(12 * kGiB);
  const char* job =
      "echo starting; sleep 1; trap 'echo got USR1' USR1; trap 'exit 0' TERM; echo armed; "
      "while :; do sleep 0.05; done";
  auto lr = StartRun(h.root, h.d.path() + "/r", {"--min-available", "8G", "--checkpoint-signal", "USR1"}, job);
  for (int i = 0; i < 1200 && ReadFileOrDie(lr.dir + "/train.log").find("got USR1") == std::string::npos; ++i)
    std::this_thread::sleep_for(25ms);
  h.SetMem(2 * kGiB);
  EXPECT_EQ(FinishRun(lr), 75);
  auto req = RunEventsOfType(lr.dir, "checkpoint_requested");
  ASSERT_EQ(req.size(), 2u) << ReadFileOrDie(lr.dir + "/events.jsonl");
  EXPECT_TRUE(req[0]["pids"].empty());
  EXPECT_NE(req[0].value("note", "").find("trying again"), std::string::npos) << req[0].dump();
  EXPECT_FALSE(req[1]["pids"].empty());
  EXPECT_FALSE(req[1].contains("note"));
  EXPECT_NE(ReadFileOrDie(lr.dir + "/train.log").find("got USR1"), std::string::npos);
}

// No acknowledgement: the stop waits the grace (1 s), no longer; under half the floor it does not wait.
TEST(RunCheckpoint, TheStopWaitsAtMostTheGraceAndNotUnderHalfTheFloor) {
  const char* job = "trap 'echo got USR1' USR1; trap 'exit 0' TERM; echo ready; while :; do sleep 0.05; done";
  {
    FakeHost h(20 * kGiB);
    auto lr = StartRun(h.root, h.d.path() + "/r",
                       {"--min-available", "8G", "--checkpoint-signal", "USR1", "--checkpoint-grace", "1"}, job);
    h.SetMem(6 * kGiB);  // under both levels at once
    EXPECT_EQ(FinishRun(lr), 75);
    auto req = RunEventsOfType(lr.dir, "checkpoint_requested").at(0);
    auto stop = RunEventsOfType(lr.dir, "memory_guard").at(0);
    EXPECT_GE(Seconds(stop) - Seconds(req), 0.9) << "the stop did not wait for the checkpoint\n"
                                                 << ReadFileOrDie(lr.dir + "/events.jsonl");
    EXPECT_TRUE(RunEventsOfType(lr.dir, "checkpoint_saved").empty());
  }
  {
    FakeHost h(20 * kGiB);
    auto lr = StartRun(h.root, h.d.path() + "/r",
                       {"--min-available", "8G", "--checkpoint-signal", "USR1", "--checkpoint-grace", "600"}, job);
    const auto t0 = std::chrono::steady_clock::now();
    h.SetMem(3 * kGiB);  // under half the floor
    EXPECT_EQ(FinishRun(lr), 75);
    EXPECT_LT(std::chrono::steady_clock::now() - t0, 60s) << "waited for a checkpoint under half the floor";
    EXPECT_EQ(RunEventsOfType(lr.dir, "checkpoint_requested").size(), 1u);
  }
}

TEST(RunCheckpoint, BadFlags) {
  FakeHost h(20 * kGiB);
  TempDir d;
  testing::ExpectRunRefuses(
      h.root, d.path(),
      {
          {{"--checkpoint-signal", "KILL"}, "--checkpoint-signal"},
          {{"--checkpoint-signal", ""}, "--checkpoint-signal"},
          {{"--checkpoint-signal", "USR1", "--min-available", "8G", "--checkpoint-at", "4G"}, "--checkpoint-at"},
          {{"--checkpoint-signal", "USR1", "--checkpoint-at", "nan"}, "--checkpoint-at"},
          {{"--checkpoint-signal", "USR1", "--checkpoint-at", "100%"}, "--checkpoint-at"},
          {{"--checkpoint-at", "16G"}, "--checkpoint-signal"},
          {{"--checkpoint-signal", "USR1", "--no-guard"}, "--checkpoint-signal"},
          {{"--checkpoint-signal", "USR1", "--checkpoint-psi", "40"},
           "--checkpoint-psi"},  // the default --max-pressure
          {{"--checkpoint-signal", "USR1", "--max-pressure", "30", "--checkpoint-psi", "35"}, "--checkpoint-psi"},
          {{"--checkpoint-signal", "USR1", "--checkpoint-psi", "0"}, "--checkpoint-psi"},
          {{"--checkpoint-psi", "10"}, "--checkpoint-signal"},
          {{"--checkpoint-signal", "USR1", "--checkpoint-grace", "-1"}, "--checkpoint-grace"},
          {{"--checkpoint-signal", "USR1", "--checkpoint-grace", "inf"}, "--checkpoint-grace"},
      });
}

}  // namespace
}  // namespace sparkops
