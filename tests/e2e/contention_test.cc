// Host contention end to end with real processes (issue #24): a plain training loop under
// `sparkops run --interval 1`, two real CPU-bound processes started outside the job for a window
// mid-run, and `sparkops analyze --json` naming cpu_contention with the hogs' pids in evidence.
//
// HogsStartedOutsideTheJobAreNamed uses real processes; analyze judges by who took the job's
// CPU (issue 30), so a host whose PSI is already saturated still gives a result; only a baseline
// too noisy for the slowdown to stand out skips, saying so. FixtureHostDrivesTheSamePipeline
// runs the same path deterministically: the job itself writes a fixture /proc (PSI and two hogs'
// stat and io files) that `run --root` samples.
//
// The job and the hogs are pinned to one CPU (sched_setaffinity; sparkops itself is not), so the
// hogs take two thirds of the job's CPU whatever the machine's core count and whatever else runs
// (ctest -j2): the step time doubles or triples, and `others_on_job_cpus` rises. The job is
// bash and the hogs are host programs, so under qemu-user only sparkops and this test are emulated.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <thread>

#include "base/strings.h"
#include "host/hostfs.h"
#include "host/pressure.h"
#include "test_util.h"

namespace sparkops {
namespace {

using Clock = std::chrono::steady_clock;
using testing::ReadFileOrDie;
using testing::TempDir;

/// A process started on CPU `cpu` only; -1 when fork fails.
pid_t StartPinned(int cpu, const char* path, const std::vector<const char*>& argv) {
  const pid_t pid = ::fork();
  if (pid != 0) return pid;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  if (::sched_setaffinity(0, sizeof set, &set) != 0) ::_exit(126);
  std::vector<char*> args;
  for (const char* a : argv) args.push_back(const_cast<char*>(a));
  args.push_back(nullptr);
  ::execv(path, args.data());
  ::_exit(127);
}

/// The tests that pin processes to one CPU take turns: ctest -j2 runs two at once, both pick the
/// same CPU, and each would then see the other's job as a hog on it.
class PinnedTurn {
 public:
  PinnedTurn() {
    const std::string path = (std::filesystem::temp_directory_path() / "sparkops-e2e-pinned.lock").string();
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd_ >= 0)
      while (::flock(fd_, LOCK_EX) != 0 && errno == EINTR) {}
  }
  ~PinnedTurn() {
    if (fd_ >= 0) ::close(fd_);
  }
  PinnedTurn(const PinnedTurn&) = delete;
  PinnedTurn& operator=(const PinnedTurn&) = delete;

 private:
  int fd_ = -1;
};

/// Each pid's highest `cores` in the host_contention records from `from` to `to` (ISO UTC
/// times of one format, so they compare as text).
std::map<int, double> MaxCoresOutside(const std::string& events, const std::string& from, const std::string& to) {
  std::map<int, double> out;
  for (auto line : SplitLines(events)) {
    auto e = nlohmann::json::parse(line, nullptr, false);
    if (!e.is_object() || e["type"] != "host_contention" || !e["top"].is_array()) continue;
    const std::string t = e["time"];
    if (t < from || t > to) continue;
    for (const auto& c : e["top"]) {
      double& m = out[c["pid"].get<int>()];
      m = std::max(m, c["cores"].get<double>());
    }
  }
  return out;
}

/// Waits for `pid` until `deadline`; its wait status, or -1 (then it is killed).
int WaitUntil(pid_t pid, Clock::time_point deadline) {
  int status = 0;
  while (Clock::now() < deadline) {
    if (::waitpid(pid, &status, WNOHANG) == pid) return status;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ::kill(pid, SIGKILL);
  ::waitpid(pid, &status, 0);
  return -1;
}

TEST(ContentionEndToEnd, HogsStartedOutsideTheJobAreNamed) {
  PinnedTurn turn;
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  ASSERT_EQ(::sched_getaffinity(0, sizeof allowed, &allowed), 0);
  int cpu = -1;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &allowed)) cpu = c;
  ASSERT_GE(cpu, 0);
  const char* hog = ::access("/usr/bin/sha256sum", X_OK) == 0 ? "/usr/bin/sha256sum" : nullptr;
  if (!hog) GTEST_SKIP() << "no /usr/bin/sha256sum to use as a CPU-bound process";

