// Issue 34, "start again": `run --restart-on guard,crash` starts the job again after the memory
// guard's stop or a crash, with SPARKOPS_ATTEMPT=K, one run directory for all attempts
// (docs/restart.md). The rules are table-tested; real jobs (bash stand-in trainers) under a fixture
// --root check the run directory, the exit code, Ctrl-C and analyze.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <thread>

#include "analysis/attempts.h"
#include "analysis/guard_summary.h"
#include "analysis/localtime.h"
#include "analysis/run_dir.h"
#include "analysis/slowdown.h"
#include "analysis/step_series.h"
#include "base/strings.h"
#include "base/timefmt.h"
#include "live_run.h"
#include "run/restart.h"
#include "test_util.h"

namespace sparkops {
namespace {

using namespace std::chrono_literals;
using testing::FakeHost;
using testing::FinishRun;
using testing::ReadFileOrDie;
using testing::RunEventsOfType;
using testing::RunEventsSoFar;
using testing::StartRun;
using testing::TempDir;

constexpr uint64_t kGiB = 1ull << 30;

TEST(Restart, ParsesTheListAndRefusesTheRest) {
  auto both = ParseRestartOn("guard,crash");
  ASSERT_TRUE(both);
  EXPECT_TRUE(both->on_guard && both->on_crash);
  EXPECT_EQ(both->max_restarts, 3);
  EXPECT_EQ(both->backoff_s, 10);
  auto crash = ParseRestartOn(" crash ");
  ASSERT_TRUE(crash);
  EXPECT_TRUE(crash->on_crash && !crash->on_guard);
  for (const char* bad : {"", "oom", "guard,", "guard,guard", "crash;guard"}) {
    auto r = ParseRestartOn(bad);
    ASSERT_FALSE(r) << bad;
    EXPECT_NE(r.error().message.find("--restart-on"), std::string::npos) << r.error().message;
  }
}

TEST(Restart, WhichEndsRestartAndTheBackoff) {
  struct Case {
    int status;
    bool forwarded, guard;
    AttemptEnd end;
  } cases[] = {
      {0, false, false, AttemptEnd::kSuccess}, {1, false, false, AttemptEnd::kCrash},
      {137, false, false, AttemptEnd::kCrash},  // SIGKILL from outside (the kernel OOM killer)
      {0, false, true, AttemptEnd::kGuard},     // the job caught the guard's SIGTERM and exited 0
      {143, false, true, AttemptEnd::kGuard},  {130, true, false, AttemptEnd::kUser},
      {143, true, true, AttemptEnd::kUser},  // Ctrl-C wins over the guard
  };
  for (const auto& c : cases)
    EXPECT_EQ(ClassifyAttempt(c.status, c.forwarded, c.guard), c.end) << c.status << c.forwarded << c.guard;
  RestartPolicy p = *ParseRestartOn("crash");
  p.max_restarts = 2;
  EXPECT_TRUE(ShouldRestart(p, AttemptEnd::kCrash, 1));
  EXPECT_TRUE(ShouldRestart(p, AttemptEnd::kCrash, 2));
  EXPECT_FALSE(ShouldRestart(p, AttemptEnd::kCrash, 3));  // two restarts made
  EXPECT_FALSE(ShouldRestart(p, AttemptEnd::kGuard, 1));  // not listed
  EXPECT_FALSE(ShouldRestart(p, AttemptEnd::kUser, 1));
  EXPECT_FALSE(ShouldRestart(p, AttemptEnd::kSuccess, 1));
  EXPECT_EQ(RestartBackoff(p, 2), 10);
  EXPECT_EQ(RestartBackoff(p, 3), 20);
  EXPECT_EQ(RestartBackoff(p, 4), 40);
  EXPECT_EQ(RestartBackoff(p, 50), 600);  // capped
  p.backoff_s = 0;
  EXPECT_EQ(RestartBackoff(p, 5), 0);
}

/// train.log records: `t` seconds after 12:00:00Z, stream o.
std::string Record(double t, const std::string& text) {
  auto tp = *ParseTimestamp("2026-12-06T12:00:00.000Z") + std::chrono::milliseconds(static_cast<int64_t>(t * 1000));
  return FormatUtcMillis(tp) + "\to\t" + text + "\n";
}

// Steps that continue after a restart (a resume) or start over: the gap between attempts is no
// step time, and the steps redone replace the ones the stop lost.
TEST(Restart, TheStepSeriesAcrossAttempts) {
  LocalZone z = *LocalZone::Make("UTC");
  for (int resume_from : {9, 0}) {  // the checkpoint of step 8 ... or none
    std::string log = Record(0, AttemptMarkerText(1));
    for (int s = 1; s <= 12; ++s) log += Record(s, "Step " + std::to_string(s) + " | loss:1.0 lr:2e-05");
    log += Record(700, AttemptMarkerText(2));
    double t = 760;
    for (int s = resume_from; s <= 40; ++s, t += 1)
      if (s > 0) log += Record(t, "Step " + std::to_string(s) + " | loss:1.0 lr:2e-05");
    StepSeries series = ParseStepLog(log, z);
    ASSERT_FALSE(series.points.empty());
    const size_t before = resume_from == 9 ? 8 : 0;  // attempt 1's steps kept: those not redone
    ASSERT_EQ(series.points.size(), before + (resume_from == 9 ? 32 : 40)) << series.points.size();
    EXPECT_EQ(series.points[before].step, resume_from == 9 ? 9 : 1);
    if (before > 0) {
      EXPECT_TRUE(std::isnan(series.points[before].cost)) << series.points[before].cost;
    }
    for (size_t i = 1; i < series.points.size(); ++i) EXPECT_GT(series.points[i].step, series.points[i - 1].step);
    for (const auto& p : series.points) EXPECT_TRUE(std::isnan(p.cost) || p.cost < 2) << p.step << " " << p.cost;
  }
}

TEST(Restart, AttemptsFromEvents) {
  const std::string events =
      R"({"time":"2026-12-06T12:00:00.000Z","type":"attempt_start","attempt":1,"pid":100}
{"time":"2026-12-06T12:12:30.000Z","type":"restart","attempt":1,"reason":"guard","code":0,"backoff_s":10}
{"time":"2026-12-06T12:12:40.000Z","type":"attempt_start","attempt":2,"pid":200}
{"time":"2026-12-06T12:30:00.000Z","type":"exit","code":0,"attempt":2,"reason":"success"}
)";
  auto ev = ParseEventsJsonl(events, "events.jsonl");
  ASSERT_TRUE(ev) << ev.error().message;
  StepSeries s;
  StepPoint p;
  p.step = 5;
  p.t_ms = ToUnixMillis(*ParseTimestamp("2026-12-06T12:13:05.000Z"));
  s.points.push_back(p);
  auto a = ReadAttempts(*ev, s);
  ASSERT_EQ(a.size(), 2u);
  EXPECT_EQ(a[0].reason, "guard");
  EXPECT_EQ(a[0].backoff_s, 10);
  EXPECT_EQ(a[0].lost_s, 35);  // the stop at 12:12:30 to the next first step at 12:13:05
  EXPECT_EQ(a[1].reason, "success");
  EXPECT_EQ(a[1].code, 0);
  EXPECT_FALSE(a[1].lost_s);
  EXPECT_TRUE(ReadAttempts({}, s).empty());
}

// What ended the run is read from its last attempt: attempt 1's guard stop is in the attempts, not
// in the end line or the OOM ladder of a run whose attempt 2 finished.
TEST(Restart, AnEarlierAttemptsStopIsNotTheRunsEnd) {
  const std::string first =
      R"({"time":"2026-12-06T12:00:00.000Z","type":"attempt_start","attempt":1,"pid":100}
{"time":"2026-12-06T12:12:29.000Z","type":"memory_guard","action":"terminate","reason":"min_available","signal":"SIGTERM"}
{"time":"2026-12-06T12:12:30.000Z","type":"restart","attempt":1,"reason":"guard","code":0,"backoff_s":10}
{"time":"2026-12-06T12:12:40.000Z","type":"attempt_start","attempt":2,"pid":200}
)";
  auto finished = ParseEventsJsonl(first + R"({"time":"2026-12-06T12:30:00.000Z","type":"exit","code":0}
)",
                                   "events.jsonl");
  ASSERT_TRUE(finished) << finished.error().message;
  EXPECT_EQ(LastAttemptEvents(*finished).size(), 2u);
  EXPECT_FALSE(DescribeGuard(*finished)) << *DescribeGuard(*finished);
  auto stopped_again = ParseEventsJsonl(
      first + R"({"time":"2026-12-06T12:20:00.000Z","type":"memory_guard","action":"terminate","reason":"pressure"}
{"time":"2026-12-06T12:20:01.000Z","type":"exit","signal":"Terminated"}
)",
      "events.jsonl");
  ASSERT_TRUE(stopped_again) << stopped_again.error().message;
  auto d = DescribeGuard(*stopped_again);
  ASSERT_TRUE(d);
  EXPECT_NE(d->find("memory pressure"), std::string::npos) << *d;
  auto plain = ParseEventsJsonl(R"({"time":"2026-12-06T12:20:00.000Z","type":"exit","code":0}
)",
                                "events.jsonl");
  ASSERT_TRUE(plain);
  EXPECT_EQ(LastAttemptEvents(*plain).size(), 1u);  // no attempts: every event
}

