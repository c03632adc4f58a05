// issue 33: the guard's follower of the kernel log. The matcher is pure (which records stop a job);
// the follower skips what the ring held when it started, reads each later record once (by sequence
// number) and says why when the log cannot be read.
#include "guard/kernel_watch.h"

#include <gtest/gtest.h>

#include <fstream>

#include "guard/watcher.h"
#include "test_util.h"

namespace sparkops::guard {
namespace {

constexpr const char* kNoMem =
    "4,1600,2000000000,-;NVRM: nvCheckOkFailedNoLog: Check failed: Out of memory [NV_ERR_NO_MEMORY] (0x00000051) "
    "returned from _memdescAllocInternal(pMemDesc) @ mem_desc.c:1359\n";

TEST(GuardStopSign, Table) {
  struct Case {
    const char* name;
    const char* records;     ///< newline-separated /dev/kmsg records
    bool stops;
    const char* line_part;   ///< part of the evidence line when it stops
  } cases[] = {
      {"driver check failed", kNoMem, true, "Out of memory [NV_ERR_NO_MEMORY]"},
      {"assertion form", "4,1234,5678901,-;NVRM: nvAssertFailedNoLog: Assertion failed: NV_ERR_NO_MEMORY\n", true,
       "nvAssertFailedNoLog"},
      {"alloc failed form", "3,7,8,-;NVRM: GPU0 _memdescAllocInternal: failed to allocate: NV_ERR_NO_MEMORY\n", true,
       "failed to allocate"},
      {"after other signs",
       "3,1,2,-;NVRM: Xid (PCI:000f:01:00): 31, pid=4821, name=python3, Ch 00000002\n"
       "4,2,3,-;NVRM: nvAssertFailedNoLog: Assertion failed: NV_ERR_NO_MEMORY\n",
       true, "Assertion failed"},
      {"Xid only", "3,1,2,-;NVRM: Xid (PCI:000f:01:00): 109, pid=1, name=x, Ch 00000008\n", false, ""},
      {"OOM kill only", "3,1492,1,-;Out of memory: Killed process 48211 (python3) total-vm:1kB\n", false, ""},
      {"no-memory without NVRM", "4,1,2,-;nouveau: NV_ERR_NO_MEMORY\n", false, ""},
      {"NVRM without no-memory", "4,1,2,-;NVRM: loading NVIDIA UNIX Open Kernel Module 580.95.05\n", false, ""},
      {"lower-case", "4,1,2,-;nvrm: nv_err_no_memory\n", false, ""},
      {"malformed header", "NVRM: NV_ERR_NO_MEMORY\n", false, ""},
      {"nothing", "", false, ""},
  };
  for (const auto& c : cases) {
    KernelSignals news;
    for (const auto& r : ParseKmsgText(c.records)) news.Add(r);
    auto s = GuardStopSign(news);
    ASSERT_EQ(s.has_value(), c.stops) << c.name;
    if (s) {
      EXPECT_TRUE(StopsTheJob(*s)) << c.name;
      EXPECT_NE(s->line.find(c.line_part), std::string::npos) << c.name << ": " << s->line;
    }
  }
  // A flood that pushes the record out of the kept signs still stops (the count says it came).
  KernelSignals flood;
  for (const auto& r : ParseKmsgText(kNoMem)) flood.Add(r);
  for (int i = 0; i < 300; ++i) {
    KmsgRecord r;
    r.seq = 2000 + static_cast<uint64_t>(i);
    r.text = "NVRM: Xid (PCI:000f:01:00): 31, pid=1, name=x, Ch 1";
    flood.Add(r);
  }
  auto s = GuardStopSign(flood);
  ASSERT_TRUE(s);
  EXPECT_NE(s->line.find("NV_ERR_NO_MEMORY"), std::string::npos);
}

TEST(WithKernelSign, Table) {
  struct Watchless {
    Decision in;
    std::string pending;
    Action action;
    Reason reason;
  } cases[] = {
      {{}, "", Action::kNone, Reason::kNone},
      {{}, "NVRM: x NV_ERR_NO_MEMORY", Action::kStop, Reason::kKernelNoMemory},  // pending: acted on again
      {{Action::kStop, Reason::kFloor}, "NVRM: x", Action::kStop, Reason::kFloor},  // the readings come first
      {{Action::kFlush, Reason::kFloor}, "NVRM: x", Action::kFlush, Reason::kFloor},
  };
  for (auto& c : cases) {
    Decision d = WithKernelSign(c.in, nullptr, &c.pending);
    EXPECT_EQ(d.action, c.action);
    EXPECT_EQ(d.reason, c.reason);
  }
  EXPECT_STREQ(ToString(Reason::kKernelNoMemory), "kernel_nvrm_no_memory");
}

TEST(KernelWatch, FollowsOnlyRecordsLoggedAfterItStarted) {
  testing::TempDir root;
  root.Write("dev/kmsg", std::string("6,1590,1,-;Linux version 6.17.0\n") + kNoMem);  // seq 1600: before the start
  std::string note;
  auto w = KernelWatch::Start(HostFs(root.path()), &note);
  ASSERT_TRUE(w);
  EXPECT_EQ(note, "");
  EXPECT_FALSE(w->Poll()) << "a record in the ring before the start is not acted on";
  auto append = [&](const std::string& text) { std::ofstream(root.path() + "/dev/kmsg", std::ios::app) << text; };
  append("6,1601,3,-;usb 1-1: new device\n");
  EXPECT_FALSE(w->Poll());
  append("4,1602,4,-;NVRM: nvAssertFailedNoLog: Assertion failed: NV_ERR_NO_MEMORY\n");
  auto s = w->Poll();
  ASSERT_TRUE(s);
  EXPECT_EQ(s->seq, 1602u);
  EXPECT_EQ(s->line, "NVRM: nvAssertFailedNoLog: Assertion failed: NV_ERR_NO_MEMORY");
  EXPECT_FALSE(w->Poll()) << "each record once";
  append("4,1500,5,-;NVRM: nvAssertFailedNoLog: Assertion failed: NV_ERR_NO_MEMORY\n");
  EXPECT_FALSE(w->Poll()) << "an older sequence number was already seen";
  append("4,1603,6,-;NVRM: Assertion fa");  // half a record: read once its line ends
  EXPECT_FALSE(w->Poll());
  append("iled: NV_ERR_NO_MEMORY\n");
  EXPECT_TRUE(w->Poll());
}

// issue 33: `run` takes the mark before spawning the job; a record logged between the mark and the
// guard's start (the job's first milliseconds) counts on the first poll.
TEST(KernelWatch, FromAMarkTakenEarlierARecordLoggedBeforeTheStartCounts) {
  testing::TempDir root;
  root.Write("dev/kmsg", std::string("6,1590,1,-;Linux version 6.17.0\n") + kNoMem);  // seq 1600
  auto mark = KmsgMarkNow(HostFs(root.path()));
  ASSERT_TRUE(mark) << mark.error().message;
  EXPECT_EQ(mark->last_seq, 1600u);
  std::ofstream(root.path() + "/dev/kmsg", std::ios::app)
      << "4,1601,3,-;NVRM: nvAssertFailedNoLog: Assertion failed: NV_ERR_NO_MEMORY\n";
  std::string note;
  auto late = KernelWatch::Start(HostFs(root.path()), &note);  // without the mark: history
  ASSERT_TRUE(late);
  EXPECT_FALSE(late->Poll());
  auto w = KernelWatch::Start(HostFs(root.path()), &note, *mark);
  ASSERT_TRUE(w);
  auto s = w->Poll();
  ASSERT_TRUE(s) << "the record after the mark was taken for history";
  EXPECT_EQ(s->seq, 1601u);
  EXPECT_FALSE(w->Poll()) << "each record once";
  // An empty ring at the mark: every record counts.
  testing::TempDir empty;
  empty.Write("dev/kmsg", "");
  auto none = KmsgMarkNow(HostFs(empty.path()));
  ASSERT_TRUE(none);
  EXPECT_FALSE(none->last_seq);
  empty.Write("dev/kmsg", kNoMem);
  auto e = KernelWatch::Start(HostFs(empty.path()), &note, *none);
  ASSERT_TRUE(e);
  EXPECT_TRUE(e->Poll());
}

TEST(KernelWatch, AbsentIsSilentUnreadableIsSaidOnce) {
  testing::TempDir root;
  std::string note;
  EXPECT_FALSE(KernelWatch::Start(HostFs(root.path()), &note));
  EXPECT_EQ(note, "") << "no /dev/kmsg (a container): nothing to say";
  root.Write("dev/kmsg/x", "");  // a directory where the log should be
  EXPECT_FALSE(KernelWatch::Start(HostFs(root.path()), &note));
  EXPECT_NE(note.find("kernel log not followed"), std::string::npos) << note;
}

}  // namespace
}  // namespace sparkops::guard