  TempDir d;
  const std::string dir = d.path() + "/r";
  // ~0.1 s of CPU per step on an idle core; 30 s in all: warm-up and baseline (analyze takes the
  // first ~30 % of the steps), the hogs' 14 s, recovery.
  const std::string job =
      "end=$((SECONDS+30)); i=0; while ((SECONDS<end)); do for ((j=0;j<60000;j++)); do :; done; "
      "i=$((i+1)); echo \"step $i loss 1.0\"; done";
  const auto t0 = Clock::now();
  const pid_t run = testing::SpawnSparkops({"run", "--out", dir, "--interval", "1", "--", "bash", "-c", job},
                                           {d.path() + "/stdout", d.path() + "/stderr"});
  ASSERT_GT(run, 0);
  int job_pid = -1;
  while (job_pid < 0 && Clock::now() < t0 + std::chrono::seconds(15)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    if (!std::filesystem::exists(dir + "/meta.json")) continue;
    auto meta = nlohmann::json::parse(ReadFileOrDie(dir + "/meta.json"), nullptr, false);
    if (meta.is_object() && meta["pid"].is_number_integer()) job_pid = meta["pid"].get<int>();
  }
  if (job_pid < 0) {
    WaitUntil(run, Clock::now());
    FAIL() << "run wrote no meta.json with the job's pid in 15 s: " << ReadFileOrDie(d.path() + "/stderr");
  }
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(cpu, &one);
  if (::sched_setaffinity(job_pid, sizeof one, &one) != 0) {
    const int err = errno;
    WaitUntil(run, Clock::now());
    FAIL() << "pinning the job (pid " << job_pid << "): " << std::strerror(err);
  }

  std::this_thread::sleep_until(t0 + std::chrono::seconds(8));
  std::vector<pid_t> hogs;
  for (int i = 0; i < 2; ++i) hogs.push_back(StartPinned(cpu, hog, {"sha256sum", "/dev/zero"}));
  std::this_thread::sleep_until(t0 + std::chrono::seconds(22));
  for (pid_t h : hogs)
    if (h > 0) ::kill(h, SIGKILL);
  for (pid_t h : hogs)
    if (h > 0) ::waitpid(h, nullptr, 0);
  const int status = WaitUntil(run, t0 + std::chrono::seconds(45));
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
      << "run: status " << status << ": " << ReadFileOrDie(d.path() + "/stderr");
  for (pid_t h : hogs) ASSERT_GT(h, 0);