// Attempt 1 crashes (exit 3), attempt 2 succeeds: run exits 0; events, meta, summary and analyze
// show both attempts.
TEST(RunRestart, ACrashIsStartedAgainAndTheRunEndsWithTheLastAttempt) {
  FakeHost h(20 * kGiB);
  const char* job =
      "echo attempt $SPARKOPS_ATTEMPT; for s in 1 2 3; do echo \"step $s loss 1.0\"; done; "
      "[ \"$SPARKOPS_ATTEMPT\" = 1 ] && exit 3; exit 0";
  auto lr = StartRun(h.root, h.d.path() + "/r", {"--restart-on", "crash", "--restart-backoff", "0.1"}, job);
  std::string err;
  EXPECT_EQ(FinishRun(lr, &err), 0) << err;
  const std::string log = ReadFileOrDie(lr.dir + "/train.log");
  ASSERT_NE(log.find("attempt 1\n"), std::string::npos) << log;
  ASSERT_NE(log.find("attempt 2\n"), std::string::npos) << log;
  EXPECT_LT(log.find("attempt 1\n"), log.find("attempt 2\n"));
  EXPECT_NE(log.find(AttemptMarkerText(2)), std::string::npos) << log;
  auto starts = RunEventsOfType(lr.dir, "attempt_start");
  ASSERT_EQ(starts.size(), 2u);
  EXPECT_EQ(starts[0]["attempt"], 1);
  EXPECT_EQ(starts[1]["attempt"], 2);
  auto restarts = RunEventsOfType(lr.dir, "restart");
  ASSERT_EQ(restarts.size(), 1u);
  EXPECT_EQ(restarts[0]["reason"], "crash");
  EXPECT_EQ(restarts[0]["code"], 3);
  EXPECT_EQ(restarts[0]["backoff_s"], 0.1);
  auto exit = RunEventsOfType(lr.dir, "exit").at(0);
  EXPECT_EQ(exit["code"], 0);
  EXPECT_EQ(exit["attempt"], 2);
  auto meta = nlohmann::json::parse(ReadFileOrDie(lr.dir + "/meta.json"));
  ASSERT_EQ(meta["attempts"].size(), 2u) << meta.dump();
  EXPECT_EQ(meta["attempts"][0]["reason"], "crash");
  EXPECT_EQ(meta["attempts"][0]["exit"]["code"], 3);
  EXPECT_EQ(meta["attempts"][1]["reason"], "success");
  EXPECT_EQ(meta["pid"], starts[1]["pid"]);
  auto summary = nlohmann::json::parse(ReadFileOrDie(lr.dir + "/summary.json"));
  ASSERT_EQ(summary["attempts"].size(), 2u) << summary.dump();
  EXPECT_EQ(summary["attempts"][0]["reason"], "crash");
  EXPECT_EQ(summary["attempts"][1]["reason"], "success");
  EXPECT_NE(ReadFileOrDie(lr.dir + "/report.html").find(">attempt 2</text>"), std::string::npos);
  auto text = testing::RunBinary({"analyze", lr.dir});
  EXPECT_EQ(text.rc, 0) << text.err;
  EXPECT_NE(text.out.find("attempts 2 attempts"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("#1 "), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("crashed (exit 3), restarted after 0.1 s"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("finished (exit 0)"), std::string::npos) << text.out;
  auto json = testing::RunBinary({"analyze", "--json", lr.dir});
  ASSERT_EQ(json.rc, 0) << json.err;
  auto j = nlohmann::json::parse(json.out);
  ASSERT_EQ(j["attempts"].size(), 2u) << json.out;
  EXPECT_EQ(j["attempts"][0]["number"], 1);
  EXPECT_TRUE(j["attempts"][0]["lost_s"].is_number());
  EXPECT_EQ(j["attempts"][1]["exit"]["code"], 0);
}

bool WaitFor(const std::string& dir, const std::string& type, std::chrono::seconds limit) {
  for (auto t0 = std::chrono::steady_clock::now(); std::chrono::steady_clock::now() - t0 < limit;) {
    for (const auto& e : RunEventsSoFar(dir))
      if (e["type"] == type) return true;
    std::this_thread::sleep_for(25ms);
  }
  return false;
}

// The guard stops attempt 1 (its SIGTERM: the job keeps its step); attempt 2 resumes from the
// checkpoint file attempt 1 wrote and finishes: exit 0. The page cache is flushed before it.
TEST(RunRestart, AGuardStopIsStartedAgainAndTheJobResumes) {
  FakeHost h(20 * kGiB);
  const std::string ck = h.d.path() + "/ckpt";
  const std::string job = "s=0; [ -f " + ck + " ] && s=$(cat " + ck +
                          ") && echo \"resumed from step $s\"; s0=$s; "
                          "trap 'echo \"stopped at step $s\"; exit 0' TERM; echo \"attempt $SPARKOPS_ATTEMPT\"; "
                          "while :; do s=$((s+1)); echo \"step $s loss 1.0\"; echo $s > " +
                          ck +
                          "; "
                          "[ \"$SPARKOPS_ATTEMPT\" -ge 2 ] && [ $s -ge $((s0+3)) ] && exit 0; sleep 0.05; done";
  auto lr =
      StartRun(h.root, h.d.path() + "/r",
               {"--min-available", "8G", "--flush-cache", "--restart-on", "guard", "--restart-backoff", "0.3"}, job);
  h.SetMem(2 * kGiB);  // under the floor: the guard stops attempt 1
  ASSERT_TRUE(WaitFor(lr.dir, "memory_guard", 20s)) << ReadFileOrDie(lr.dir + "/events.jsonl");
  // The flush (rung one) does not lift it, so the stop follows; the pool comes back after it.
  for (int i = 0; i < 800; ++i) {
    bool stopped = false;
    for (const auto& e : RunEventsSoFar(lr.dir))
      stopped = stopped || (e["type"] == "memory_guard" && e["action"] != "flush");
    if (stopped) break;
    std::this_thread::sleep_for(25ms);
  }
  h.SetMem(20 * kGiB);
  std::string err;
  EXPECT_EQ(FinishRun(lr, &err), 0) << err << ReadFileOrDie(lr.dir + "/events.jsonl");
  const std::string log = ReadFileOrDie(lr.dir + "/train.log");
  ASSERT_NE(log.find("stopped at step"), std::string::npos) << log;
  ASSERT_NE(log.find("resumed from step"), std::string::npos) << log;
  EXPECT_LT(log.find("stopped at step"), log.find("resumed from step"));
  auto restarts = RunEventsOfType(lr.dir, "restart");
  ASSERT_EQ(restarts.size(), 1u) << ReadFileOrDie(lr.dir + "/events.jsonl");
  EXPECT_EQ(restarts[0]["reason"], "guard");
  EXPECT_EQ(restarts[0]["cache_flushed"], true);
  EXPECT_EQ(ReadFileOrDie(h.root + "/proc/sys/vm/drop_caches"), "3\n");
  EXPECT_EQ(RunEventsOfType(lr.dir, "attempt_start").size(), 2u);
  EXPECT_EQ(RunEventsOfType(lr.dir, "exit").at(0)["reason"], "success");
}

// Every attempt crashes: two restarts (0.05 s, then 0.1 s), and run exits with the last attempt's code.
TEST(RunRestart, RestartsRunOutAndTheLastCodeIsRuns) {
  FakeHost h(20 * kGiB);
  const std::string told = h.d.path() + "/told";  // each notice's JSON, one per line
  auto lr = StartRun(h.root, h.d.path() + "/r",
                     {"--restart-on", "guard,crash", "--max-restarts", "2", "--restart-backoff", "0.05", "--notify-cmd",
                      "cat >> " + told + "; echo >> " + told},
                     "echo attempt $SPARKOPS_ATTEMPT; exit $((6 + SPARKOPS_ATTEMPT))");
  std::string err;
  EXPECT_EQ(FinishRun(lr, &err), 9) << err;
  EXPECT_EQ(RunEventsOfType(lr.dir, "attempt_start").size(), 3u);
  auto restarts = RunEventsOfType(lr.dir, "restart");
  ASSERT_EQ(restarts.size(), 2u);
  EXPECT_EQ(restarts[0]["backoff_s"], 0.05);
  EXPECT_EQ(restarts[1]["backoff_s"], 0.1);
  EXPECT_EQ(restarts[1]["code"], 8);
  EXPECT_EQ(RunEventsOfType(lr.dir, "exit").at(0)["code"], 9);
  int restarts_told = 0;  // notify tells each restart
  const std::string notices = ReadFileOrDie(told);
  for (auto line : SplitLines(notices)) {
    if (line.empty()) continue;
    auto n = nlohmann::json::parse(line);
    if (n["event"] != "restart") continue;
    ++restarts_told;
    EXPECT_NE(n["text"].get<std::string>().find("starting attempt"), std::string::npos) << line;
  }
  EXPECT_EQ(restarts_told, 2) << notices;
}

// Ctrl-C (SIGINT to run) ends the run: the job is not started again, whatever --restart-on says.
TEST(RunRestart, CtrlCNeverRestarts) {
  FakeHost h(20 * kGiB);
  auto lr = StartRun(h.root, h.d.path() + "/r", {"--restart-on", "guard,crash", "--restart-backoff", "0.05"},
                     "echo ready; while :; do sleep 0.05; done");
  ::kill(lr.child.pid, SIGINT);
  std::string err;
  EXPECT_NE(FinishRun(lr, &err), 0) << err;
  EXPECT_EQ(RunEventsOfType(lr.dir, "attempt_start").size(), 1u) << ReadFileOrDie(lr.dir + "/events.jsonl");
  EXPECT_TRUE(RunEventsOfType(lr.dir, "restart").empty());
  EXPECT_EQ(RunEventsOfType(lr.dir, "exit").at(0)["reason"], "user");
}

TEST(RunRestart, BadFlags) {
  FakeHost h(20 * kGiB);
  TempDir d;
  testing::ExpectRunRefuses(h.root, d.path(),
                            {
                                {{"--restart-on", "oom"}, "--restart-on"},
                                {{"--restart-on", ""}, "--restart-on"},
                                {{"--restart-on", "crash,crash"}, "--restart-on"},
                                {{"--restart-on", "crash", "--max-restarts", "0"}, "--max-restarts"},
                                {{"--restart-on", "crash", "--max-restarts", "1.5"}, "--max-restarts"},
                                {{"--restart-on", "crash", "--restart-backoff", "-1"}, "--restart-backoff"},
                                {{"--restart-on", "crash", "--restart-backoff", "inf"}, "--restart-backoff"},
                                {{"--max-restarts", "2"}, "--max-restarts"},
                                {{"--restart-backoff", "5"}, "--restart-backoff"},
                            });
}

}  // namespace
}  // namespace sparkops
