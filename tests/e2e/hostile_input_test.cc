// Hostile and careless input, one test per class (docs/reliability.md, "Hostile input"): numbers
// from the command line, files that are not regular files, an output over an input, a reused run
// directory, a missing --root, a log over the cap, two writers, missed slots, a full disk.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <thread>

#include "base/encoding.h"
#include "base/number_flag.h"
#include "cli/context.h"
#include "host/hostfs.h"
#include "host/write_file.h"
#include "telemetry/appender.h"
#include "telemetry/loop.h"
#include "test_util.h"

namespace sparkops {
namespace {

using testing::Fixture;
using testing::RunBinary;
using testing::RunInProcess;
using testing::TempDir;

TEST(NumbersFromTheCommandLine, OneParserRefusesNanInfGarbageAndOutOfRange) {
  const NumberRange secs{0.001, 86400, false, false, "seconds"};
  const NumberRange count{1, 1e12, false, true, ""};
  const NumberRange positive{0, 100, true, false, "GiB"};
  struct Case {
    const char* text;
    const NumberRange* range;
    std::optional<double> want;  // nullopt: refused
  } cases[] = {{"30", &secs, 30},      {"0.5", &secs, 0.5},     {" 2 ", &secs, 2},       {"+3", &secs, 3},
               {"1e3", &secs, 1000},   {"0.001", &secs, 0.001}, {"86400", &secs, 86400}, {"1e-10", &secs, {}},
               {"0", &secs, {}},       {"-1", &secs, {}},       {"86401", &secs, {}},    {"nan", &secs, {}},
               {"NaN", &secs, {}},     {"inf", &secs, {}},      {"-inf", &secs, {}},     {"infinity", &secs, {}},
               {"1e400", &secs, {}},   {"0x10", &secs, {}},     {"12abc", &secs, {}},    {"", &secs, {}},
               {"--", &secs, {}},      {"5", &count, 5},        {"1.5", &count, {}},     {"0", &count, {}},
               {"1e13", &count, {}},   {"0", &positive, {}},    {"-0", &positive, {}},   {"0.1", &positive, 0.1},
               {"100", &positive, 100}};
  for (const auto& c : cases) {
    auto v = ParseNumberFlag("--x", c.text, *c.range);
    if (!c.want) {
      ASSERT_FALSE(v) << "'" << c.text << "' gave " << *v;
      EXPECT_NE(v.error().message.find("--x"), std::string::npos) << v.error().message;
      EXPECT_NE(v.error().message.find(DescribeRange(*c.range)), std::string::npos) << v.error().message;
      continue;
    }
    ASSERT_TRUE(v) << c.text << ": " << v.error().message;
    EXPECT_DOUBLE_EQ(*v, *c.want) << c.text;
  }
  EXPECT_EQ(DescribeRange(secs), "between 0.001 and 86400 seconds");
  EXPECT_EQ(DescribeRange(positive), "more than 0 and at most 100 GiB");
}

TEST(NumbersFromTheCommandLine, EveryNumericFlagIsExit2NamingFlagValueAndRange) {
  struct Flag {
    std::vector<std::string> before;  // command and what it needs
    const char* flag;
    std::vector<const char*> bad;
    std::vector<std::string> after;
  } flags[] = {
      {{"sample"}, "--interval", {"nan", "inf", "1e-10", "0", "-1", "1e10", "x"}, {}},
      {{"sample"}, "--count", {"0", "-1", "1.5", "nan", "1e20"}, {}},
      {{"sample"}, "--duration", {"0", "-5", "nan", "inf", "1e10"}, {}},
      {{"run"}, "--interval", {"1e-10", "nan", "0"}, {"--", "true"}},
      {{"run"}, "--grace", {"nan", "1e10", "-1", "inf"}, {"--", "true"}},
      {{"exporter", "--once"}, "--preflight-interval", {"nan", "-1", "1e9"}, {}},
      {{"exporter", "--once"}, "--min-interval", {"nan", "-1", "inf"}, {}},
      {{"plan", "llama-3.1-8b"}, "--seq", {"0", "-1", "1.5", "nan", "1e30"}, {}},
      {{"plan", "llama-3.1-8b"}, "--batch", {"0", "nan"}, {}},
      {{"plan", "llama-3.1-8b"}, "--lora-rank", {"0", "inf"}, {}},
      {{"plan", "llama-3.1-8b"}, "--lora-dropout", {"nan", "1", "-0.1"}, {}},
      {{"plan", "llama-3.1-8b"}, "--budget-gib", {"nan", "0", "-4", "inf"}, {}},
      {{"plan", "llama-3.1-8b"}, "--reserve-gib", {"nan", "-1", "inf"}, {}},
  };
  for (const auto& f : flags) {
    for (const char* v : f.bad) {
      std::vector<std::string> args = {"--root", Fixture("gb10")};
      args.insert(args.end(), f.before.begin(), f.before.end());
      args.insert(args.end(), {f.flag, v});
      args.insert(args.end(), f.after.begin(), f.after.end());
      auto r = RunInProcess(args);
      EXPECT_EQ(r.rc, 2) << f.flag << " " << v << ": " << r.err;
      EXPECT_NE(r.err.find(std::string(f.flag) + " " + v), std::string::npos) << r.err;
      EXPECT_NE(r.err.find("must be"), std::string::npos) << r.err;
    }
  }
}

// Flags whose value is text with a grammar: every hostile value is exit 2 naming the flag, before
// anything starts (a `run` job never runs on a mistyped --plan-args).
TEST(TextFlags, HostileValuesAreExit2NamingTheFlagBeforeAnythingStarts) {
  TempDir d;
  const std::string marker = d.path() + "/job-ran";
  std::string log = d.Write("train.log", "step 1 loss 2\nstep 2 loss 1.9\n");
  struct Case {
    std::vector<std::string> before;
    const char* flag;
    std::vector<std::string> bad;
    std::vector<std::string> after;
  } cases[] = {
      {{"guard"},
       "--min-available",
       {"", "nan", "inf", "-1", "0", "0%", "100%", "200%", "1e30G", "5x", "18446744073709551616"},
       {}},
      {{"run", "--out", d.path() + "/r1"}, "--min-available", {"", "nan", "-8G", "6%%"}, {"--", "touch", marker}},
      {{"analyze", "--log", log}, "--step-format", {"", "nan", "x{", "{nope}", std::string(3000, 'a')}, {}},
      {{"run", "--out", d.path() + "/r2"},
       "--plan-args",
       {"", "--nonsense", "llama-3.1-8b --seq nan", "no-such-model-xyz", "llama-3.1-8b --method nope"},
       {"--", "touch", marker}},
  };
  for (const auto& c : cases) {
    for (const std::string& v : c.bad) {
      std::vector<std::string> args = {"--root", Fixture("gb10"), "--nvml", "none", "--nvidia-smi", "none"};
      args.insert(args.end(), c.before.begin(), c.before.end());
      args.insert(args.end(), {c.flag, v});
      args.insert(args.end(), c.after.begin(), c.after.end());
      auto r = RunInProcess(args);
      EXPECT_EQ(r.rc, 2) << c.flag << " '" << v.substr(0, 40) << "': " << r.err;
      EXPECT_NE(r.err.find(c.flag), std::string::npos) << r.err;
      EXPECT_FALSE(std::filesystem::exists(marker)) << c.flag << " '" << v << "': the job ran";
    }
  }
}

// Byte counts near 2^64 (a meminfo of 2^54 - 1 kB) print as the unsigned numbers they are in every
// format: never -1, never wrapped, never a signed overflow.
TEST(LargestByteCounts, PrintUnsignedInEveryFormat) {
  TempDir d;
  d.Write("root/proc/meminfo",
          "MemTotal: 18014398509481983 kB\nMemFree: 18014398509481983 kB\n"
          "MemAvailable: 18014398509481983 kB\nCached: 0 kB\nBuffers: 0 kB\nShmem: 0 kB\n");
  const std::vector<std::string> g = {"--root", d.path() + "/root", "--nvml", "none", "--nvidia-smi", "none"};
  auto with = [&](std::vector<std::string> rest) {
    std::vector<std::string> a = g;
    a.insert(a.end(), rest.begin(), rest.end());
    return RunInProcess(a);
  };
  auto ex = with({"exporter", "--once"});
  EXPECT_NE(ex.out.find("sparkops_memory_total_bytes 18446744073709550592\n"), std::string::npos) << ex.out;
  EXPECT_NE(ex.out.find("sparkops_memory_available_bytes 18446744073709550592\n"), std::string::npos);
  auto csv = with({"sample", "--count", "1"});
  EXPECT_NE(csv.out.find(",17179869184.000,17179869184.000,"), std::string::npos) << csv.out;
  const std::regex minus_one("(^|[ ,\n])-1([ ,\n.]|$)");
  for (const auto& r : {ex, csv}) EXPECT_FALSE(std::regex_search(r.out, minus_one)) << r.out;
}

TEST(NumbersFromTheCommandLine, DurationsConvertToIntegerTimeWithoutOverflow) {
  EXPECT_EQ(SecondsToDuration(0.001), std::chrono::milliseconds(1));
  EXPECT_EQ(SecondsToDuration(1e-12), std::chrono::nanoseconds(1));  // never 0 for a positive value
  EXPECT_EQ(SecondsToDuration(366.0 * 86400), std::chrono::seconds(366LL * 86400));
  EXPECT_GT(SecondsToDuration(1e300).count(), 0);  // clamped, not wrapped negative
  EXPECT_EQ(SecondsToDuration(std::nan("")).count(), 0);
  // A short --duration ends after about that long, with more than one row.
  auto t0 = std::chrono::steady_clock::now();
  auto r = RunInProcess({"--root", Fixture("gb10"), "sample", "--interval", "0.05", "--duration", "0.3"});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(3));
  size_t rows = static_cast<size_t>(std::count(r.out.begin(), r.out.end(), '\n'));
  EXPECT_GE(rows, 4u);  // header + ~6 rows
}

class Fifo {
 public:
  explicit Fifo(const std::string& path) : path_(path) { EXPECT_EQ(::mkfifo(path.c_str(), 0600), 0); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

TEST(FilesThatAreNotRegularFiles, AreRefusedAtOnceNamingWhatTheyAre) {
  TempDir d;
  Fifo fifo(d.path() + "/fifo");
  std::string log = d.Write("train.log", "step 1 loss 2\nstep 2 loss 1.9\n");
  struct Case {
    std::vector<std::string> args;
    const char* what;
  } cases[] = {
      {{"analyze", "--log", "/dev/zero"}, "a character device"},
      {{"analyze", "--log", log, "--thermal", "/dev/zero"}, "a character device"},
      {{"analyze", "--log", d.path()}, "a directory"},
      {{"oom", "--log", fifo.path()}, "a FIFO"},
      {{"oom", "--log", "/dev/zero"}, "a character device"},
      {{"preflight", "--only", "G10", "--config", fifo.path()}, "a FIFO"},
      {{"plan", "llama-3.1-8b", "--budget-gib", "100"}, nullptr},  // control: runs
  };
  for (const auto& c : cases) {
    std::vector<std::string> args = {"--root", Fixture("gb10")};
    args.insert(args.end(), c.args.begin(), c.args.end());
    auto t0 = std::chrono::steady_clock::now();
    auto r = RunBinary(args, {}, 20000);
    EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(5)) << c.args[0];
    if (!c.what) {
      EXPECT_EQ(r.rc, 0) << r.err;
      continue;
    }
    EXPECT_EQ(r.rc, 2) << c.args[0] << " " << c.args[2];
    EXPECT_NE((r.err + r.out).find(c.what), std::string::npos) << r.err << r.out;  // preflight: on its G10 line
  }
  // Shared objects of a site-packages that are a FIFO nobody writes to, /dev/zero and a directory:
  // preflight's ELF reader names each (G1 blames the package), never blocks in open() or reads forever.
  d.Write("site/evil-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: evil\nVersion: 1.0\n");
  d.Write("site/evil-1.0.dist-info/RECORD", "evil/fifo.so,,\nevil/zero.so,,\nevil/dir.so,,\n");
  std::filesystem::create_directories(d.path() + "/site/evil");
  Fifo so_fifo(d.path() + "/site/evil/fifo.so");
  ASSERT_EQ(::symlink("/dev/zero", (d.path() + "/site/evil/zero.so").c_str()), 0);
  std::filesystem::create_directories(d.path() + "/site/evil/dir.so");
  auto t0 = std::chrono::steady_clock::now();
  auto pf = RunBinary({"--root", Fixture("gb10"), "--json", "preflight", "--only", "G1", "--site-packages",
                       d.path() + "/site"},
                      {}, 20000);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(5));
  for (auto [so, what] : {std::pair{"fifo.so", "a FIFO"}, {"zero.so", "a character device"}, {"dir.so", "a directory"}})
    EXPECT_NE(pf.out.find(std::string(so) + ": " + what + ", not a regular file"), std::string::npos)
        << so << "\n"
        << pf.out << pf.err;
  // An output FIFO nobody reads, and a FIFO as the NVML library: no hang.
  auto out = RunBinary({"--root", Fixture("gb10"), "sample", "--count", "1", "--out", fifo.path()}, {}, 20000);
  EXPECT_EQ(out.rc, 2) << out.err;
  EXPECT_NE(out.err.find("a FIFO with no reader"), std::string::npos) << out.err;
  auto nvml = RunBinary({"--root", Fixture("gb10"), "--nvml", fifo.path(), "sample", "--count", "1"}, {}, 20000);
  EXPECT_EQ(nvml.rc, 0) << nvml.err;
  EXPECT_NE(nvml.err.find("not a regular file"), std::string::npos) << nvml.err;
}

TEST(FilesThatAreNotRegularFiles, AStreamedFifoIsReadAndOneWithNoWriterIsAnError) {
  TempDir d;
  Fifo fifo(d.path() + "/fifo");
  auto t0 = std::chrono::steady_clock::now();
  auto none = OpenInput(fifo.path(), InputKind::kRegularOrPipe, 200);
  ASSERT_FALSE(none);
  EXPECT_NE(none.error().message.find("no writer"), std::string::npos) << none.error().message;
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(2));
  std::thread writer([&] { std::ofstream(fifo.path()) << "step 1 loss 2\n"; });
  auto some = OpenInput(fifo.path(), InputKind::kRegularOrPipe, 10000);
  writer.join();
  ASSERT_TRUE(some) << some.error().message;
  char buf[64];
  EXPECT_GT(::read(*some, buf, sizeof buf), 0);
  ::close(*some);
  auto refused = OpenInput(fifo.path(), InputKind::kRegular, 200);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().kind, Error::Kind::kInput);
}

