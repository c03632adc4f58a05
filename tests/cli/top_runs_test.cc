// `sparkops top`'s RUNS and KERNEL panes (issue 37): a live `sparkops run` advertised by its guard's
// ledger in the fixture root's spool (/run/sparkops/runs) appears with its step, s/step against the
// baseline, the slowdown verdict and the guard margin; a ledger or run directory that cannot be
// trusted is not read (--once golden, --json fields, a link in the run directory's path, another
// user's files). The kernel records that foretell a wedge (NVRM, Xid, OOM kill) from dev/kmsg.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <regex>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "guard/ledger.h"
#include "test_util.h"

namespace sparkops {
namespace {

using testing::BuildArtifact;
using testing::CheckGolden;
using testing::Fixture;
using testing::RunInProcess;
using testing::ScopedEnv;

constexpr const char* kRunDir = "/home/u/runs/llama";

/// train.log of a run: a tqdm bar of 200 steps, steps 1..60 arriving 1 s apart, then steps 61..90
/// 2 s apart (printed rates the same), from 10:00:00 UTC.
std::string TrainLog() {
  std::string out = "2026-11-29T09:59:58.000Z\to\tloading model\n";
  double t = 0;
  for (int step = 1; step <= 90; ++step) {
    const double dt = step <= 60 ? 1.0 : 2.0;
    t += dt;
    const int ms = static_cast<int>(t * 1000);
    out += fmt::format("2026-11-29T10:{:02}:{:02}.{:03}Z\te\t {:2}%|#    | {}/200 [00:00<00:00, {:.2f}s/it]\n",
                       ms / 60000, (ms / 1000) % 60, ms % 1000, step / 2, step, dt);
  }
  return out;
}

/// thermal.csv of a run: `power_w` 100 W constant, a row every `every_s` s from `from` (seconds
/// after 10:00:00 UTC, may be negative) to 10:02:30.
std::string ThermalCsv(int from = 0, int every_s = 10) {
  std::string out = "timestamp,gpu_temp_c,power_w,sm_clock_mhz,event\n";
  for (int t = from; t <= 150; t += every_s) {
    const int s = t + 3600;  // from 09:00:00
    out += fmt::format("2026-11-29T{:02}:{:02}:{:02}.000Z,60,100.0,2400,\n", 9 + s / 3600, (s / 60) % 60, s % 60);
  }
  return out;
}

/// The GB10 fixture plus a live run: pid 3100 (the login shell's /proc entry copied, running as
/// whoever runs the test, so the spool's ledger, owned by the same user, is believed), its guard
/// ledger in /run/sparkops/runs naming `run_dir`, and the run directory at kRunDir.
class RunRoot {
 public:
  explicit RunRoot(const std::string& run_dir = kRunDir) {
    namespace fs = std::filesystem;
    fs::copy(Fixture("gb10"), dir_.path(), fs::copy_options::recursive);
    const std::string uid = std::to_string(::geteuid());
    std::string stat = testing::ReadFileOrDie(dir_.path() + "/proc/950/stat");
    stat = std::regex_replace(stat, std::regex("^950 \\(bash\\)"), "3100 (sparkops)");
    stat = std::regex_replace(stat, std::regex(" 100950 "), " 103100 ");
    dir_.Write("proc/3100/stat", stat);
    std::string status = testing::ReadFileOrDie(dir_.path() + "/proc/950/status");
    status = std::regex_replace(status, std::regex("Uid:\t1000\t1000\t1000\t1000"),
                                "Uid:\t" + uid + "\t" + uid + "\t" + uid + "\t" + uid);
    status = std::regex_replace(status, std::regex("bash"), "sparkops");
    status = std::regex_replace(status, std::regex("(Tgid|Pid):\t950"), "$1:\t3100");
    dir_.Write("proc/3100/status", status);
    dir_.Write("proc/3100/cmdline", std::string("sparkops\0run\0--out\0runs/llama\0--\0./job.sh\0", 41));
    guard::Ledger l;
    l.pid = 3100;
    l.start_ticks = 103100;
    l.mode = "run";
    l.min_available_bytes = 16ull << 30;
    l.run_dir = run_dir;
    ledger_ = dir_.Write("run/sparkops/runs/3100.json", guard::LedgerJson(l));
    std::string run = std::string(kRunDir).substr(1);
    dir_.Write(run + "/meta.json", R"({"start_time": "2026-11-29T09:59:57.000Z", "argv": ["./job.sh", "--epochs", "3"],
 "pid": 3101})");
    dir_.Write(run + "/train.log", TrainLog());
    dir_.Write(run + "/events.jsonl", "");
    dir_.Write(run + "/thermal.csv", ThermalCsv());
  }
  const std::string& path() const { return dir_.path(); }
  const std::string& ledger() const { return ledger_; }
  std::string Write(const std::string& rel, const std::string& text) const { return dir_.Write(rel, text); }

