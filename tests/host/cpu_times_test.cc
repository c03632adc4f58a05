// Per-CPU times, CPU lists and the job's CPUs (issue 30): host/cpu_times.h, and the tracker's
// use of them (telemetry/job_tree.h).
#include "host/cpu_times.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include "base/strings.h"
#include "host/hostfs.h"
#include "telemetry/job_tree.h"
#include "test_util.h"

namespace sparkops {
namespace {

// A 2-CPU machine's /proc/stat (Linux 6.1 layout: ten numbers per cpu line).
constexpr const char* kStatA =
    "cpu  1000 0 500 8000 100 0 0 50 0 0\n"
    "cpu0 600 0 300 3900 50 0 0 25 0 0\n"
    "cpu1 400 0 200 4100 50 0 0 25 0 0\n"
    "intr 1 2 3\nctxt 99\nprocs_running 3\n";
constexpr const char* kStatB =  // 1 s later at 100 Hz: cpu1 fully busy, cpu0 idle; 20 ticks stolen
    "cpu  1100 0 500 8080 100 0 0 70 0 0\n"
    "cpu0 600 0 300 3980 50 0 0 45 0 0\n"
    "cpu1 500 0 200 4100 50 0 0 25 0 0\n"
    "procs_running 3\n";

TEST(CpuTimes, ParsesAggregateAndPerCpuLines) {
  auto s = ParseCpuTimes(kStatA);
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_EQ(s->all.busy, 1500u);
  EXPECT_EQ(s->all.steal, 50u);
  EXPECT_EQ(s->all.total, 1500u + 8000 + 100 + 50);
  ASSERT_EQ(s->per_cpu.size(), 2u);
  EXPECT_EQ(s->per_cpu[1].first, 1u);
  EXPECT_EQ(s->per_cpu[1].second.busy, 600u);
  // an old kernel's four-number line: no steal
  auto old = ParseCpuTimes("cpu 10 0 5 100\ncpu0 10 0 5 100\n");
  ASSERT_TRUE(old);
  EXPECT_EQ(old->all.steal, 0u);
  for (const char* bad : {"cpu0 1 2 3 4\n", "cpu  1 2 x 4\n", "cpu  1 2\n", "cpu  1 2 3 99999999999999999999\n",
                          "cpu  1 2 3 4\ncpu99999 1 2 3 4\n"})
    EXPECT_FALSE(ParseCpuTimes(bad)) << bad;
}

TEST(CpuTimes, TheRealProcStatParses) {
  auto text = HostFs("/").Read("/proc/stat", 4u << 20);
  ASSERT_TRUE(text);
  auto s = ParseCpuTimes(*text);
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_GE(s->per_cpu.size(), 1u);
  EXPECT_GT(s->all.total, 0u);
}

TEST(CpuTimes, DeltaOnASubsetOfCpusAndSteal) {
  auto a = ParseCpuTimes(kStatA), b = ParseCpuTimes(kStatB);
  ASSERT_TRUE(a && b);
  auto all = CpuDeltaOn(*a, *b, {}, 1.0, 100);
  ASSERT_TRUE(all);
  EXPECT_DOUBLE_EQ(all->busy_cores, 1.0);
  ASSERT_TRUE(all->steal_pct);
  EXPECT_NEAR(*all->steal_pct, 100.0 * 20 / 200, 1e-9);
  auto one = CpuDeltaOn(*a, *b, {1}, 1.0, 100);
  ASSERT_TRUE(one);
  EXPECT_EQ(one->cpus, 1u);
  EXPECT_DOUBLE_EQ(one->busy_cores, 1.0);
  auto zero = CpuDeltaOn(*a, *b, {0}, 1.0, 100);
  ASSERT_TRUE(zero);
  EXPECT_DOUBLE_EQ(zero->busy_cores, 0.0);
  EXPECT_FALSE(CpuDeltaOn(*b, *a, {}, 1.0, 100));  // counters went back
  EXPECT_FALSE(CpuDeltaOn(*a, *b, {}, 0.0, 100));
  EXPECT_EQ(CpuDeltaOn(*a, *b, {7}, 1.0, 100)->cpus, 0u);  // a CPU neither reading has
}

TEST(CpuTimes, CpuLists) {
  struct Case {
    const char* in;
    std::vector<unsigned> want;
  } cases[] = {{"0-3,8", {0, 1, 2, 3, 8}}, {"5", {5}}, {"", {}}, {" 2,1,2 \n", {1, 2}}, {"0-1,1-2", {0, 1, 2}}};
  for (const auto& c : cases) {
    auto v = ParseCpuList(c.in);
    ASSERT_TRUE(v) << c.in;
    EXPECT_EQ(*v, c.want) << c.in;
  }
  for (const char* bad : {"3-1", "a", "1-", "8192", "0-99999", "1,,2"}) EXPECT_FALSE(ParseCpuList(bad)) << bad;
  auto st = ParseCpusAllowed("Name:\tpython3\nCpus_allowed:\t3\nCpus_allowed_list:\t0-1\n");
  ASSERT_TRUE(st);
  EXPECT_EQ(*st, (std::vector<unsigned>{0, 1}));
  EXPECT_FALSE(ParseCpusAllowed("Name:\tx\n"));
  auto self = HostFs("/").Read("/proc/self/status", 65536);
  ASSERT_TRUE(self);
  auto mine = ParseCpusAllowed(*self);
  ASSERT_TRUE(mine) << mine.error().message;
  EXPECT_GE(mine->size(), 1u);
}

TEST(ProcCpuFields, StateAndTheCpuItLastRanOn) {
  // A full /proc/PID/stat line: rsslim (field 25) is ULONG_MAX, processor (field 39) is 3.
  auto p = ParseProcCpu(
      "1234 (python3) D 1000 1234 1000 34816 1234 4194304 12345 0 0 0 500 300 0 0 20 0 8 0 123456 1000000000 50000 "
      "18446744073709551615 1 1 0 0 0 0 0 16781312 16386 0 0 0 17 3 0 0 0 0 0\n");
  ASSERT_TRUE(p) << p.error().message;
  EXPECT_EQ(p->state, 'D');
  ASSERT_TRUE(p->processor);
  EXPECT_EQ(*p->processor, 3u);
  EXPECT_EQ(p->ticks, 800u);
  auto self = HostFs("/").Read("/proc/self/stat", 4096);
  ASSERT_TRUE(self);
  auto me = ParseProcCpu(*self);
  ASSERT_TRUE(me) << me.error().message;
  EXPECT_NE(me->state, '?');  // a letter here; qemu-user writes its own line, with state '0'
  ASSERT_TRUE(me->processor);
  EXPECT_LT(*me->processor, kMaxCpus);
}

}  // namespace
}  // namespace sparkops

