// host/read_budget.h: a collection's total read budget (issue 29). Unit tests of the budget and
// scope, and of the readers that charge it (process table, ReadForProcess) on --root trees.
#include "host/read_budget.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <thread>

#include "host/owned_read.h"
#include "host/proctable.h"
#include "test_util.h"

namespace sparkops {
namespace {

using namespace std::chrono_literals;

ReadBudgetLimits Limits(std::chrono::nanoseconds t, uint64_t bytes) { return {t, bytes}; }

/// A /proc of `n` processes 100.. (status + cmdline), the first one's argv `argv_bytes` long.
void WriteProcs(const testing::TempDir& d, int n, size_t argv_bytes = 8) {
  for (int i = 0; i < n; ++i) {
    const std::string dir = "proc/" + std::to_string(100 + i);
    d.Write(dir + "/status", "Name:\tsleep\nPPid:\t1\nUid:\t1000\t1000\t1000\t1000\n");
    d.Write(dir + "/cmdline", i == 0 ? std::string(argv_bytes, 'a') + '\0'
                                     : std::string("sleep\0"
                                                   "30\0",
                                                   9));
  }
}

TEST(ReadBudget, BytesRunOutPastTheLimit) {
  ReadBudget b(Limits(1h, 100));
  EXPECT_TRUE(b.Charge(60));
  EXPECT_TRUE(b.Charge(40));  // exactly the limit still fits
  EXPECT_FALSE(b.Spent());
  EXPECT_FALSE(b.Fits(1));    // a file of known size that does not fit spends it, unread
  EXPECT_TRUE(b.Spent());
  ASSERT_TRUE(b.reason());
  EXPECT_EQ(BudgetReasonName(*b.reason()), "bytes");
  EXPECT_EQ(b.bytes_used(), 100u);

  ReadBudget c(Limits(1h, 100));
  EXPECT_FALSE(c.Charge(101));
  EXPECT_EQ(BudgetReasonName(*c.reason()), "bytes");
}

TEST(ReadBudget, TimeRunsOutAndTheFirstReasonStays) {
  ReadBudget long_one(Limits(3600s, 100));
  EXPECT_FALSE(long_one.Spent());
  ReadBudget b(Limits(1ms, 100));
  std::this_thread::sleep_for(5ms);
  EXPECT_TRUE(b.Spent());
  EXPECT_EQ(BudgetReasonName(*b.reason()), "time");
  EXPECT_FALSE(b.Charge(1000));  // now over the bytes too: still "time"
  EXPECT_EQ(BudgetReasonName(*b.reason()), "time");
}

TEST(ReadBudget, NoScopeIsUnlimited) {
  EXPECT_FALSE(InReadBudgetScope());
  EXPECT_TRUE(ChargeRead(UINT64_MAX));
  EXPECT_TRUE(ReserveRead(UINT64_MAX));
  EXPECT_FALSE(ReadBudgetSpent());
  testing::TempDir d;
  WriteProcs(d, 5, 40u << 10);
  auto t = ReadProcessTable(HostFs(d.path()));
  ASSERT_TRUE(t);
  EXPECT_EQ(t->size(), 5u);
  EXPECT_EQ((*t)[0].argv.at(0).size(), 40u << 10);  // argv whole outside a scope (ps)
}

TEST(ReadBudget, ScopesNestChargeEveryEnclosingBudgetAndRestore) {
  ReadBudget outer(Limits(1h, 1000));
  {
    ReadBudgetScope o(outer);
    EXPECT_TRUE(InReadBudgetScope());
    ReadBudget inner(Limits(1h, 100));
    {
      ReadBudgetScope i(inner);
      EXPECT_FALSE(ChargeRead(150));  // the inner one is spent...
      EXPECT_TRUE(ReadBudgetSpent());
      EXPECT_FALSE(ReserveRead(10));  // ...so nothing more is charged to either
    }
    EXPECT_EQ(inner.bytes_used(), 150u);
    EXPECT_EQ(outer.bytes_used(), 150u);  // charged through the inner scope
    EXPECT_FALSE(ReadBudgetSpent());      // the outer one is current again, not spent
    std::thread([] { EXPECT_FALSE(InReadBudgetScope()); }).join();  // per thread
    EXPECT_FALSE(ChargeRead(900));
    EXPECT_EQ(BudgetReasonName(*outer.reason()), "bytes");
  }
  EXPECT_FALSE(InReadBudgetScope());
  EXPECT_FALSE(ReadBudgetSpent());
}

TEST(ReadBudget, ProcessTableStopsOnceSpentAndCutsArgv) {
  testing::TempDir d;
  WriteProcs(d, 20, 40u << 10);
  HostFs fs(d.path());
  ReadBudget roomy(Limits(1h, 1u << 20));
  {
    ReadBudgetScope s(roomy);
    auto t = ReadProcessTable(fs);
    ASSERT_TRUE(t);
    EXPECT_EQ(t->size(), 20u);
    EXPECT_EQ((*t)[0].argv.at(0).size(), kBudgetedArgvBytes);  // the first 32 KiB kept
  }
  EXPECT_FALSE(roomy.reason());
  EXPECT_LT(roomy.bytes_used(), 40u << 10);
  ReadBudget tight(Limits(1h, (32u << 10) + 200));  // the first process's 32 KiB argv, then a few more
  {
    ReadBudgetScope s(tight);
    auto t = ReadProcessTable(fs);
    ASSERT_TRUE(t);
    EXPECT_GE(t->size(), 1u);
    EXPECT_LT(t->size(), 20u);
  }
  ASSERT_TRUE(tight.reason());
  EXPECT_EQ(BudgetReasonName(*tight.reason()), "bytes");
  ReadBudget late(Limits(1ms, 1u << 20));
  std::this_thread::sleep_for(5ms);
  {
    ReadBudgetScope s(late);
    auto t = ReadProcessTable(fs);
    ASSERT_TRUE(t);
    EXPECT_TRUE(t->empty());  // spent before the first process
  }
  EXPECT_EQ(BudgetReasonName(*late.reason()), "time");
}

TEST(ReadBudget, FdProbingStopsOnceSpent) {
  testing::TempDir d;
  const std::string status = "Name:\tpython3\nPPid:\t1\nUid:\t1000\t1000\t1000\t1000\n";
  const std::string cmdline("python3\0x.py\0", 13);
  d.Write("proc/300/status", status);
  d.Write("proc/300/cmdline", cmdline);
  std::filesystem::create_directories(d.path() + "/proc/300/fd");
  for (int i = 0; i < 200; ++i)
    std::filesystem::create_symlink("/dev/null", d.path() + "/proc/300/fd/" + std::to_string(i));
  d.Write("proc/301/status", status);
  d.Write("proc/301/cmdline", cmdline);
  std::filesystem::create_directories(d.path() + "/proc/301/fd");
  std::filesystem::create_symlink("/dev/nvidia0", d.path() + "/proc/301/fd/3");
  HostFs fs(d.path());
  auto gpu = ReadProcess(fs, 301);
  ASSERT_TRUE(gpu);
  EXPECT_TRUE(gpu->nvidia_fd);  // outside a scope the fds are probed
  const uint64_t head = status.size() + cmdline.size();
  ReadBudget b(Limits(1h, head + 200));  // status + cmdline, then about 18 of the 200 fds
  {
    ReadBudgetScope s(b);
    ASSERT_TRUE(ReadProcess(fs, 300));
  }
  EXPECT_EQ(BudgetReasonName(*b.reason()), "bytes");
  EXPECT_LT(b.bytes_used(), head + 200 + 20);  // probing stopped at once, not after 200 readlinks
  ReadBudget gone(Limits(1h, head - 1));  // spent by status + cmdline: no environ, no fds
  {
    ReadBudgetScope s(gone);
    auto p = ReadProcess(fs, 301);
    ASSERT_TRUE(p);
    EXPECT_FALSE(p->nvidia_fd);
    EXPECT_EQ(p->argv.size(), 2u);
  }
}

TEST(ReadBudget, ReadForProcessChargesTheSizeFirst) {
  testing::TempDir d;
  d.Write("srv/x.py", std::string(5000, '#'));
  HostFs fs(d.path());
  const uint32_t me = static_cast<uint32_t>(::getuid());
  EXPECT_TRUE(ReadForProcess(fs, "/srv/x.py", me, 1u << 20));
  ReadBudget b(Limits(1h, 4096));
  {
    ReadBudgetScope s(b);
    auto r = ReadForProcess(fs, "/srv/x.py", me, 1u << 20);
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().message.find("read budget"), std::string::npos);
  }
  EXPECT_EQ(b.bytes_used(), 0u);  // refused before reading
  EXPECT_EQ(BudgetReasonName(*b.reason()), "bytes");
  ReadBudget ok(Limits(1h, 8192));
  {
    ReadBudgetScope s(ok);
    EXPECT_TRUE(ReadForProcess(fs, "/srv/x.py", me, 1u << 20));
  }
  EXPECT_EQ(ok.bytes_used(), 5000u);
}

// top's energy line reads a thermal.csv's header this way (issue 37): the first line only, at most
// `max_bytes` read and charged, under ReadForProcess' rules (a link is not followed).
TEST(ReadBudget, ReadFirstLineForProcessReadsAndChargesOnlyItsBound) {
  testing::TempDir d;
  d.Write("srv/thermal.csv", "timestamp,power_w\r\n" + std::string(5000, '1'));
  d.Write("srv/long.csv", std::string(5000, 'x') + "\n");
  std::filesystem::create_symlink("thermal.csv", d.path() + "/srv/link.csv");
  HostFs fs(d.path());
  const uint32_t me = static_cast<uint32_t>(::getuid());
  ReadBudget b(Limits(1h, 1u << 20));
  {
    ReadBudgetScope s(b);
    auto h = ReadFirstLineForProcess(fs, "/srv/thermal.csv", me, 64);
    ASSERT_TRUE(h) << h.error().message;
    EXPECT_EQ(*h, "timestamp,power_w");
  }
  EXPECT_EQ(b.bytes_used(), 64u);  // not the file's 5,019 bytes
  auto longer = ReadFirstLineForProcess(fs, "/srv/long.csv", me, 64);
  ASSERT_FALSE(longer);
  EXPECT_NE(longer.error().message.find("no whole first line in its first 64 bytes"), std::string::npos);
  auto link = ReadFirstLineForProcess(fs, "/srv/link.csv", me, 64);
  ASSERT_FALSE(link);
  EXPECT_NE(link.error().message.find("symbolic link"), std::string::npos) << link.error().message;
}

}  // namespace
}  // namespace sparkops