 private:
  testing::TempDir dir_;
  std::string ledger_;
};

std::string MaskTime(const std::string& s) {
  return std::regex_replace(s, std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{3})?Z)"), "<time>");
}

testing::RunOutput Top(const RunRoot& root, const char* mode) {
  ScopedEnv sc("SPARKOPS_STUB_NVML_SCENARIO",
               std::string(SPARKOPS_TEST_SOURCE_DIR) + "/stub_nvml/scenarios/gb10_load.txt");
  return RunInProcess({"--root", root.path(), "--nvml", BuildArtifact("libnvidia-ml-stub.so"), "--nvidia-smi", "none",
                       "top", mode},
                      {{"COLUMNS", "80"}});
}

TEST(TopRuns, OnceGoldenShowsTheRunItsStepSpeedVerdictAndMargin) {
  RunRoot root;
  auto r = Top(root, "--once");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out.find("KERNEL"), std::string::npos) << "no kernel log in the root: no pane";
  // The wedge fixture's kernel log: NVRM out of memory twice, an Xid, an OOM kill, a hung task, a lockup.
  root.Write("dev/kmsg", testing::ReadFileOrDie(Fixture("wedge") + "/dev/kmsg"));
  r = Top(root, "--once");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(CheckGolden("top_runs_80.txt", MaskTime(r.out)), "");
  EXPECT_NE(r.out.find("KERNEL  since boot:  nvrm_no_memory 2  xid 1  oom_kill 1"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("[  1990.000] lockup"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("RUNS  1 live"), std::string::npos) << r.out;
  // 60 steps at 1 s, then 30 at 2 s: the last 5 at 2 s against the 1 s baseline.
  EXPECT_NE(r.out.find("step 90/200  2.00 s/step vs base 1.00  slowdown x2.00 since step 6"), std::string::npos)
      << r.out;
  // MemAvailable 113.1 GiB - the run's 16 GiB floor.
  // 100 W over the 150 s sampled: 4.17 Wh; over steps 1..90 (119 s, 89 steps): 0.0371 Wh/step.
  EXPECT_NE(r.out.find("guard margin 97.1G  /home/u/runs/llama  ./job.sh --epochs 3\n"
                       "         energy 4.167 Wh since start, 0.0371 Wh/step\n"),
            std::string::npos)
      << r.out;
}

TEST(TopRuns, JsonAddsRunsWithoutChangingTheSchema) {
  RunRoot root;
  auto r = Top(root, "--json");
  ASSERT_EQ(r.rc, 0) << r.err;
  auto j = nlohmann::ordered_json::parse(r.out);
  EXPECT_EQ(j["schema"], "sparkops.top/1");
  ASSERT_EQ(j["runs"].size(), 1u) << r.out;
  const auto& run = j["runs"][0];
  EXPECT_EQ(run["pid"], 3100);
  EXPECT_EQ(run["uid"], ::geteuid());
  EXPECT_EQ(run["run_dir"], kRunDir);
  EXPECT_EQ(run["command"], "./job.sh --epochs 3");
  EXPECT_EQ(run["step"], 90);
  EXPECT_EQ(run["total_steps"], 200);
  EXPECT_NEAR(run["s_per_step"].get<double>(), 2.0, 0.01);
  EXPECT_NEAR(run["baseline_s"].get<double>(), 1.0, 0.01);
  EXPECT_EQ(run["baseline_from"], "log tail");
  EXPECT_NEAR(run["ratio"].get<double>(), 2.0, 0.02);
  EXPECT_EQ(run["min_available_bytes"], 16ull << 30);
  EXPECT_EQ(run["margin_bytes"], 118566368ll * 1024 - (16ll << 30));
  EXPECT_TRUE(j["runs_ignored"].empty());
  EXPECT_FALSE(j.contains("kernel"));  // no kernel log in the root
  // Energy: 100 W over 150 s, thermal.csv read whole; per step over steps 1..90 (119 s).
  EXPECT_NEAR(run["energy_wh"].get<double>(), 100.0 * 150 / 3600, 1e-6);
  EXPECT_EQ(run["energy_source"], "integral of power_w");
  EXPECT_EQ(run["energy_span_s"], 150);
  EXPECT_EQ(run["energy_from_start"], true);
  EXPECT_NEAR(run["wh_per_step"].get<double>(), 100.0 * 119 / 3600 / 89, 1e-6);
  EXPECT_FALSE(run.contains("energy_note"));

  root.Write("dev/kmsg", testing::ReadFileOrDie(Fixture("wedge") + "/dev/kmsg"));
  j = nlohmann::ordered_json::parse(Top(root, "--json").out);
  EXPECT_EQ(j["kernel"]["counts"]["xid"], 1);
  EXPECT_EQ(j["kernel"]["counts"]["nvrm_no_memory"], 2);
  ASSERT_EQ(j["kernel"]["recent"].size(), 4u) << j.dump();  // the last 4
  EXPECT_EQ(j["kernel"]["recent"][3]["kind"], "lockup");
  EXPECT_EQ(j["kernel"]["recent"][3]["usec"], 1990000042);
}

TEST(TopRuns, ALongThermalCsvIsReadAsItsHeaderAndTail) {
  RunRoot root;  // a row a second from 09:30:00: ~2,000 rows, more than the 64 KiB tail
  const std::string csv = ThermalCsv(-1800, 1);
  ASSERT_GT(csv.size(), 64u << 10);
  root.Write(std::string(kRunDir).substr(1) + "/thermal.csv", csv);
  auto j = nlohmann::ordered_json::parse(Top(root, "--json").out);
  ASSERT_EQ(j["runs"].size(), 1u) << j.dump();
  const auto& run = j["runs"][0];
  ASSERT_TRUE(run.contains("energy_wh")) << run.dump();
  EXPECT_EQ(run["energy_from_start"], false);
  const double span = run["energy_span_s"].get<double>();
  EXPECT_GT(span, 1000);
  EXPECT_LT(span, 1950);
  EXPECT_NEAR(run["energy_wh"].get<double>(), 100.0 * span / 3600, 1e-6);
  EXPECT_NEAR(run["wh_per_step"].get<double>(), 100.0 * 119 / 3600 / 89, 1e-6);
  auto once = Top(root, "--once");
  EXPECT_NE(once.out.find(fmt::format("Wh last {:.0f}m, 0.0371 Wh/step", span / 60)), std::string::npos) << once.out;
}

TEST(TopRuns, AThermalCsvThatIsALinkIsNotRead) {
  RunRoot root;
  const std::string dir = root.path() + kRunDir;
  std::filesystem::rename(dir + "/thermal.csv", dir + "/real.csv");
  std::filesystem::create_symlink("real.csv", dir + "/thermal.csv");
  auto j = nlohmann::ordered_json::parse(Top(root, "--json").out);
  ASSERT_EQ(j["runs"].size(), 1u) << j.dump();
  const auto& run = j["runs"][0];
  EXPECT_EQ(run["step"], 90);  // the rest of the run is read
  EXPECT_FALSE(run.contains("energy_wh")) << run.dump();
  EXPECT_FALSE(run.contains("wh_per_step")) << run.dump();
  EXPECT_NE(run["energy_note"].get<std::string>().find("symbolic link"), std::string::npos) << run.dump();
  EXPECT_EQ(Top(root, "--once").out.find(" Wh"), std::string::npos);
}

TEST(TopRuns, ARunDirectoryReachedThroughALinkIsNotRead) {
  for (const char* dir : {"/home/u/runs/link", "/home/v/runs/llama"}) {
    RunRoot root(dir);
    std::filesystem::create_directory_symlink("llama", root.path() + "/home/u/runs/link");
    std::filesystem::create_directory_symlink("u", root.path() + "/home/v");
    auto r = Top(root, "--json");
    ASSERT_EQ(r.rc, 0) << r.err;
    auto j = nlohmann::ordered_json::parse(r.out);
    EXPECT_TRUE(j["runs"].empty()) << dir << "\n" << r.out;
    ASSERT_EQ(j["runs_ignored"].size(), 1u) << r.out;
    EXPECT_NE(j["runs_ignored"][0].get<std::string>().find("link"), std::string::npos) << r.out;
    auto once = Top(root, "--once");
    EXPECT_NE(once.out.find("RUNS  0 live  (1 not shown"), std::string::npos) << once.out;
    EXPECT_EQ(once.out.find("job.sh"), std::string::npos) << once.out;
  }
}

// As root (CI): a ledger in the spool is its file owner's; owned by another user than the one its
// pid runs as, it is not believed; a run directory or log of a third user is not read.
TEST(TopRuns, AnotherUsersLedgerOrRunDirectoryIsNotRead) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to chown";
  {
    RunRoot root;
    ASSERT_EQ(::chown(root.ledger().c_str(), 65534, 65534), 0);  // pid 3100 runs as root
    auto j = nlohmann::ordered_json::parse(Top(root, "--json").out);
    EXPECT_TRUE(j["runs"].empty()) << j.dump();
  }
  {
    RunRoot root;  // the ledger is root's; the run directory another user's
    ASSERT_EQ(::chown((root.path() + kRunDir).c_str(), 65534, 65534), 0);
    auto j = nlohmann::ordered_json::parse(Top(root, "--json").out);
    EXPECT_TRUE(j["runs"].empty()) << j.dump();
    ASSERT_EQ(j["runs_ignored"].size(), 1u) << j.dump();
    EXPECT_NE(j["runs_ignored"][0].get<std::string>().find("owned by uid 65534"), std::string::npos) << j.dump();
  }
  {
    RunRoot root;  // only train.log is another user's: the run is shown without its steps
    ASSERT_EQ(::chown((root.path() + kRunDir + "/train.log").c_str(), 65534, 65534), 0);
    auto j = nlohmann::ordered_json::parse(Top(root, "--json").out);
    ASSERT_EQ(j["runs"].size(), 1u) << j.dump();
    EXPECT_FALSE(j["runs"][0].contains("step"));
    EXPECT_NE(j["runs"][0]["note"].get<std::string>().find("owned by uid 65534"), std::string::npos) << j.dump();
  }
  {
    RunRoot root;  // only thermal.csv is another user's: the run is shown without its energy
    ASSERT_EQ(::chown((root.path() + kRunDir + "/thermal.csv").c_str(), 65534, 65534), 0);
    auto j = nlohmann::ordered_json::parse(Top(root, "--json").out);
    ASSERT_EQ(j["runs"].size(), 1u) << j.dump();
    EXPECT_EQ(j["runs"][0]["step"], 90);
    EXPECT_FALSE(j["runs"][0].contains("energy_wh"));
    EXPECT_NE(j["runs"][0]["energy_note"].get<std::string>().find("owned by uid 65534"), std::string::npos) << j.dump();
  }
}

}  // namespace
}  // namespace sparkops
