// `sparkops sample` end to end: golden CSV over a stub-NVML scenario, SIGTERM, kill -9 at random
// moments, /dev/full, flags.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <regex>
#include <thread>

#include "base/strings.h"
#include "cli/context.h"
#include "telemetry/csv.h"
#include "test_util.h"

namespace sparkops {
namespace {

using testing::BuildArtifact;
using testing::Fixture;
using testing::ReadFileOrDie;
using testing::RunBinary;
using testing::RunInProcess;

std::string Stub() { return BuildArtifact("libnvidia-ml-stub.so"); }
std::string Scenario(const std::string& n) {
  return std::string(SPARKOPS_TEST_SOURCE_DIR) + "/stub_nvml/scenarios/" + n;
}

/// Replaces each row's timestamp with <ts> after checking its format.
std::string MaskTimestamps(const std::string& csv) {
  static const std::regex ts(R"(^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z,)");
  std::string out;
  bool first = true;
  for (auto line : SplitLines(csv)) {
    std::string l(line);
    if (!first) {
      EXPECT_TRUE(std::regex_search(l, ts)) << l;
      l = "<ts>" + l.substr(l.find(','));
    }
    first = false;
    out += l + "\n";
  }
  return out;
}

/// Every line complete: the header first, then rows with the header's number of cells.
void ExpectCompleteRows(const std::string& csv) {
  ASSERT_FALSE(csv.empty());
  ASSERT_EQ(csv.back(), '\n') << "torn last row";
  auto lines = SplitLines(csv);
  EXPECT_EQ(std::string(lines[0]) + "\n", CsvHeader());
  size_t cols = CsvColumns().size();
  for (size_t i = 1; i < lines.size(); ++i)
    EXPECT_EQ(Split(lines[i], ',').size(), cols) << "line " << i + 1 << ": " << lines[i];
}

using testing::ScopedEnv;

TEST(SampleCmd, GoldenGb10LoadScenario) {
  ScopedEnv sc("SPARKOPS_STUB_NVML_SCENARIO", Scenario("gb10_load.txt"));
  auto r = RunInProcess({"--root", Fixture("gb10"), "--nvml", Stub(), "--nvidia-smi", "none", "sample", "--count", "11",
                         "--interval", "0.001"});
  ASSERT_EQ(r.rc, 0) << r.err;
  ExpectCompleteRows(r.out);
  // A slot missed on a loaded machine (1 ms interval) is recorded as an event: timing, not golden.
  std::string rows = std::regex_replace(MaskTimestamps(r.out), std::regex(";?missed_slots:[0-9]+"), "");
  EXPECT_EQ(testing::CheckGolden("sample_gb10_load.csv", rows), "");
  // Events also go to stderr, with the row's timestamp; the lost GPU is explained once.
  for (const char* e :
       {" event thermal_signature\n", " event throttle_start:sw_thermal\n", " event hot\n",
        " event throttle_start:sw_thermal+sw_power_cap\n", " event throttle_end\n", " event pd_degraded\n"})
    EXPECT_NE(r.err.find(e), std::string::npos) << e << "\n" << r.err;
  EXPECT_NE(r.err.find("GPU 0 stopped answering: NVML: GPU_IS_LOST (15); GPU columns stay empty"), std::string::npos)
      << r.err;
}

// issue 34: sample tells its events as run does: each notice one JSON object on the command's
// stdin; a notice of the host (no run directory, no job); a throttle flood is told once.
TEST(SampleCmd, NotifyCmdGetsTheEventsAsJson) {
  ScopedEnv sc("SPARKOPS_STUB_NVML_SCENARIO", Scenario("gb10_load.txt"));
  testing::TempDir d;
  const std::string told = d.path() + "/told.jsonl";
  auto r = RunInProcess({"--root", Fixture("gb10"), "--nvml", Stub(), "--nvidia-smi", "none", "sample", "--count", "11",
                         "--interval", "0.001", "--notify-cmd", "cat >> '" + told + "'; echo >> '" + told + "'"});
  ASSERT_EQ(r.rc, 0) << r.err;
  std::map<std::string, int> events;
  const std::string text = ReadFileOrDie(told);
  for (auto line : SplitLines(text)) {
    if (line.empty()) continue;
    auto j = nlohmann::json::parse(line, nullptr, false);
    ASSERT_FALSE(j.is_discarded()) << line;
    EXPECT_EQ(j["schema"], "sparkops.notify/1");
    EXPECT_FALSE(j.contains("run_dir") || j.contains("job")) << line;
    ++events[j["event"].get<std::string>()];
  }
  EXPECT_EQ(events["throttle_start"], 1) << text;  // two starts in the scenario: rate-limited to one
  EXPECT_EQ(events["thermal_signature"], 1) << text;
  EXPECT_EQ(events.count("throttle_end") + events.count("hot"), 0u) << text;  // not told
  EXPECT_EQ(RunInProcess({"--root", Fixture("gb10"), "sample", "--count", "1", "--notify", "https://x/"}).rc, 2);
}

TEST(SampleCmd, NoGpuStillWritesMemoryRows) {
  testing::TempDir dir;
  std::string out = dir.path() + "/t.csv";
  auto r = RunInProcess({"--root", Fixture("laptop"), "sample", "--count", "2", "--interval", "0.001", "--out", out});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.err.find("no GPU readable: no NVML: disabled"), std::string::npos) << r.err;
  std::string csv = ReadFileOrDie(out);
  ExpectCompleteRows(csv);
  EXPECT_EQ(SplitLines(csv).size(), 3u);
  // Second run appends without a second header.
  ASSERT_EQ(RunInProcess({"--root", Fixture("laptop"), "sample", "--count", "1", "--out", out}).rc, 0);
  std::string again = ReadFileOrDie(out);
  EXPECT_EQ(again.substr(0, csv.size()), csv);
  EXPECT_EQ(SplitLines(again).size(), 4u);
}

TEST(SampleCmd, BadFlagsAreUsageErrors) {
  for (std::vector<std::string> args : {std::vector<std::string>{"sample", "--interval", "0"},
                                        {"sample", "--interval", "abc"},
                                        {"sample", "--count", "-1"},
                                        {"sample", "--duration", "-5"},
                                        {"sample", "--bogus"}}) {
    auto r = RunInProcess(args);
    EXPECT_EQ(r.rc, 2) << Join(args, " ") << ": " << r.err;
  }
  testing::TempDir dir;
  auto r =
      RunInProcess({"--root", Fixture("laptop"), "sample", "--count", "1", "--out", dir.Write("x.csv", "a,b\n1,2\n")});
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("x.csv"), std::string::npos);
}

