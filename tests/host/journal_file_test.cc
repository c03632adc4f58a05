// issue 33: the journal file reader (host/journal_file.h) on files written by tests/journal_writer.h,
// in both layouts, and on damaged ones.
#include "host/journal_file.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>

#include "journal_writer.h"
#include "test_util.h"

namespace sparkops {
namespace {

using testing::JournalEntryIn;
using testing::JournalWriter;

constexpr const char* kBoot = "1f0e9b7c3a2d4e8f8c6b5d4a3b2c1e00";
constexpr const char* kOther = "00112233445566778899aabbccddeeff";
constexpr const char* kNoMem =
    "NVRM: nvCheckOkFailedNoLog: Check failed: Out of memory [NV_ERR_NO_MEMORY] (0x00000051) returned from "
    "_memdescAllocInternal(pMemDesc) @ mem_desc.c:1359";

std::vector<JournalEntryIn> Entries() {
  return {
      {1764410000000000, kBoot, {"_TRANSPORT=kernel", "MESSAGE=Linux version 6.17.0-1008-nvidia", "PRIORITY=5"}, {}},
      {1764410100000000, kBoot, {"_TRANSPORT=journal", "MESSAGE=Started sshd.service", "_BOOT_ID=1f0e"}, {}},
      {1764410200000000, kOther, {"_TRANSPORT=kernel", "MESSAGE=NVRM: from another boot"}, {}},
      {1764410300000000, kBoot, {"PRIORITY=4", "_TRANSPORT=kernel", std::string("MESSAGE=") + kNoMem}, {}},
      {1764410400000000, kBoot, {"_TRANSPORT=kernel", "MESSAGE=a long message stored compressed"}, {false, true}},
      {1764410500000000, kBoot, {"MESSAGE=NVRM: Xid (PCI:000f:01:00): 109, pid=1, name=x", "_TRANSPORT=kernel"}, {}},
  };
}

TEST(ScanJournal, ReadsTheKernelRecordsOfOneBootInBothLayouts) {
  for (bool compact : {false, true}) {
    SCOPED_TRACE(compact ? "compact" : "regular");
    const std::string file = JournalWriter(compact).Build(Entries(), 4);  // two arrays, chained
    auto s = ScanJournal(file, "1f0e9b7c-3a2d-4e8f-8c6b-5d4a3b2c1e00");  // /proc's form, with dashes
    ASSERT_TRUE(s) << s.error().message;
    ASSERT_EQ(s->records.size(), 3u);
    EXPECT_EQ(s->records[0].message, "Linux version 6.17.0-1008-nvidia");
    EXPECT_EQ(s->records[1].message, kNoMem);
    EXPECT_EQ(s->records[1].realtime_us, 1764410300000000u);
    EXPECT_EQ(s->records[1].boot_id, kBoot);
    EXPECT_EQ(s->records[2].message, "NVRM: Xid (PCI:000f:01:00): 109, pid=1, name=x");
    EXPECT_EQ(s->compressed, 1u) << "the compressed MESSAGE is counted, not read";
    EXPECT_EQ(s->bad, 0u);
    auto all = ScanJournal(file, "");
    ASSERT_TRUE(all);
    EXPECT_EQ(all->records.size(), 4u) << "every boot's kernel records";
  }
}

TEST(ScanJournal, DamagedFilesYieldWhatLiesBeforeTheDamage) {
  const std::string good = JournalWriter(false).Build(Entries(), 4);
  EXPECT_FALSE(ScanJournal("", kBoot));
  EXPECT_FALSE(ScanJournal(std::string(300, 'x'), kBoot)) << "no signature";
  EXPECT_FALSE(ScanJournal(good.substr(0, 100), kBoot)) << "a header cut short";
  std::string flags = good;
  flags[12] = 0x40;  // an incompatible feature this reader does not know
  EXPECT_FALSE(ScanJournal(flags, kBoot));
  // Cut inside the second entry array (a crashed boot's journal~): the first array's records.
  for (size_t cut = 272; cut < good.size(); cut += 37) {
    auto s = ScanJournal(good.substr(0, cut), kBoot);
    ASSERT_TRUE(s) << cut;
    EXPECT_LE(s->records.size(), 3u);
  }
  // The chain pointing back at itself: read once, no loop.
  testing::JournalWriter w(false);
  std::string looped = w.Build(Entries(), 8);
  uint64_t first = 0;
  for (int i = 7; i >= 0; --i) first = (first << 8) | static_cast<unsigned char>(looped[176 + static_cast<size_t>(i)]);
  for (int i = 0; i < 8; ++i)
    looped[first + 16 + static_cast<uint64_t>(i)] = static_cast<char>((first >> (8 * i)) & 0xff);
  auto s = ScanJournal(looped, kBoot);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->records.size(), 3u);
  EXPECT_EQ(s->bad, 1u);
  // An entry offset that points outside the file or off alignment: skipped and counted.
  std::string odd = good;
  for (int i = 0; i < 8; ++i) odd[first + 24 + static_cast<uint64_t>(i)] = static_cast<char>(i == 0 ? 3 : 0);
  auto o = ScanJournal(odd, kBoot);
  ASSERT_TRUE(o);
  EXPECT_EQ(o->records.size(), 2u);
  EXPECT_GE(o->bad, 1u);
}

// The writer against the real format: where journalctl is installed, it reads the file back
// (SPARKOPS_JOURNALCTL=path overrides; skipped without one).
TEST(ScanJournal, JournalctlReadsTheWritersFile) {
  const char* env = std::getenv("SPARKOPS_JOURNALCTL");
  std::string jctl = env ? env : "/usr/bin/journalctl";
  if (::access(jctl.c_str(), X_OK) != 0) GTEST_SKIP() << "no journalctl";
  testing::TempDir d;
  for (bool compact : {false, true}) {
    const std::string path = d.path() + (compact ? "/compact.journal" : "/regular.journal");
    auto entries = Entries();
    entries.erase(entries.begin() + 4);  // journalctl would try to decompress the fake compressed object
    std::ofstream(path, std::ios::binary) << JournalWriter(compact).Build(entries, 4);
    std::string out;
    if (FILE* p = ::popen((jctl + " --file=" + path + " -o cat --no-pager 2>&1").c_str(), "r")) {
      char buf[4096];
      for (size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
      ::pclose(p);
    }
    EXPECT_NE(out.find("NV_ERR_NO_MEMORY"), std::string::npos) << out;
    EXPECT_NE(out.find("Started sshd.service"), std::string::npos) << out;
  }
}

}  // namespace
}  // namespace sparkops
