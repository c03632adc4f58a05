// Host contention sampling (issue #24): PSI cpu/io with the /proc/stat fallback, the job's process
// tree and CPU share from /proc/*/stat, and the host_contention events; fixture trees written by
// the test (PSI present, absent, malformed).
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include "base/csv_field.h"
#include "host/cpu_pressure.h"
#include "host/pidns.h"
#include "telemetry/csv.h"
#include "telemetry/job_tree.h"
#include "test_util.h"

namespace sparkops {
namespace {

/// A /proc/PID/stat reading for the tracker's pure Update.
ProcCpu P(uint32_t pid, uint32_t ppid, uint64_t ticks, uint64_t start, std::string comm, char state = 'S',
          std::optional<unsigned> cpu = std::nullopt) {
  ProcCpu p;
  p.pid = pid;
  p.ppid = ppid;
  p.ticks = ticks;
  p.start_ticks = start;
  p.comm = std::move(comm);
  p.state = state;
  p.processor = cpu;
  return p;
}

using testing::TempDir;
using Clock = std::chrono::steady_clock;

const char* kStat =
    "cpu  100 0 100 1000 0 0 0 0 0 0\ncpu0 50 0 50 500 0 0 0 0 0 0\ncpu1 50 0 50 500 0 0 0 0 0 0\n"
    "intr 1 2 3\nctxt 99\nbtime 1700000000\nprocesses 1234\nprocs_running 6\nprocs_blocked 1\n";

TEST(HostPressure, ParsersTable) {
  EXPECT_DOUBLE_EQ(*ParseLoadAvg("0.52 0.58 0.59 3/1042 12345\n"), 0.52);
  EXPECT_FALSE(ParseLoadAvg(""));
  EXPECT_FALSE(ParseLoadAvg("nan 1 1 1/1 1"));
  EXPECT_NE(ParseLoadAvg("x 1").error().message.find("load1"), std::string::npos);
  auto r = ParseRunnable(kStat);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->running, 6u);
  EXPECT_EQ(r->cpus, 2u);
  EXPECT_FALSE(ParseRunnable("cpu0 1 2 3\n"));                     // no procs_running
  EXPECT_FALSE(ParseRunnable("procs_running 3\n"));                // no cpuN lines
  EXPECT_FALSE(ParseRunnable("cpu0 1\nprocs_running -3\n"));       // not a count
  EXPECT_DOUBLE_EQ(RunnableWaitingPct(6, 2), 100.0 * 4 / 6);
  EXPECT_DOUBLE_EQ(RunnableWaitingPct(2, 4), 0.0);
  EXPECT_DOUBLE_EQ(RunnableWaitingPct(0, 0), 0.0);
}

TEST(HostPressure, PsiPresent) {
  TempDir root;
  root.Write(
      "proc/pressure/cpu",
      "some avg10=71.50 avg60=40.00 avg300=10.00 total=123456\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n");
  root.Write("proc/pressure/io",
             "some avg10=12.25 avg60=1.00 avg300=0.50 total=999\nfull avg10=8.00 avg60=0.50 avg300=0.25 total=500\n");
  root.Write("proc/stat", kStat);
  root.Write("proc/loadavg", "3.10 2.00 1.00 6/400 4242\n");
  auto r = ReadHostPressure(HostFs(root.path()));
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->p.source, "psi");
  EXPECT_DOUBLE_EQ(*r->p.cpu_some, 71.5);
  EXPECT_DOUBLE_EQ(*r->p.io_some, 12.25);
  EXPECT_DOUBLE_EQ(*r->p.io_full, 8.0);
  EXPECT_DOUBLE_EQ(*r->p.load1, 3.1);
  EXPECT_EQ(*r->p.runnable, 6u);
  EXPECT_TRUE(r->note.empty());
}

TEST(HostPressure, PsiAbsentFallsBackToRunnableAndSaysSo) {
  TempDir root;
  root.Write("proc/stat", kStat);
  root.Write("proc/loadavg", "3.10 2.00 1.00 6/400 4242\n");
  auto r = ReadHostPressure(HostFs(root.path()));
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->p.source, "runnable");
  EXPECT_NEAR(*r->p.cpu_some, 66.67, 0.01);
  EXPECT_FALSE(r->p.io_some);  // not estimable without PSI: absent, not 0
  EXPECT_NE(r->note.find("no PSI"), std::string::npos) << r->note;
}