  const std::string events = ReadFileOrDie(dir + "/events.jsonl");
  auto r = testing::RunBinary({"analyze", dir, "--json"});
  ASSERT_EQ(r.rc, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  const nlohmann::json* found = nullptr;
  for (const auto& e : j["events"])
    if (e["cause"] == "cpu_contention") found = &e;
  if (!found) {
    // Issue 30: a host already saturated (PSI 95 %) is no excuse: analyze judges by who took the
    // job's CPU (others_on_job_cpus against job_cores), not by PSI's rise. Only a baseline too
    // noisy for a doubled step time to stand out is not a meaningful result.
    double before = 0;
    const std::string csv = ReadFileOrDie(dir + "/thermal.csv");
    auto rows = SplitLines(csv);
    std::vector<std::string_view> head = Split(rows.empty() ? std::string_view() : rows[0], ',');
    const auto col = std::find(head.begin(), head.end(), "cpu_pressure_pct") - head.begin();
    for (size_t i = 4; i < rows.size() && i < 9; ++i) {  // samples 4-8 s after the start: before the hogs
      auto cells = Split(rows[i], ',');
      if (static_cast<size_t>(col) < cells.size()) before = std::max(before, ParseDouble(cells[col]).value_or(0));
    }
    // How much of its CPU the job lost: its share before the hogs (samples 4-8 s) against their
    // window (samples 12-20 s); a loss smaller than the noisy baseline's threshold cannot show.
    const auto jc = std::find(head.begin(), head.end(), "job_cores") - head.begin();
    auto share = [&](size_t from, size_t to) {
      std::vector<double> v;
      for (size_t i = from; i < rows.size() && i < to; ++i) {
        auto cells = Split(rows[i], ',');
        if (static_cast<size_t>(jc) < cells.size())
          if (auto x = ParseDouble(cells[jc])) v.push_back(*x);
      }
      std::sort(v.begin(), v.end());
      return v.empty() ? 0.0 : v[v.size() / 2];
    };
    const double lost = share(12, 21) > 0 ? share(4, 9) / share(12, 21) : 0;
    const double threshold = j["baseline"].value("threshold_ratio", 0.0);
    if (threshold > 2.5 || lost < 1.1 * threshold)
      GTEST_SKIP() << "the baseline was too noisy for the hogs' window to stand out (threshold " << threshold
                   << "×, the job's CPU share fell only " << lost << "×; CPU pressure " << before
                   << " % before the hogs); analyze said " << j["events"].dump();
    FAIL() << "no cpu_contention episode; CPU pressure before the hogs " << before << " %\n"
           << j.dump(2) << "\n"
           << events;
  }
  const std::string evidence = (*found)["evidence"].dump();
  EXPECT_NE(evidence.find("others took"), std::string::npos) << evidence;  // judged by the job's CPU
  EXPECT_NE(evidence.find("of its 1 CPU"), std::string::npos) << evidence;
  // Evidence names the 3 outside processes with the highest cores in the episode's
  // host_contention records. Pinned beside the job, a hog gets at most a third of a core: where
  // 2 busier processes already run (parallel builds) they and one hog are named, rightly.
  std::map<int, double> top = MaxCoresOutside(events, (*found)["start"], (*found)["end"]);
  std::string missing;
  for (pid_t h : hogs) {
    if (evidence.find("pid " + std::to_string(h) + " `sha256sum /dev/zero`") != std::string::npos) continue;
    int busier = 0;
    for (const auto& [pid, cores] : top)
      busier += pid != h && (!top.count(h) || cores >= top[h]);  // the other hog too: 3 places
    ASSERT_GE(busier, 3) << "hog " << h << " is missing from the evidence though fewer than 3 processes used "
                         << "more CPU: " << evidence << "\n"
                         << events;
    missing += " " + std::to_string(h);
  }
  if (!missing.empty())
    GTEST_SKIP() << "cpu_contention found; hog(s)" << missing << " not named because 3 processes outside the job "
                 << "(the other hog among them) used more CPU in the span (the host is busy): " << evidence;
}

// Issue 30, item 2: the job's own children on its CPU are its own cause, not outsiders'. The job
// (bash, pinned to one CPU) starts two busy subshells 8 s in and stops them at 22 s.
TEST(ContentionEndToEnd, TheJobsOwnChildrenAreNamedAsTheJobsOwn) {
  PinnedTurn turn;
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  ASSERT_EQ(::sched_getaffinity(0, sizeof allowed, &allowed), 0);
  int cpu = -1;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &allowed)) cpu = c;
  ASSERT_GE(cpu, 0);
  TempDir d;
  const std::string dir = d.path() + "/r", kids = d.path() + "/kids";
  const std::string job =
      "end=$((SECONDS+30)); i=0; k=''; while ((SECONDS<end)); do for ((j=0;j<60000;j++)); do :; done; "
      "i=$((i+1)); echo \"step $i loss 1.0\"; "
      "if ((SECONDS>=8)) && [ -z \"$k\" ]; then (while :; do :; done) & a=$!; (while :; do :; done) & b=$!; "
      "k=\"$a $b\"; echo \"$k\" > " +
      kids +
      "; fi; "
      "if ((SECONDS>=22)) && [ -n \"$k\" ] && [ \"$k\" != done ]; then kill $k; k=done; fi; done";
  const auto t0 = Clock::now();
  const pid_t run = testing::SpawnSparkops({"run", "--out", dir, "--interval", "1", "--", "bash", "-c", job},
                                           {d.path() + "/stdout", d.path() + "/stderr"});
  ASSERT_GT(run, 0);
  int job_pid = -1;
  while (job_pid < 0 && Clock::now() < t0 + std::chrono::seconds(6)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    if (!std::filesystem::exists(dir + "/meta.json")) continue;
    auto meta = nlohmann::json::parse(ReadFileOrDie(dir + "/meta.json"), nullptr, false);
    if (meta.is_object() && meta["pid"].is_number_integer()) job_pid = meta["pid"].get<int>();
  }
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(cpu, &one);
  const bool pinned = job_pid > 0 && ::sched_setaffinity(job_pid, sizeof one, &one) == 0;
  const int status = WaitUntil(run, t0 + std::chrono::seconds(50));
  ASSERT_TRUE(pinned) << "the job's pid was not in meta.json within 6 s, or could not be pinned";
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
      << "run: status " << status << ": " << ReadFileOrDie(d.path() + "/stderr");
  const std::string kid_text = ReadFileOrDie(kids);
  auto pids = Split(Trim(kid_text), ' ');
  ASSERT_EQ(pids.size(), 2u);
  auto r = testing::RunBinary({"analyze", dir, "--json"});
  ASSERT_EQ(r.rc, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  const nlohmann::json* found = nullptr;
  for (const auto& e : j["events"])
    if (e["cause"] == "job_processes") found = &e;
  if (!found) {
    const double threshold = j["baseline"].value("threshold_ratio", 0.0);
    bool other = false;  // a slowdown was found and given another cause: a failure whatever the noise
    for (const auto& e : j["events"]) other |= e["cause"] == "cpu_contention";
    if (!other && threshold > 2.5)
      GTEST_SKIP() << "the baseline was too noisy (threshold " << threshold << "×) for a third of the CPU to show";
    FAIL() << "no job_processes episode\n" << j.dump(2) << "\n" << ReadFileOrDie(dir + "/events.jsonl");
  }
  const std::string evidence = (*found)["evidence"].dump();
  EXPECT_NE(evidence.find("the job's own processes went from 1 to 3"), std::string::npos) << evidence;
  for (auto p : pids) EXPECT_NE(evidence.find("pid " + std::string(p) + " "), std::string::npos) << evidence;
}