TEST(SampleCmd, DiskFullIsExit1WithAClearMessage) {
  auto r =
      RunBinary({"--root", Fixture("gb10"), "sample", "--count", "2", "--interval", "0.001", "--out", "/dev/full"});
  EXPECT_EQ(r.rc, 1) << r.err;
  EXPECT_NE(r.err.find("cannot write /dev/full: No space left on device"), std::string::npos) << r.err;
}

// A restart after a kill cut a row short: that row is dropped (with a note), so the file stays a
// CSV analyze reads (before: the row got a newline and sat in the middle, and analyze refused it).
TEST(SampleCmd, RestartAfterATornRowDropsItAndAnalyzeReadsTheFile) {
  testing::TempDir dir;
  std::string out = dir.path() + "/t.csv";
  auto first = RunInProcess({"--root", Fixture("gb10"), "sample", "--count", "2", "--interval", "0.001", "--out", out});
  ASSERT_EQ(first.rc, 0) << first.err;
  std::string complete = ReadFileOrDie(out);
  std::string row = std::string(SplitLines(complete)[1]);
  std::ofstream(out, std::ios::app) << row.substr(0, row.size() / 2);  // what a kill mid-write leaves
  auto again = RunInProcess({"--root", Fixture("gb10"), "sample", "--count", "1", "--interval", "0.001", "--out", out});
  ASSERT_EQ(again.rc, 0) << again.err;
  EXPECT_NE(again.err.find("ended in a torn row (" + std::to_string(row.size() / 2) + " bytes"), std::string::npos)
      << again.err;
  std::string after = ReadFileOrDie(out);
  EXPECT_EQ(after.substr(0, complete.size()), complete);
  ExpectCompleteRows(after);
  EXPECT_EQ(SplitLines(after).size(), 4u);  // header + 2 + 1
  std::string log = dir.Write("train.log", "iter 1: loss 2.0, time 100.00ms, mfu 1.00%\n");
  auto a = RunInProcess({"analyze", "--log", log, "--thermal", out, "--json"});
  EXPECT_EQ(a.rc, 0) << a.err;
  EXPECT_NE(a.out.find("\"samples\": 3"), std::string::npos) << a.out;
}

TEST(SampleCmd, DurationStops) {
  auto t0 = std::chrono::steady_clock::now();
  auto r = RunInProcess({"--root", Fixture("gb10"), "sample", "--interval", "0.02", "--duration", "0.1"});
  ASSERT_EQ(r.rc, 0) << r.err;
  size_t rows = SplitLines(r.out).size() - 1;
  EXPECT_GE(rows, 2u);  // 5 on an idle machine; fewer when a loaded one skips missed slots
  EXPECT_LE(rows, 6u);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(2));
}