TEST(OutputEqualToInput, TheReportNeverOverwritesTheLog) {
  TempDir d;
  const std::string text = "step 1 loss 2\nstep 2 loss 1.9\nstep 3 loss 1.8\n";
  std::string log = d.Write("train.log", text);
  ASSERT_EQ(::symlink(log.c_str(), (d.path() + "/link.html").c_str()), 0);
  ASSERT_EQ(::link(log.c_str(), (d.path() + "/hard.html").c_str()), 0);
  for (std::string out : {log, d.path() + "/link.html", d.path() + "/hard.html", d.path() + "/./train.log"}) {
    auto r = RunInProcess({"analyze", "--log", log, "--html", out});
    EXPECT_EQ(r.rc, 2) << out;
    EXPECT_NE(r.err.find("is the input"), std::string::npos) << r.err;
    EXPECT_EQ(testing::ReadFileOrDie(log), text);
  }
  auto ok = RunInProcess({"analyze", "--log", log, "--html", d.path() + "/report.html"});
  EXPECT_EQ(ok.rc, 0) << ok.err;
}

TEST(ReusedRunDirectory, HoldingAnyFileOfAnotherRunIsRefused) {
  for (const char* f : {"events.jsonl", "thermal.csv", "meta.json"}) {
    TempDir d;
    std::string before = "{\"type\":\"exit\"}\n";
    d.Write(std::string("run/") + f, before);
    auto r = RunBinary({"--root", Fixture("gb10"), "run", "--out", d.path() + "/run", "--", "true"});
    EXPECT_EQ(r.rc, 2) << f << ": " << r.err;
    EXPECT_NE(r.err.find(std::string("already holds a run (") + f + ")"), std::string::npos) << r.err;
    EXPECT_EQ(testing::ReadFileOrDie(d.path() + "/run/" + f), before);
  }
}

