// End to end over the synthetic run directories in tests/fixtures/runs (see make_fixtures.py
// there): what `sparkops analyze` reports, in text and JSON, and its exit statuses.
#include <gtest/gtest.h>

#include <cmath>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/timefmt.h"
#include "journal_writer.h"
#include "test_util.h"

namespace sparkops {
namespace {

using testing::Fixture;
using testing::RunInProcess;
using testing::TempDir;

std::string RunDir(const std::string& name) { return Fixture("runs/" + name); }
std::string Root() { return Fixture("runs/root"); }

nlohmann::json Json(const std::vector<std::string>& args) {
  auto r = RunInProcess(args, {{"TZ", "UTC"}});
  EXPECT_EQ(r.rc, 0) << r.err;
  return nlohmann::json::parse(r.out);
}

bool AnyContains(const nlohmann::json& arr, const std::string& needle) {
  for (auto& x : arr)
    if (x.get<std::string>().find(needle) != std::string::npos) return true;
  return false;
}

TEST(AnalyzeE2E, ThermalSlowdownIsOneThermalEventAtStep101) {
  auto j = Json({"analyze", "--root", Root(), RunDir("thermal"), "--json"});
  ASSERT_EQ(j["events"].size(), 1u) << j.dump(2);
  auto& e = j["events"][0];
  EXPECT_EQ(e["cause"], "thermal");
  EXPECT_EQ(e["start_step"], 101);  // the fixture's step time doubles after step 100
  EXPECT_EQ(e["end_step"], 200);
  EXPECT_NEAR(e["ratio"].template get<double>(), 2.0, 0.1);
  EXPECT_EQ(e["recovered"], false);
  EXPECT_TRUE(AnyContains(e["evidence"], "sw_thermal")) << e.dump(2);
  EXPECT_TRUE(AnyContains(e["ruled_out"], "contention"));
  EXPECT_TRUE(AnyContains(e["ruled_out"], "memory_pressure"));
  // the span starts at the last fast step: 30 s of loading + 100 steps of ~0.5 s (±4% jitter)
  std::string start = e["start"];
  EXPECT_EQ(start.substr(0, 17), "2026-11-29T10:01:") << start;
  int sec = std::stoi(start.substr(17, 2));
  EXPECT_TRUE(sec >= 18 && sec <= 22) << start;
  EXPECT_EQ(j["end"]["status"], "exit");
  EXPECT_EQ(j["log"]["time_source"], "arrival times (train.log)");
}

TEST(AnalyzeE2E, NewUncappedServerIsContention) {
  auto j = Json({"analyze", "--root", Root(), RunDir("contention"), "--json"});
  ASSERT_EQ(j["events"].size(), 1u) << j.dump(2);
  auto& e = j["events"][0];
  EXPECT_EQ(e["cause"], "contention");
  EXPECT_EQ(e["start_step"], 121);
  EXPECT_NEAR(e["ratio"].template get<double>(), 1.6, 0.08);
  EXPECT_TRUE(AnyContains(e["evidence"], "uncapped vllm"));
  EXPECT_TRUE(AnyContains(e["also"], "memory_pressure"));  // MemAvailable fell with it
  EXPECT_TRUE(AnyContains(e["ruled_out"], "thermal: no thermal reason bit"));
}

TEST(AnalyzeE2E, SteadyRunWithEvalSpikesHasNoEvent) {
  auto j = Json({"analyze", "--root", Root(), RunDir("steady_eval"), "--json"});
  EXPECT_EQ(j["events"].size(), 0u) << j.dump(2);
  EXPECT_EQ(j["spikes_ignored"]["evaluation"], 5);
  EXPECT_NE(j["verdict"].get<std::string>().find("Steady"), std::string::npos);
}

TEST(AnalyzeE2E, BootIdMismatchWithoutExitRecordIsAReboot) {
  auto r = RunInProcess({"analyze", "--root", Root(), RunDir("reboot")}, {{"TZ", "UTC"}});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("rebooted or lost power"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("2026-11-29T10:01:40.000Z  temp 88 °C"), std::string::npos) << r.out;
  auto j = Json({"analyze", "--root", Root(), RunDir("reboot"), "--json"});
  EXPECT_EQ(j["end"]["status"], "reboot");
  EXPECT_EQ(j["end"]["last_samples"].size(), 3u);
  // the same run read on the boot it started on: no reboot claimed
  TempDir root;
  root.Write("proc/sys/kernel/random/boot_id", "1f0e9b7c-3a2d-4e8f-8c6b-5d4a3b2c1e00\n");
  auto same = Json({"analyze", "--root", root.path(), RunDir("reboot"), "--json"});
  EXPECT_EQ(same["end"]["status"], "no_exit_record");
}

// issue 30: kill -9 of `sparkops run`: no exit record, the sentinel's supervisor_lost records. analyze
// says run was lost and the sentinel stopped the job (not "still going"), on the boot it started on.
TEST(AnalyzeE2E, SupervisorLostIsReadFromTheSentinelsRecords) {
  TempDir root, run;
  root.Write("proc/sys/kernel/random/boot_id", "1f0e9b7c-3a2d-4e8f-8c6b-5d4a3b2c1e00\n");  // the run's boot
  for (const char* f : {"train.log", "meta.json", "thermal.csv"})
    run.Write(f, testing::ReadFileOrDie(RunDir("reboot") + "/" + f));
  run.Write(
      "events.jsonl",
      R"({"time":"2026-11-29T10:01:45.000Z","type":"supervisor_lost","stage":"terminate","job_pgid":4242,)"
      R"("grace_s":10,"train_log_offset":1234})"
      "\n"
      R"({"time":"2026-11-29T10:01:55.000Z","type":"supervisor_lost","stage":"kill","job_pgid":4242,"grace_s":10})"
      "\n"
      R"({"time":"2026-11-29T10:01:55.200Z","type":"supervisor_lost","stage":"done","job_pgid":4242,"grace_s":10})"
      "\n");
  auto r = RunInProcess({"analyze", "--root", root.path(), run.path()}, {{"TZ", "UTC"}});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out.find("still going"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("end      sparkops run itself was killed (no exit record); its sentinel stopped the job: "
                       "SIGTERM to its process group at 2026-11-29T10:01:45.000Z, SIGKILL after the 10 s grace at "
                       "2026-11-29T10:01:55.000Z; the job was gone at 2026-11-29T10:01:55.200Z (killed;"),
            std::string::npos)
      << r.out;
  auto j = Json({"analyze", "--root", root.path(), run.path(), "--json"});
  EXPECT_EQ(j["end"]["status"], "supervisor_lost") << j["end"].dump(2);
  EXPECT_EQ(j["end"]["sentinel"]["terminate"], "2026-11-29T10:01:45.000Z");
  EXPECT_EQ(j["end"]["sentinel"]["kill"], "2026-11-29T10:01:55.000Z");
  EXPECT_EQ(j["end"]["sentinel"]["done"], "2026-11-29T10:01:55.200Z");
  EXPECT_EQ(j["end"]["sentinel"]["grace_s"], 10);
  EXPECT_NE(j["verdict"].get<std::string>().find("its sentinel stopped the job"), std::string::npos) << j["verdict"];
}

// issue 30: the issue's case end to end: a tqdm log of 400 steps of 0.5 s whose steps 60-107 ran at 2x
// (a hog right after warm-up). The slow stretch is found (not the baseline) and the warning says why.
TEST(AnalyzeE2E, ASlowStartIsFoundAndTheBaselineWarns) {
  TempDir d;
  std::string log;
  int64_t t_ms = 1795946430000;  // 2026-11-29T10:00:30Z
  for (int i = 1; i <= 400; ++i) {
    t_ms += static_cast<int64_t>(500 * (1 + 0.03 * std::sin(i * 1.7)) * (i >= 60 && i <= 107 ? 2 : 1));
    log += fmt::format("{}\te\t {:3d}%|   | {}/400 [00:00<00:00, 2.00it/s]\n", FormatUtcMillis(FromUnixMillis(t_ms)),
                       i * 100 / 400, i);
  }
  auto path = d.Write("train.log", log);
  auto j = Json({"analyze", "--log", path, "--json"});
  ASSERT_EQ(j["events"].size(), 1u) << j.dump(2);
  EXPECT_EQ(j["events"][0]["start_step"], 60);
  EXPECT_EQ(j["events"][0]["end_step"], 107);
  EXPECT_NEAR(j["events"][0]["ratio"].get<double>(), 2.0, 0.1);
  EXPECT_NEAR(j["baseline"]["cost"].get<double>(), 0.5, 0.03);
  ASSERT_EQ(j["warnings"].size(), 1u) << j["warnings"].dump();
  EXPECT_NE(j["warnings"][0].get<std::string>().find("are bimodal"), std::string::npos);
}

// issue 33: a run whose host froze (no exit record, a new boot id) with a pstore record from the
// crashed boot: analyze shows the last NVRM/Xid/lockup lines in text, JSON and the report.
TEST(AnalyzeE2E, RebootShowsTheLastKernelLinesTheFrozenBootLeft) {
  TempDir root;
  root.Write("proc/sys/kernel/random/boot_id", testing::ReadFileOrDie(Root() + "/proc/sys/kernel/random/boot_id"));
  root.Write("sys/fs/pstore/dmesg-efi-178902345601001",
             testing::ReadFileOrDie(Fixture("wedge") + "/sys/fs/pstore/dmesg-efi-178902345601001"));
  auto r = RunInProcess({"analyze", "--root", root.path(), RunDir("reboot")}, {{"TZ", "UTC"}});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("last kernel lines before it"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("/sys/fs/pstore/dmesg-efi-178902345601001: NVRM: nvCheckOkFailedNoLog"), std::string::npos)
      << r.out;
  auto j = Json({"analyze", "--root", root.path(), RunDir("reboot"), "--json"});
  ASSERT_EQ(j["end"]["kernel_lines"].size(), 3u) << j["end"].dump(2);
  EXPECT_NE(j["end"]["kernel_lines"][1].get<std::string>().find("NVRM: Xid (PCI:000f:01:00): 109"), std::string::npos);
  EXPECT_NE(j["end"]["kernel_lines"][2].get<std::string>().find("soft lockup"), std::string::npos);
  // Without pstore records (today's fixture root): no kernel lines, nothing invented.
  auto plain = Json({"analyze", "--root", Root(), RunDir("reboot"), "--json"});
  EXPECT_FALSE(plain["end"].contains("kernel_lines"));
}

// issue 33: the previous boot's kernel records from the persistent logs read as files: the systemd
// journal (a crashed boot's `system@...journal~`, only entries of the run's boot id; a compressed
// record is counted) and rsyslog's kern.log (the boot before the current one).
TEST(AnalyzeE2E, RebootShowsThePreviousBootsRecordsFromTheJournalAndKernLog) {
  TempDir root;
  root.Write("proc/sys/kernel/random/boot_id", testing::ReadFileOrDie(Root() + "/proc/sys/kernel/random/boot_id"));
  const std::string run_boot = "1f0e9b7c3a2d4e8f8c6b5d4a3b2c1e00";  // meta.json's, without dashes
  std::vector<testing::JournalEntryIn> entries = {
      {1795946000000000, run_boot, {"_TRANSPORT=kernel", "MESSAGE=Linux version 6.17.0-1008-nvidia"}, {}},
      {1795947667000000,
       run_boot,
       {"_TRANSPORT=kernel", "MESSAGE=NVRM: nvAssertFailedNoLog: Assertion failed: NV_ERR_NO_MEMORY"},
       {}},
      {1795947668000000,
       run_boot,
       {"_TRANSPORT=kernel", "MESSAGE=NVRM: Xid (PCI:000f:01:00): 109, pid=1"},
       {false, true}},
      {1795947669000000, run_boot, {"_TRANSPORT=stdout", "MESSAGE=NVRM: a program's own output"}, {}},
      {1795948000000000,
       "00112233445566778899aabbccddeeff",
       {"_TRANSPORT=kernel", "MESSAGE=NVRM: Xid 13 later boot"},
       {}},
  };
  root.Write("var/log/journal/4f2d/system@0006a1b2c3d4e5f6-0123456789abcdef.journal~",
             testing::JournalWriter(true).Build(entries, 2));
  root.Write("var/log/journal/4f2d/user-1000.journal", "not read: not the system journal");
  const std::string k = " spark-01 kernel: ";
  root.Write("var/log/kern.log", "Nov 29 10:00:00" + k + "[    0.000000] Linux version 6.17.0-1008-nvidia\n" +
                                     "Nov 29 10:41:09" + k +
                                     "[ 2469.000000] INFO: task python3:4821 blocked for more than 120 seconds.\n" +
                                     "Nov 29 11:02:00" + k + "[    0.000000] Linux version 6.17.0-1008-nvidia\n" +
                                     "Nov 29 11:02:05" + k + "[    5.000000] NVRM: Xid 31 in the current boot\n");
  auto j = Json({"analyze", "--root", root.path(), RunDir("reboot"), "--json"});
  const auto lines = j["end"]["kernel_lines"];
  ASSERT_EQ(lines.size(), 3u) << j["end"].dump(2);
  EXPECT_EQ(lines[0],
            "/var/log/journal/4f2d/system@0006a1b2c3d4e5f6-0123456789abcdef.journal~ 2026-11-29T10:21:07.000Z: NVRM: "
            "nvAssertFailedNoLog: Assertion failed: NV_ERR_NO_MEMORY");
  EXPECT_EQ(lines[1], "/var/log/journal: 1 compressed record not read");
  EXPECT_EQ(lines[2], "/var/log/kern.log: INFO: task python3:4821 blocked for more than 120 seconds.");
  auto r = RunInProcess({"analyze", "--root", root.path(), RunDir("reboot")}, {{"TZ", "UTC"}});
  EXPECT_NE(r.out.find("last kernel lines before it"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("/var/log/kern.log: INFO: task python3:4821 blocked"), std::string::npos) << r.out;
  auto html = RunInProcess({"analyze", "--root", root.path(), RunDir("reboot"), "--html", root.path() + "/r.html"});
  EXPECT_NE(testing::ReadFileOrDie(root.path() + "/r.html").find("1 compressed record not read"), std::string::npos);
}

// issue 33: kern.log rotated since the crashed boot (it starts in the current one): the previous
// boot's records come from kern.log.1, named as such.
TEST(AnalyzeE2E, RebootShowsThePreviousBootsRecordsFromARotatedKernLog) {
  TempDir root;
  root.Write("proc/sys/kernel/random/boot_id", testing::ReadFileOrDie(Root() + "/proc/sys/kernel/random/boot_id"));
  const std::string k = " spark-01 kernel: ";
  root.Write("var/log/kern.log.1",
             "Nov 29 10:00:00" + k + "[    0.000000] Linux version 6.17.0-1008-nvidia\n" + "Nov 29 10:41:07" + k +
                 "[ 2467.000000] NVRM: nvAssertFailedNoLog: Assertion failed: NV_ERR_NO_MEMORY\n");
  root.Write("var/log/kern.log", "Nov 29 11:02:00" + k + "[    0.000000] Linux version 6.17.0-1008-nvidia\n" +
                                     "Nov 29 11:02:05" + k + "[    5.000000] NVRM: Xid 31 in the current boot\n");
  auto j = Json({"analyze", "--root", root.path(), RunDir("reboot"), "--json"});
  ASSERT_EQ(j["end"]["kernel_lines"].size(), 1u) << j["end"].dump(2);
  EXPECT_EQ(j["end"]["kernel_lines"][0],
            "/var/log/kern.log.1: NVRM: nvAssertFailedNoLog: Assertion failed: NV_ERR_NO_MEMORY");
}

TEST(AnalyzeE2E, LogAndThermalFlagsWithoutARunDirectory) {
  auto r = RunInProcess({"analyze", "--log", RunDir("thermal") + "/train.log", "--thermal",
                         RunDir("thermal") + "/thermal.csv"},
                        {{"TZ", "UTC"}});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("cause: thermal"), std::string::npos) << r.out;
  // no thermal: the slowdown is still found, the cause cannot be
  auto bare = Json({"analyze", "--log", RunDir("thermal") + "/train.log", "--json"});
  ASSERT_EQ(bare["events"].size(), 1u);
  EXPECT_EQ(bare["events"][0]["cause"], "unknown");
  EXPECT_TRUE(AnyContains(bare["events"][0]["ruled_out"], "no thermal CSV"));
}

TEST(AnalyzeE2E, ZoneLessNvidiaSmiCsvFollowsTz) {
  // The thermal fixture as nvidia-smi would print it on a box at UTC+2 (local wall clock).
  TempDir d;
  std::string csv =
      "timestamp, temperature.gpu, power.draw [W], clocks.sm [MHz], clocks_event_reasons.sw_thermal_slowdown\n";
  for (int s = 0; s <= 180; s += 10) {
    bool hot = s >= 80;
    csv += fmt::format("2026/11/29 12:{:02d}:{:02d}.000, {}, {} W, {} MHz, {}\n", s / 60, s % 60, hot ? 88 : 75,
                       hot ? "84.00" : "86.00", hot ? 1650 : 2410, hot ? "Active" : "Not Active");
  }
  std::string path = d.Write("smi.csv", csv);
  std::string log = RunDir("thermal") + "/train.log";
  auto good = Json({"analyze", "--log", log, "--thermal", path, "--tz", "+02:00", "--json"});
  ASSERT_EQ(good["events"].size(), 1u);
  EXPECT_EQ(good["events"][0]["cause"], "thermal") << good.dump(2);
  EXPECT_EQ(good["thermal"]["format"], "nvidia-smi");
  EXPECT_TRUE(good["warnings"].empty());
  // read as UTC, the samples miss the run by two hours: say so, and do not guess a cause
  auto wrong = Json({"analyze", "--log", log, "--thermal", path, "--tz", "UTC", "--json"});
  EXPECT_EQ(wrong["events"][0]["cause"], "unknown");
  EXPECT_TRUE(AnyContains(wrong["warnings"], "do not overlap"));
}

TEST(AnalyzeE2E, UsageAndInputErrorsExit2NamingTheFile) {
  EXPECT_EQ(RunInProcess({"analyze"}).rc, 2);
  EXPECT_EQ(RunInProcess({"analyze", RunDir("thermal"), "--log", "x"}).rc, 2);
  auto missing = RunInProcess({"analyze", "--log", "/nonexistent/train.log"});
  EXPECT_EQ(missing.rc, 2);
  EXPECT_NE(missing.err.find("/nonexistent/train.log"), std::string::npos);
  auto notrun = RunInProcess({"analyze", Fixture("gb10")});
  EXPECT_EQ(notrun.rc, 2);
  EXPECT_NE(notrun.err.find("no train.log"), std::string::npos);
  TempDir d;
  std::string log = d.Write("train.log", "iter 1: loss 2.0, time 100.00ms, mfu 1.00%\n");
  std::string csv = d.Write("bad.csv", "timestamp,gpu_temp_c\n2026-11-29T10:00:00Z,42\n2026-11-29T10:00:10Z,warm\n");
  auto bad = RunInProcess({"analyze", "--log", log, "--thermal", csv});
  EXPECT_EQ(bad.rc, 2);
  EXPECT_NE(bad.err.find("bad.csv:3: column gpu_temp_c"), std::string::npos) << bad.err;
  d.Write("events.jsonl", "{\"time\": \"2026-11-29T10:00:00Z\", \"type\": \"exit\"}\nnot json\n");
  auto badev = RunInProcess({"analyze", d.path()});
  EXPECT_EQ(badev.rc, 2);
  EXPECT_NE(badev.err.find("events.jsonl:2"), std::string::npos) << badev.err;
  EXPECT_EQ(RunInProcess({"analyze", "--log", log, "--tz", "Nowhere"}).rc, 2);
}

// What a kill -9 of `run` (or a power loss) can leave: the last write of each file cut short.
// analyze still reads the directory (RunFault.KillMinus9AtRandomMomentsNeverLosesOrCorruptsRecords
// sees train.log's 1 MiB records torn; the small records of the other two files can be too).
TEST(AnalyzeE2E, RunDirectoryWhoseLastWritesWereCutShortIsAnalysed) {
  TempDir d;
  d.Write("train.log",
          "2026-11-29T10:00:00.000Z\to\titer 1: loss 2.0, time 100.00ms, mfu 1.00%\n"
          "2026-11-29T10:00:00.100Z\to\titer 2: loss 1.9, time 100.00ms, mfu 1.00%\n"
          "2026-11-29T10:00:00.200Z\to\titer 3: lo");
  d.Write("thermal.csv",
          "timestamp,gpu_temp_c,event\n2026-11-29T10:00:00.000Z,41,\n2026-11-29T10:00:00.100Z,42,\n2026-11-29T10:00:0");
  d.Write("events.jsonl", "{\"time\": \"2026-11-29T10:00:00.050Z\", \"type\": \"hot\"}\n{\"time\": \"2026-11-29T1");
  auto r = RunInProcess({"analyze", d.path(), "--json"});
  ASSERT_EQ(r.rc, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["thermal"]["samples"], 2) << j.dump(2);
  // The same damage followed by another record is not a torn write: still an input error.
  d.Write("events.jsonl", "{\"time\": \"2026-11-29T1\n{\"time\": \"2026-11-29T10:00:00.050Z\", \"type\": \"hot\"}\n");
  auto bad = RunInProcess({"analyze", d.path()});
  EXPECT_EQ(bad.rc, 2);
  EXPECT_NE(bad.err.find("events.jsonl:1"), std::string::npos) << bad.err;
}

TEST(AnalyzeE2E, FileNameThatIsNotUtf8GivesValidJson) {
  TempDir d;
  std::string log = d.Write("run\xff.log", "iter 1: loss 2.0, time 100.00ms, mfu 1.00%\n");
  auto r = RunInProcess({"analyze", "--log", log, "--json"});
  ASSERT_EQ(r.rc, 0) << r.err;
  nlohmann::json j;
  ASSERT_NO_THROW(j = nlohmann::json::parse(r.out)) << r.out;
  EXPECT_NE(r.out.find("run\uFFFD.log"), std::string::npos) << "U+FFFD in place of the byte: " << r.out;
}

TEST(AnalyzeE2E, EmptyOrUnknownLogIsNotAnError) {
  TempDir d;
  std::string log = d.Write("x.log", "hello\nworld\n");
  auto r = RunInProcess({"analyze", "--log", log});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("No training steps recognised"), std::string::npos);
}

}  // namespace
}  // namespace sparkops