pid_t Spawn(const std::vector<std::string>& args) { return testing::SpawnSparkops(args); }

std::string ReadOrEmpty(const std::string& path) {
  auto r = ReadLocalFile(path);
  return r ? *r : std::string();
}

TEST(SampleCmd, SigtermFinishesTheRowAndExits0) {
  testing::TempDir dir;
  std::string out = dir.path() + "/t.csv";
  pid_t pid = Spawn({"--root", Fixture("gb10"), "--nvml", Stub(), "--nvidia-smi", "none", "sample", "--interval",
                     "0.02", "--out", out});
  ASSERT_GT(pid, 0);
  for (int i = 0; i < 500 && SplitLines(ReadOrEmpty(out)).size() < 3; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  kill(pid, SIGTERM);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << "killed by signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 0);
  ExpectCompleteRows(ReadFileOrDie(out));
}

TEST(SampleCmd, KillMinus9AtRandomMomentsNeverTearsOrLosesRows) {
  testing::TempDir dir;
  std::string out = dir.path() + "/t.csv";
  std::mt19937 rng(20261129);
  std::uniform_int_distribution<int> delay_us(0, 30000);
  size_t killed_mid_run = 0;
  for (int i = 0; i < 100; ++i) {
    size_t size0 = ReadOrEmpty(out).size();
    pid_t pid = Spawn({"--root", Fixture("gb10"), "--nvml", Stub(), "--nvidia-smi", "none", "sample", "--interval",
                       "0.01", "--out", out});
    ASSERT_GT(pid, 0);
    // Wait for this run's first row (start-up is slow under sanitizers), then kill it at a random
    // moment of its sampling: between rows, inside a sample, or inside the write.
    for (int w = 0; w < 3000 && ReadOrEmpty(out).size() == size0; ++w)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    std::this_thread::sleep_for(std::chrono::microseconds(delay_us(rng)));
    std::string before = ReadOrEmpty(out);  // every complete row written so far must survive
    before = before.substr(0, before.rfind('\n') == std::string::npos ? 0 : before.rfind('\n') + 1);
    kill(pid, SIGKILL);
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    if (WIFSIGNALED(status)) ++killed_mid_run;
    std::string after = ReadOrEmpty(out);
    ASSERT_GT(after.size(), size0) << "run " << i << " wrote no row";
    ASSERT_EQ(after.substr(0, before.size()), before) << "rows lost at kill " << i;
    ExpectCompleteRows(after);
    if (::testing::Test::HasFailure()) break;
  }
  EXPECT_EQ(killed_mid_run, 100u);
  EXPECT_GT(SplitLines(ReadFileOrDie(out)).size(), 100u);  // rows from many runs, one header
}

}  // namespace
}  // namespace sparkops

#include <atomic>
#include <sstream>

#include "telemetry/loop.h"

namespace sparkops {
namespace {

TEST(SampleLoop, StopsFromAnotherThreadDuringALongSleep) {
  std::ostringstream out, err;
  Context ctx{{"/", "none", "none", false}, HostFs(Fixture("gb10")), {}, out, err};
  Sampler sampler(ctx);
  EventDetector det;
  std::atomic<bool> stop{false};
  int rows = 0;
  auto t0 = std::chrono::steady_clock::now();
  std::thread stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    stop = true;
  });
  auto r = SampleLoop(sampler, det, {30, 0, 0}, {nullptr, &stop}, [&](const Sample& s) -> Result<void> {
    EXPECT_TRUE(s.mem);
    ++rows;
    return {};
  });
  stopper.join();
  EXPECT_TRUE(r);
  EXPECT_EQ(rows, 1);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(1));
}

TEST(SampleLoop, WriteErrorStopsAndIsReturned) {
  std::ostringstream out, err;
  Context ctx{{"/", "none", "none", false}, HostFs(Fixture("gb10")), {}, out, err};
  Sampler sampler(ctx);
  EventDetector det;
  int rows = 0;
  auto r = SampleLoop(sampler, det, {0.001, 10, 0}, {}, [&](const Sample&) -> Result<void> {
    if (++rows == 3) return IoError("cannot write x: No space left on device");
    return {};
  });
  ASSERT_FALSE(r);
  EXPECT_EQ(rows, 3);
  EXPECT_EQ(r.error().message, "cannot write x: No space left on device");
}

}  // namespace
}  // namespace sparkops