TEST(RootThatDoesNotExist, IsExit2) {
  TempDir d;
  std::string file = d.Write("f", "x");
  for (const std::string& root : {d.path() + "/missing", file}) {
    auto r = RunInProcess({"--root", root, "preflight"});
    EXPECT_EQ(r.rc, 2) << root;
    EXPECT_NE(r.err.find("--root " + root), std::string::npos) << r.err;
  }
  EXPECT_EQ(RunInProcess({"--root", d.path(), "plan", "llama-3.1-8b", "--budget-gib", "100"}).rc, 0);
}

TEST(LogOverTheCap, OomReadsTheTailWhereTheErrorIs) {
  TempDir d;
  std::string path = d.path() + "/train.log";
  {
    std::ofstream f(path);
    std::string line(1023, 'x');
    line += '\n';
    for (int i = 0; i < 40 * 1024; ++i) f << line;  // 40 MiB
    f << "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.\n";
  }
  auto r = RunInProcess({"oom", "--log", path});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.err.find("read its last 32 MiB"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("tried to allocate 2.00 GiB"), std::string::npos) << r.out;
}

TEST(TwoWriters, ASecondSamplerOnTheSameFileIsRefusedNamingTheHolder) {
  TempDir d;
  std::string out = d.path() + "/t.csv";
  pid_t first = testing::SpawnSparkops({"--root", Fixture("gb10"), "sample", "--interval", "0.05", "--out", out});
  ASSERT_GT(first, 0);
  for (int i = 0; i < 200; ++i) {  // until the first has written its header
    struct stat st {};
    if (::stat(out.c_str(), &st) == 0 && st.st_size > 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  auto second = RunBinary({"--root", Fixture("gb10"), "sample", "--count", "1", "--out", out});
  ::kill(first, SIGTERM);
  int status = 0;
  ::waitpid(first, &status, 0);
  EXPECT_EQ(second.rc, 2) << second.err;
  EXPECT_NE(second.err.find("already being written by"), std::string::npos) << second.err;
  // Under qemu the holder is the emulator process, whose pid is the one spawned.
  EXPECT_NE(second.err.find("process " + std::to_string(first)), std::string::npos) << second.err;
  // Once the first is gone the file takes a writer again.
  EXPECT_EQ(RunBinary({"--root", Fixture("gb10"), "sample", "--count", "1", "--out", out}).rc, 0);
  EXPECT_EQ(FindFlockHolder("1: FLOCK  ADVISORY  WRITE 4242 fd:01:77 0 EOF\n", 0xfd, 1, 77), 4242);
  EXPECT_EQ(FindFlockHolder("1: FLOCK  ADVISORY  WRITE 4242 fd:01:77 0 EOF\n", 0xfd, 1, 78), std::nullopt);
  EXPECT_EQ(FindFlockHolder("1: -> FLOCK  ADVISORY  WRITE 9 fd:01:77 0 EOF\n", 0xfd, 1, 77), std::nullopt);
  EXPECT_EQ(FindFlockHolder("garbage\n2: POSIX ADVISORY WRITE 1 00:00:1 0 EOF\n", 0, 0, 1), std::nullopt);
}

TEST(MissedSlots, AreCountedAndRecordedOnTheNextRow) {
  std::ostringstream out, err;
  Context ctx{{"/", "none", "none", false}, HostFs(Fixture("gb10")), {}, out, err};
  Sampler sampler(ctx);
  EventDetector det;
  std::vector<std::vector<std::string>> events;
  auto r = SampleLoop(sampler, det, {0.02, 3, 0}, {}, [&](const Sample& s) -> Result<void> {
    events.push_back(s.events);
    if (events.size() == 1) std::this_thread::sleep_for(std::chrono::milliseconds(110));  // ~5 slots late
    return {};
  });
  ASSERT_TRUE(r);
  ASSERT_EQ(events.size(), 3u);
  std::string missed;
  for (const auto& e : events[1])
    if (e.rfind("missed_slots:", 0) == 0) missed = e;
  ASSERT_FALSE(missed.empty());
  EXPECT_GE(std::stoi(missed.substr(13)), 3);
  for (const auto& e : events[2]) EXPECT_NE(e.rfind("missed_slots:", 0), 0u) << e;
}

TEST(Encodings, Utf16IsNamedAndAUtf8BomKeepsStepOne) {
  using namespace std::string_view_literals;
  struct Case {
    std::string_view head;
    const char* want;  // nullptr: UTF-8 / ASCII
  } cases[] = {{"\xFF\xFEi\0t\0"sv, "UTF-16 little-endian text (byte-order mark"},
               {"\xFE\xFF\0i\0t"sv, "UTF-16 big-endian text (byte-order mark"},
               {"\xFF\xFE\0\0i\0\0\0"sv, "UTF-32 little-endian"},
               {"\0\0\xFE\xFF"sv, "UTF-32 big-endian"},
               {"i\0t\0e\0r\0 \0"
                "1\0"sv,
                "UTF-16 little-endian text (no byte-order mark"},
               {"\0i\0t\0e\0r\0 \0"
                "1"sv,
                "UTF-16 big-endian text (no byte-order mark"},
               {"\xEF\xBB\xBFiter 1: loss"sv, nullptr},
               {"iter 1: loss 2.0\n"sv, nullptr},
               {"i\0"sv, nullptr},
               {""sv, nullptr},
               {"\xC3\xA9t\xC3\xA9 ascii and UTF-8"sv, nullptr}};
  for (const auto& c : cases) {
    auto d = DescribeNonUtf8(c.head);
    if (!c.want) {
      EXPECT_FALSE(d) << *d;
      continue;
    }
    ASSERT_TRUE(d) << c.want;
    EXPECT_NE(d->find(c.want), std::string::npos) << *d;
  }
  TempDir dir;
  const std::string lines = "iter 1: loss 2.0, time 100.00ms, mfu 1.00%\niter 2: loss 1.9, time 100.00ms, mfu 1.00%\n";
  std::string bom = dir.Write("bom.log", std::string(kUtf8Bom) + lines);
  auto j = RunInProcess({"analyze", "--log", bom, "--json"});
  ASSERT_EQ(j.rc, 0) << j.err;
  EXPECT_NE(j.out.find("\"steps\": 2"), std::string::npos) << j.out;
  std::string utf16 = "\xFF\xFE";
  for (char ch : lines) utf16 += std::string{ch, '\0'};
  std::string wide = dir.Write("wide.log", utf16);
  auto r = RunInProcess({"analyze", "--log", wide});
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("UTF-16 little-endian"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("iconv"), std::string::npos) << r.err;
}

/// Runs `script` in a private mount namespace with a small tmpfs at $D (root only; skipped elsewhere).
testing::RunOutput InSmallTmpfs(const std::string& dir, const std::string& size, const std::string& script) {
  std::string sh = "mount -t tmpfs -o size=" + size + " tmpfs '" + dir + "' || exit 77; D='" + dir + "'; " + script;
  std::string cmd = "unshare -m sh -c \"$SCRIPT\"";
  testing::RunOutput r;
  ::setenv("SCRIPT", sh.c_str(), 1);
  FILE* p = ::popen((cmd + " 2>&1").c_str(), "r");
  char buf[4096];
  size_t n;
  while (p && (n = fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  int st = p ? ::pclose(p) : -1;
  ::unsetenv("SCRIPT");
  r.rc = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

TEST(DiskFull, RunMarksTheGapAndExitsNonZeroAndNoTemporaryIsLeft) {
  if (::geteuid() != 0 || !testing::TargetEmulator().empty()) GTEST_SKIP() << "needs root (mount) and a native build";
  TempDir d;
  std::string bin = testing::SparkopsBin();
  // The job prints ~600 KB into a 256 KiB file system, then exits 0.
  auto r = InSmallTmpfs(d.path(), "256k",
                        "'" + bin + "' --root '" + Fixture("gb10") +
                            "' run --interval 0.05 --out \"$D/run\" -- sh -c "
                            "'i=0; while [ $i -lt 6000 ]; do echo \"step $i loss 1.0 "
                            "padding-padding-padding-padding-padding-padding-padding-padding\"; i=$((i+1)); done'; "
                            "echo rc=$?; ls -a \"$D/run\"");
  if (r.rc == 77 || r.out.find("Operation not permitted") != std::string::npos) GTEST_SKIP() << r.out;
  EXPECT_NE(r.out.find("rc=1"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("could not be written"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find(".tmp"), std::string::npos) << r.out;
}

TEST(DiskFull, WholeFileWritesLeaveNoTemporaryAndKeepTheOldFile) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root (mount)";
  TempDir d;
  TempDir src;
  std::string log = src.Write("train.log", "step 1 loss 2\nstep 2 loss 1.9\n");
  std::string bin = testing::SparkopsBin();
  std::string emu;
  for (const auto& e : testing::TargetEmulator()) emu += "'" + e + "' ";
  auto r = InSmallTmpfs(d.path(), "16k",
                        "echo old > \"$D/r.html\"; head -c 12000 /dev/zero > \"$D/fill\"; " + emu + "'" + bin +
                            "' analyze --log '" + log +
                            "' --html \"$D/r.html\"; echo rc=$?; ls -a \"$D\"; cat \"$D/r.html\"");
  if (r.rc == 77 || r.out.find("Operation not permitted") != std::string::npos) GTEST_SKIP() << r.out;
  EXPECT_NE(r.out.find("rc=1"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("No space left on device"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find(".tmp"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\nold\n"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace sparkops