namespace sparkops {
namespace {

ProcCpu Proc(uint32_t pid, uint32_t ppid, uint64_t ticks, char state, unsigned cpu) {
  ProcCpu p;
  p.pid = pid;
  p.ppid = ppid;
  p.ticks = ticks;
  p.start_ticks = pid;
  p.comm = "p" + std::to_string(pid);
  p.state = state;
  p.processor = cpu;
  return p;
}

TEST(JobTreeIssue30, HogsOnTheJobsCpuAndIoWaitersAreListedAndRecorded) {
  // The job (10, with child 11) on CPU 0 only; three busier builds elsewhere; two hogs on CPU 0
  // at a third of a core; a dd waiting on storage with almost no CPU.
  JobCpuTracker tr(10, 0, 100.0);
  auto t0 = std::chrono::steady_clock::now();
  std::vector<ProcCpu> a = {Proc(10, 1, 0, 'R', 0), Proc(11, 10, 0, 'S', 0), Proc(50, 1, 0, 'R', 1),
                            Proc(51, 1, 0, 'R', 1), Proc(52, 1, 0, 'R', 1),  Proc(60, 1, 0, 'R', 0),
                            Proc(61, 1, 0, 'R', 0), Proc(70, 1, 0, 'D', 1)};
  EXPECT_FALSE(tr.Update(a, t0));
  std::vector<ProcCpu> b = {Proc(10, 1, 33, 'R', 0), Proc(11, 10, 0, 'D', 0), Proc(50, 1, 100, 'R', 1),
                            Proc(51, 1, 90, 'R', 1), Proc(52, 1, 80, 'R', 1), Proc(60, 1, 33, 'R', 0),
                            Proc(61, 1, 33, 'R', 0), Proc(70, 1, 1, 'D', 1),  Proc(12, 10, 20, 'R', 0)};
  auto s = tr.Update(b, t0 + std::chrono::seconds(1));
  ASSERT_TRUE(s);
  EXPECT_EQ(s->job_procs, 3u);
  EXPECT_EQ(s->job_io_wait, 1u);
  EXPECT_EQ(s->other_io_wait, 1u);
  ASSERT_EQ(s->top_job.size(), 2u);
  EXPECT_EQ(s->top_job[0].pid, 10u);
  EXPECT_EQ(s->top_job[1].pid, 12u);
  std::vector<uint32_t> pids;
  for (const auto& c : s->top_outside) pids.push_back(c.pid);
  // the allowed set is unknown here (no status read), so none counts as on the job's CPUs: the
  // three busiest, then the waiter
  EXPECT_EQ(pids, (std::vector<uint32_t>{50, 51, 52, 70}));
  EXPECT_DOUBLE_EQ(s->top_outside[0].cpu_s, 1.0);

  // the event: made when others use the job's CPUs or the job's tree grew, though PSI is low
  HostPressure p;
  p.source = "psi";
  p.cpu_some = 3;
  std::optional<std::chrono::steady_clock::time_point> last;
  EXPECT_FALSE(ContentionEvent(p, s, t0, &last));
  s->others_on_job_cpus = 0.66;
  s->job_cpus = 1;
  auto e = ContentionEvent(p, s, t0, &last);
  ASSERT_TRUE(e);
  EXPECT_EQ((*e)["trigger"], "job_cpus");
  EXPECT_EQ((*e)["job_cpus"], 1);
  EXPECT_EQ((*e)["io_wait"]["others"], 1);
  EXPECT_EQ((*e)["job_top"][1]["pid"], 12);
  EXPECT_EQ((*e)["top"][3]["state"], "D");
  s->others_on_job_cpus = 0.1;
  last.reset();
  auto g = ContentionEvent(p, s, t0, &last, {}, /*job_grew=*/true);
  ASSERT_TRUE(g);
  EXPECT_EQ((*g)["trigger"], "job_tree");
}

}  // namespace
}  // namespace sparkops

namespace sparkops {
namespace {

TEST(CpuTimes, Uptime) {
  auto v = ParseUptime("12345.67 23456.78\n");
  ASSERT_TRUE(v);
  EXPECT_DOUBLE_EQ(*v, 12345.67);
  for (const char* bad : {"", "x 1", "-5 1", "nan 1", "1e30 1"}) EXPECT_FALSE(ParseUptime(bad)) << bad;
  EXPECT_TRUE(ReadUptime(HostFs("/")));
}

}  // namespace
}  // namespace sparkops
