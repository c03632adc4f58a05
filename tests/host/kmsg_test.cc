#include "host/kmsg.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "host/kmsg_reader.h"
#include "test_util.h"

namespace sparkops {
namespace {

TEST(ParseKmsgRecord, Table) {
  struct Case {
    const char* name;
    const char* text;
    bool ok;
    int priority, facility;
    uint64_t seq, usec;
    const char* body;
    size_t dict;
  } cases[] = {
      {"plain", "6,0,0,-;Booting Linux", true, 6, 0, 0, 0, "Booting Linux", 0},
      {"facility", "30,7,1200,c;systemd started", true, 6, 3, 7, 1200, "systemd started", 0},
      {"extra header fields", "4,12,345,-,caller=T1;x", true, 4, 0, 12, 345, "x", 0},
      {"continuation", "3,9,10,-;NVRM: Xid\n SUBSYSTEM=pci\n DEVICE=+pci:000f:01:00.0\n", true, 3, 0, 9, 10,
       "NVRM: Xid", 2},
      {"empty text", "6,1,2,-;", true, 6, 0, 1, 2, "", 0},
      {"semicolon in text", "6,1,2,-;a;b", true, 6, 0, 1, 2, "a;b", 0},
      {"no semicolon", "6,1,2,- text", false, 0, 0, 0, 0, "", 0},
      {"three fields", "6,1,2;text", false, 0, 0, 0, 0, "", 0},
      {"bad seq", "6,x,2,-;t", false, 0, 0, 0, 0, "", 0},
      {"negative usec", "6,1,-2,-;t", false, 0, 0, 0, 0, "", 0},
      {"bad continuation", "6,1,2,-;t\nnot indented", false, 0, 0, 0, 0, "", 0},
      {"empty", "", false, 0, 0, 0, 0, "", 0},
  };
  for (const auto& c : cases) {
    auto r = ParseKmsgRecord(c.text);
    ASSERT_EQ(r.has_value(), c.ok) << c.name;
    if (!r) {
      EXPECT_NE(r.error().message.find("kmsg record"), std::string::npos) << c.name;
      continue;
    }
    EXPECT_EQ(r->priority, c.priority) << c.name;
    EXPECT_EQ(r->facility, c.facility) << c.name;
    EXPECT_EQ(r->seq, c.seq) << c.name;
    EXPECT_EQ(r->usec, c.usec) << c.name;
    EXPECT_EQ(r->text, c.body) << c.name;
    EXPECT_EQ(r->dict.size(), c.dict) << c.name;
  }
}

TEST(MatchKernelSign, Table) {
  struct Case {
    const char* text;
    std::optional<KernelSignKind> kind;
    std::optional<int> xid;
    std::optional<int64_t> pid;
    const char* name;
  } cases[] = {
      // vllm-project/vllm#56824 (GB10, driver 580.95.05)
      {"NVRM: nvCheckOkFailedNoLog: Check failed: Out of memory [NV_ERR_NO_MEMORY] (0x00000051) returned from "
       "_memdescAllocInternal(pMemDesc) @ mem_desc.c:1359",
       KernelSignKind::kNvrmNoMemory,
       {},
       {},
       ""},
      // leptonai/gpud#46
      {"NVRM: Xid (PCI:0000:cb:00): 109, pid=1797828, name=pt_main_thread, Ch 00000008, errorString CTX SWITCH "
       "TIMEOUT, Info 0x58005",
       KernelSignKind::kXid, 109, 1797828, "pt_main_thread"},
      {"NVRM: Xid (PCI:0000:cb:00): 13, pid='<unknown>', name=<unknown>, Graphics SM Warp Exception on (GPC 7, TPC "
       "7, SM 0): Illegal Instruction Parameter",
       KernelSignKind::kXid,
       13,
       {},
       ""},
      // NVIDIA/open-gpu-kernel-modules#1150
      {"NVRM: Xid (PCI:0000:dc:00): 45, pid=1818990, name=python3, Ch 00000001 caused by previous Xid 149",
       KernelSignKind::kXid, 45, 1818990, "python3"},
      {"NVRM: Xid (PCI:0000:dc:00): abc", {}, {}, {}, ""},
      {"Out of memory: Killed process 4821 (python3) total-vm:98765432kB, anon-rss:65432100kB",
       KernelSignKind::kOomKill,
       {},
       4821,
       "python3"},
      {"Memory cgroup out of memory: Killed process 77 (pt_main_thread) total-vm:1kB",
       KernelSignKind::kOomKill,
       {},
       77,
       "pt_main_thread"},
      {"oom-kill:constraint=CONSTRAINT_NONE,nodemask=(null),cpuset=/,mems_allowed=0,global_oom,task_memcg=/"
       "user.slice,task=python3,pid=4821,uid=1000",
       KernelSignKind::kOomKill,
       {},
       4821,
       "python3"},
      {"INFO: task kworker/u40:2:1234 blocked for more than 122 seconds.",
       KernelSignKind::kHungTask,
       {},
       1234,
       "kworker/u40:2"},
      {"watchdog: BUG: soft lockup - CPU#7 stuck for 26s! [python3:48300]",
       KernelSignKind::kSoftLockup,
       {},
       48300,
       "python3"},
      {"watchdog: Watchdog detected hard LOCKUP on cpu 5", KernelSignKind::kSoftLockup, {}, {}, ""},
      {"python3 invoked oom-killer: gfp_mask=0x140cca(GFP_HIGHUSER_MOVABLE|__GFP_COMP), order=0", {}, {}, {}, ""},
      {"NVRM: loading NVIDIA UNIX Open Kernel Module for aarch64  580.95.05", {}, {}, {}, ""},
      {"NV_ERR_NO_MEMORY in a user's message without the driver's tag", {}, {}, {}, ""},
  };
  for (const auto& c : cases) {
    KmsgRecord r;
    r.seq = 5;
    r.text = c.text;
    auto s = MatchKernelSign(r);
    ASSERT_EQ(s.has_value(), c.kind.has_value()) << c.text;
    if (!s) continue;
    EXPECT_EQ(s->kind, *c.kind) << c.text;
    EXPECT_EQ(s->xid, c.xid) << c.text;
    EXPECT_EQ(s->pid, c.pid) << c.text;
    EXPECT_EQ(s->name, c.name) << c.text;
    EXPECT_EQ(s->seq, 5u);
  }
}

TEST(KernelSignTable, OneRowPerKindInOrder) {
  const auto& t = KernelSignTable();
  ASSERT_EQ(t.size(), 5u);
  for (size_t i = 0; i < t.size(); ++i) {
    EXPECT_EQ(static_cast<size_t>(t[i].kind), i);
    EXPECT_EQ(std::string("kernel_") + t[i].name, t[i].event);
  }
}

TEST(ReadKernelSignals, WedgeFixtureCountsSinceBoot) {
  HostFs fs(testing::Fixture("wedge"));
  auto s = ReadKernelSignals(fs);
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_EQ(s->records, 11u);
  EXPECT_EQ(s->count(KernelSignKind::kNvrmNoMemory), 2u);
  EXPECT_EQ(s->count(KernelSignKind::kXid), 1u);
  EXPECT_EQ(s->count(KernelSignKind::kOomKill), 1u);  // the oom-kill: line and Killed process: one kill
  EXPECT_EQ(s->count(KernelSignKind::kHungTask), 1u);
  EXPECT_EQ(s->count(KernelSignKind::kSoftLockup), 1u);
  EXPECT_EQ(*s->last_seq, 1540u);
  const KernelSign* oom = s->Last(KernelSignKind::kOomKill);
  ASSERT_NE(oom, nullptr);
  EXPECT_EQ(*oom->pid, 48211);
  EXPECT_NE(oom->line.find("Killed process"), std::string::npos);
  // Only what came after a sequence number (sample/run/guard follow the log from now on).
  auto later = ReadKernelSignals(fs, 1482);
  ASSERT_TRUE(later);
  EXPECT_EQ(later->count(KernelSignKind::kNvrmNoMemory), 0u);
  EXPECT_EQ(later->count(KernelSignKind::kOomKill), 1u);
}

TEST(KmsgReader, FollowsRecordsAppendedWhileOpen) {
  testing::TempDir dir;
  std::filesystem::create_directories(dir.path() + "/dev");
  const std::string path = dir.path() + "/dev/kmsg";
  { std::ofstream(path) << "6,1,10,-;hello\n"; }
  HostFs fs(dir.path());
  auto r = KmsgReader::Open(fs);
  ASSERT_TRUE(r) << r.error().message;
  KernelSignals s;
  ASSERT_TRUE(r->Poll(&s));
  EXPECT_EQ(s.records, 1u);
  {
    std::ofstream out(path, std::ios::app);
    out << "4,2,20,-;NVRM: Out of memory [NV_ERR_NO_MEMORY]\n4,3,3";  // the last record is not complete yet
  }
  ASSERT_TRUE(r->Poll(&s));
  EXPECT_EQ(s.records, 2u);
  EXPECT_EQ(s.count(KernelSignKind::kNvrmNoMemory), 1u);
  { std::ofstream(path, std::ios::app) << "0,bad;x\n;\n"; }
  ASSERT_TRUE(r->Poll(&s));
  EXPECT_EQ(s.records, 3u);  // "4,3,30,bad;x" completed the partial record; ";" is malformed
  EXPECT_EQ(r->bad_records(), 1u);
}

TEST(KmsgReader, MissingAndNonFileAreValues) {
  testing::TempDir dir;
  HostFs fs(dir.path());
  auto missing = KmsgReader::Open(fs);
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().kind, Error::Kind::kNotFound);
  std::filesystem::create_directories(dir.path() + "/dev/kmsg");
  auto dirk = KmsgReader::Open(fs);
  ASSERT_FALSE(dirk);
  EXPECT_NE(dirk.error().message.find("dev/kmsg"), std::string::npos);
}

}  // namespace
}  // namespace sparkops