TEST(HostPressure, PsiMalformedFallsBackNamingTheFile) {
  TempDir root;
  root.Write("proc/pressure/cpu", "some avg10=abc avg60=1 avg300=1 total=1\n");
  root.Write("proc/stat", kStat);
  auto r = ReadHostPressure(HostFs(root.path()));
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->p.source, "runnable");
  EXPECT_NE(r->note.find("pressure/cpu"), std::string::npos) << r->note;
  EXPECT_FALSE(r->p.load1);  // no /proc/loadavg in this tree
  TempDir empty;
  EXPECT_FALSE(ReadHostPressure(HostFs(empty.path())));
}

std::string StatLine(uint32_t pid, const std::string& comm, uint32_t ppid, uint64_t utime, uint64_t stime,
                     uint64_t start) {
  return std::to_string(pid) + " (" + comm + ") S " + std::to_string(ppid) + " 1 1 0 -1 4194304 10 0 0 0 " +
         std::to_string(utime) + " " + std::to_string(stime) + " 0 0 20 0 1 0 " + std::to_string(start) +
         " 1000 100 18446744073709551615\n";
}

TEST(JobTree, ParseProcCpuAndTree) {
  auto p = ParseProcCpu(StatLine(42, "py ) worker", 7, 150, 50, 9000));
  ASSERT_TRUE(p) << p.error().message;
  EXPECT_EQ(p->pid, 42u);
  EXPECT_EQ(p->ppid, 7u);
  EXPECT_EQ(p->comm, "py ) worker");
  EXPECT_EQ(p->ticks, 200u);
  EXPECT_EQ(p->start_ticks, 9000u);
  EXPECT_FALSE(ParseProcCpu("42 (x) S 1 2"));
  EXPECT_FALSE(ParseProcCpu("x (y) S 1 1 1 0 -1 0 0 0 0 0 a 0 0 0 20 0 1 0 1 1 1"));
  std::vector<ProcCpu> t = {P(1, 0, 0, 0, "init"),      P(10, 1, 0, 0, "job"), P(11, 10, 0, 0, "worker"),
                            P(12, 11, 0, 0, "worker2"), P(20, 1, 0, 0, "hog"), P(30, 30, 0, 0, "self-parent")};
  EXPECT_EQ(TreeOf(10, t), (std::vector<uint32_t>{10, 11, 12}));
  EXPECT_EQ(TreeOf(30, t), (std::vector<uint32_t>{30}));
}

TEST(JobTree, CoresFromTicksBetweenUpdates) {
  JobCpuTracker tr(10, 99, 100.0);
  auto t0 = Clock::now();
  std::vector<ProcCpu> a = {P(10, 1, 100, 5, "job"), P(11, 10, 50, 6, "loader"), P(20, 1, 0, 7, "sha256sum"),
                            P(99, 1, 0, 8, "sparkops")};
  EXPECT_FALSE(tr.Update(a, t0));  // primes
  std::vector<ProcCpu> b = {P(10, 1, 250, 5, "job"), P(11, 10, 100, 6, "loader"), P(20, 1, 200, 7, "sha256sum"),
                            P(99, 1, 500, 8, "sparkops"), P(21, 1, 100, 9, "new")};
  auto s = tr.Update(b, t0 + std::chrono::seconds(2));
  ASSERT_TRUE(s);
  EXPECT_NEAR(s->job_cores, (150 + 50) / 100.0 / 2, 1e-9);    // 1.0 core over the job's two processes
  EXPECT_NEAR(s->other_cores, (200 + 100) / 100.0 / 2, 1e-9);  // sparkops itself counts as neither
  EXPECT_EQ(s->job_procs, 2u);
  ASSERT_EQ(s->top_outside.size(), 2u);
  EXPECT_EQ(s->top_outside[0].pid, 20u);
  EXPECT_NEAR(s->top_outside[0].cores, 1.0, 1e-9);
  // a pid reused by a new process (another start time) is not a negative delta
  std::vector<ProcCpu> c = {P(10, 1, 250, 5, "job"), P(20, 1, 10, 77, "other")};
  auto u = tr.Update(c, t0 + std::chrono::seconds(3));
  ASSERT_TRUE(u);
  EXPECT_NEAR(u->other_cores, 0.1, 1e-9);
  EXPECT_NEAR(u->job_cores, 0.0, 1e-9);
}