// Issue 30, item 3: an I/O hog uses little CPU, so it is named by its bytes. The job writes 2 MiB
// per step with O_DIRECT; a `dd oflag=direct` outside it writes from 8 s to 22 s.
TEST(ContentionEndToEnd, AnIoHogIsNamedByItsBytes) {
  PinnedTurn turn;
  HostFs real("/");
  auto psi = real.Read("/proc/pressure/io", 4096);
  if (!psi || !ParsePressure(*psi)) GTEST_SKIP() << "no readable /proc/pressure/io: I/O pressure is not recorded";
  TempDir d;
  const std::string probe =
      "dd if=/dev/zero of=" + d.path() + "/probe bs=4k count=1 oflag=direct status=none 2>/dev/null";
  if (std::system(probe.c_str()) != 0)
    GTEST_SKIP() << d.path() << "'s filesystem refuses O_DIRECT (tmpfs?): no storage I/O to contend for";
  const std::string dir = d.path() + "/r";
  const std::string job = "end=$((SECONDS+30)); i=0; while ((SECONDS<end)); do dd if=/dev/zero of=" + d.path() +
                          "/job.bin bs=256k count=8 oflag=direct,dsync status=none; i=$((i+1)); "
                          "echo \"step $i loss 1.0\"; done";
  const auto t0 = Clock::now();
  const pid_t run = testing::SpawnSparkops({"run", "--out", dir, "--interval", "1", "--", "bash", "-c", job},
                                           {d.path() + "/stdout", d.path() + "/stderr"});
  ASSERT_GT(run, 0);
  std::this_thread::sleep_until(t0 + std::chrono::seconds(8));
  const std::string of = "of=" + d.path() + "/hog.bin";
  const pid_t hog = ::fork();
  if (hog == 0) {
    ::execlp("dd", "dd", "if=/dev/zero", of.c_str(), "bs=1M", "count=100000", "oflag=direct", "status=none",
             static_cast<char*>(nullptr));
    ::_exit(127);
  }
  std::this_thread::sleep_until(t0 + std::chrono::seconds(22));
  if (hog > 0) {
    ::kill(hog, SIGKILL);
    ::waitpid(hog, nullptr, 0);
  }
  std::filesystem::remove(d.path() + "/hog.bin");
  const int status = WaitUntil(run, t0 + std::chrono::seconds(50));
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
      << "run: status " << status << ": " << ReadFileOrDie(d.path() + "/stderr");
  ASSERT_GT(hog, 0);
  auto r = testing::RunBinary({"analyze", dir, "--json"});
  ASSERT_EQ(r.rc, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  const nlohmann::json* found = nullptr;
  for (const auto& e : j["events"])
    if (e["cause"] == "io_contention") found = &e;
  if (!found) {
    bool other = false;  // a slowdown put down to the CPU or the job's own processes is wrong here
    for (const auto& e : j["events"]) other |= e["cause"] == "cpu_contention" || e["cause"] == "job_processes";
    if (!other)
      GTEST_SKIP() << "the storage did not slow the job's writes enough to show (fast or cached device); analyze said "
                   << j["events"].dump();
    FAIL() << "the I/O hog's window was put down to another cause\n"
           << j.dump(2) << "\n"
           << ReadFileOrDie(dir + "/events.jsonl");
  }
  const std::string evidence = (*found)["evidence"].dump();
  const size_t at = evidence.find("outside the job: pid " + std::to_string(hog) + " `dd ");
  EXPECT_NE(at, std::string::npos) << "the hog is not named first: " << evidence;
  EXPECT_NE(evidence.find("MB/s of storage I/O over the span", at), std::string::npos) << evidence;
}

// The same path with a fixture /proc the job writes: 60 steps of 50 ms, then 50 of 200 ms while
// "two hogs" run (PSI cpu some 71 %, /proc/4121 and /proc/4122 using a core each, 4121 writing
// 8 MB/s, 4122 with no io file: another user's), then 20 fast steps. Files are replaced with mv.
TEST(ContentionEndToEnd, FixtureHostDrivesTheSamePipeline) {
  TempDir d;
  const std::string root = d.path() + "/root", dir = d.path() + "/r";
  std::filesystem::copy(testing::Fixture("gb10"), root, std::filesystem::copy_options::recursive);
  d.Write("root/proc/pressure/cpu",
          "some avg10=2.00 avg60=2.00 avg300=2.00 total=1000\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n");
  d.Write("root/proc/pressure/io",
          "some avg10=1.00 avg60=1.00 avg300=1.00 total=500\nfull avg10=0.50 avg60=0.50 avg300=0.50 total=200\n");
  const std::string job = R"(
P=$ROOT/proc; hz=$(getconf CLK_TCK); t0=${EPOCHREALTIME/./}
put() { printf '%s' "$2" > "$1.tmp" && mv "$1.tmp" "$1"; }
psi() { put $P/pressure/cpu "some avg10=$1 avg60=$1 avg300=$1 total=1000
full avg10=0.00 avg60=0.00 avg300=0.00 total=0
"; }
hog() {  # pid comm arg: a process that has used every tick since the window opened
  local ticks=$(( (${EPOCHREALTIME/./} - t1) * hz / 1000000 ))
  mkdir -p $P/$1
  put $P/$1/stat "$1 ($2) R 1 1 1 0 -1 4194304 10 0 0 0 $ticks 0 0 0 20 0 1 0 777 1000 100 0
"
  printf '%s\0%s\0' "$2" "$3" > $P/$1/cmdline
}
for ((i = 1; i <= 130; i++)); do
  if ((i == 61)); then t1=${EPOCHREALTIME/./}; psi 71.00; fi
  if ((i > 60 && i <= 110)); then
    hog 4121 sha256sum /dev/zero; hog 4122 sha256sum /dev/urandom
    put $P/4121/io "rchar: 1
wchar: 1
read_bytes: 0
write_bytes: $(( (${EPOCHREALTIME/./} - t1) * 8 ))
"
    sleep 0.2
  else
    if ((i == 111)); then rm -rf $P/4121 $P/4122; psi 2.00; fi
    sleep 0.05
  fi
  echo "step $i loss 1.$i"
done)";
  auto r = testing::RunBinary({"--root", root, "run", "--out", dir, "--interval", "0.5", "--", "bash", "-c", job},
                              {{"ROOT", root}}, 120000);
  ASSERT_EQ(r.rc, 0) << r.err;
  const std::string events = ReadFileOrDie(dir + "/events.jsonl");
  bool io_reading = false, io_absent = false;
  for (auto line : SplitLines(events)) {
    auto e = nlohmann::json::parse(line, nullptr, false);
    if (!e.is_object() || e["type"] != "host_contention" || !e["top"].is_array()) continue;
    for (const auto& c : e["top"]) {
      if (c["pid"] == 4121 && c.contains("io_bytes_per_s")) io_reading |= c["io_bytes_per_s"].get<double>() > 1e6;
      if (c["pid"] == 4122) io_absent |= !c.contains("io_bytes_per_s");
    }
  }
  EXPECT_TRUE(io_reading) << "4121's write rate (8 MB/s) not in a host_contention record:\n" << events;
  EXPECT_TRUE(io_absent) << events;

  auto a = testing::RunBinary({"--root", root, "analyze", dir, "--json"});
  ASSERT_EQ(a.rc, 0) << a.err;
  auto j = nlohmann::json::parse(a.out);
  ASSERT_EQ(j["events"].size(), 1u) << j.dump(2);
  const auto& e = j["events"][0];
  EXPECT_EQ(e["cause"], "cpu_contention") << e.dump(2);
  EXPECT_GE(e["start_step"].get<int>(), 58);
  EXPECT_LE(e["start_step"].get<int>(), 66);
  const std::string evidence = e["evidence"].dump();
  EXPECT_NE(evidence.find("CPU pressure 71 %"), std::string::npos) << evidence;
  EXPECT_NE(evidence.find("pid 4121 `sha256sum /dev/zero`"), std::string::npos) << evidence;
  EXPECT_NE(evidence.find("pid 4122 `sha256sum /dev/urandom`"), std::string::npos) << evidence;
  // each named by its CPU over the span against before
  EXPECT_NE(evidence.find("cores over the span"), std::string::npos) << evidence;
}

}  // namespace
}  // namespace sparkops