TEST(JobTree, ContentionEventsAreRateLimited) {
  HostPressure p;
  p.source = "psi";
  p.cpu_some = 55;
  p.io_some = 3;
  CpuShare share;
  share.job_cores = 0.4;
  share.other_cores = 2.0;
  Consumer hog;
  hog.pid = 4121;
  hog.comm = "sha256sum";
  hog.cmdline = "sha256sum /dev/zero";
  hog.cores = 1.0;
  share.top_outside = {hog};
  std::optional<Clock::time_point> last;
  auto t0 = Clock::now();
  auto e = ContentionEvent(p, share, t0, &last);
  ASSERT_TRUE(e);
  EXPECT_EQ((*e)["pressure"], "cpu");
  EXPECT_EQ((*e)["top"][0]["pid"], 4121);
  EXPECT_EQ((*e)["top"][0]["cmdline"], "sha256sum /dev/zero");
  EXPECT_FALSE(ContentionEvent(p, share, t0 + std::chrono::seconds(2), &last));  // too soon
  EXPECT_TRUE(ContentionEvent(p, share, t0 + std::chrono::seconds(6), &last));
  p.cpu_some = 5;
  EXPECT_FALSE(ContentionEvent(p, share, t0 + std::chrono::seconds(60), &last));  // under the threshold
}

TEST(JobTree, RealProcessesUnderTheRealProc) {
  // A busy child is the "job" (a host program, so its /proc/PID/stat is real even when this test
  // runs under qemu-user, which fakes the emulated process's own stat). What the tracker reads
  // between two updates must match the CPU time the kernel charged the child in all (wait4), which
  // is that interval's plus a few milliseconds of start-up.
  const pid_t job = ::fork();
  ASSERT_GE(job, 0);
  if (job == 0) {
    ::execl("/bin/sh", "sh", "-c", "while :; do :; done", static_cast<char*>(nullptr));
    ::_exit(127);
  }
  JobCpuTracker tr(static_cast<uint32_t>(job), static_cast<uint32_t>(::getpid()),
                   static_cast<double>(::sysconf(_SC_CLK_TCK)));
  HostFs fs("/");
  const auto ta = Clock::now();
  EXPECT_FALSE(tr.Update(fs, ta));
  std::this_thread::sleep_for(std::chrono::milliseconds(600));
  const auto tb = Clock::now();
  auto s = tr.Update(fs, tb);
  ::kill(job, SIGKILL);
  int status = 0;
  rusage ru{};
  ASSERT_EQ(::wait4(job, &status, 0, &ru), job);
  ASSERT_TRUE(s);
  const double used = static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
                      static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
  const double wall = std::chrono::duration<double>(tb - ta).count();
  EXPECT_GT(used, 0.05) << "the child did not run";
  EXPECT_NEAR(s->job_cores * wall, used, 0.08)  // a few clock ticks of slack and the start-up
      << "wall " << wall << "; /proc numbers this process " << PidSpace::Real().self_proc_pid() << " (getpid "
      << ::getpid() << ", namespace depth " << PidSpace::Real().depth() << ")";
  EXPECT_EQ(s->job_procs, 1u);
  EXPECT_GE(s->other_cores, 0.0);
}

TEST(HostContentionCsv, ColumnsAndCellsByName) {
  // Looked up by name: a column appended after these must not break this test (the order is
  // pinned once, by Csv.HeaderOnlyGrowsAtTheEnd).
  const auto& cols = CsvColumns();
  auto first = std::find(cols.begin(), cols.end(), "cpu_pressure_pct");
  ASSERT_NE(first, cols.end());
  ASSERT_GE(cols.end() - first, 6);
  EXPECT_EQ(std::vector<std::string>(first, first + 6),
            (std::vector<std::string>{"cpu_pressure_pct", "io_pressure_some_pct", "io_pressure_full_pct",
                                      "pressure_source", "job_cores", "other_cores"}));
  Sample s;
  HostPressure h;
  h.source = "runnable";
  h.cpu_some = 50;
  s.host = h;
  s.job_cores = 1.25;
  std::string row = CsvRow(s);
  row.pop_back();
  std::vector<std::string> cells;
  ASSERT_EQ(CsvSplit(row, &cells), "");
  ASSERT_EQ(cells.size(), cols.size());
  std::vector<std::string> got(cells.begin() + (first - cols.begin()), cells.begin() + (first - cols.begin()) + 6);
  EXPECT_EQ(got, (std::vector<std::string>{"50.00", "", "", "runnable", "1.25", ""})) << row;
}

}  // namespace
}  // namespace sparkops
