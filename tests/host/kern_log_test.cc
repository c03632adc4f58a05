// issue 33: rsyslog's kern.log read back (host/kern_log.h): the kernel text of a line, and the lines
// of the boot before the current one.
#include "host/kern_log.h"

#include <gtest/gtest.h>

namespace sparkops {
namespace {

TEST(KernLogText, Table) {
  struct Case {
    const char* line;
    const char* text;
    bool has_t;
    double t;
  } cases[] = {
      {"Nov 29 10:41:07 spark-01 kernel: [ 2467.115022] NVRM: Xid (PCI:000f:01:00): 109, pid=1, name=x",
       "NVRM: Xid (PCI:000f:01:00): 109, pid=1, name=x", true, 2467.115022},
      {"2026-11-29T10:41:07.123456+00:00 spark-01 kernel: [    0.000000] Booting Linux on physical CPU 0x0",
       "Booting Linux on physical CPU 0x0", true, 0},
      {"Nov 29 10:41:07 spark-01 kernel: NVRM: no timestamp", "NVRM: no timestamp", false, 0},
      {"Nov 29 10:41:07 spark-01 systemd[1]: Started x.", "", false, 0},
      {"h kernel: [ 1.0] a short prefix is fine", "a short prefix is fine", true, 1.0},
      {"", "", false, 0},
      {"Nov 29 10:41:07 spark-01 kernel: [ abc] not a time", "[ abc] not a time", false, 0},
  };
  for (const auto& c : cases) {
    double t = -1;
    bool has_t = false;
    EXPECT_EQ(KernLogText(c.line, &t, &has_t), c.text) << c.line;
    EXPECT_EQ(has_t, c.has_t) << c.line;
    if (c.has_t) {
      EXPECT_DOUBLE_EQ(t, c.t) << c.line;
    }
  }
}

TEST(PreviousBootKernLines, TheBootBeforeTheLastOne) {
  const std::string k = " spark-01 kernel: ";
  const std::string two_boots =
      "Nov 29 09:00:00" + k + "[ 4000.000000] usb 1-1: tail of an older boot\n" + "Nov 29 09:30:00" + k +
      "[    0.000000] Booting Linux on physical CPU 0x0000000000 [0x410fd871]\n" + "Nov 29 09:30:00" + k +
      "[    0.000000] Linux version 6.17.0-1008-nvidia\n" + "Nov 29 09:30:01 spark-01 systemd[1]: not a kernel line\n" +
      "Nov 29 10:41:07" + k + "[ 4267.115022] NVRM: nvAssertFailedNoLog: Assertion failed: NV_ERR_NO_MEMORY\n" +
      "Nov 29 11:02:00" + k + "[    0.000000] Booting Linux on physical CPU 0x0000000000 [0x410fd871]\n" +
      "Nov 29 11:02:00" + k + "[    0.000000] Linux version 6.17.0-1008-nvidia\n" + "Nov 29 11:02:05" + k +
      "[    5.000000] the current boot\n";
  auto prev = PreviousBootKernLines(two_boots);
  ASSERT_EQ(prev.size(), 3u);
  EXPECT_EQ(prev[0], "Booting Linux on physical CPU 0x0000000000 [0x410fd871]");
  EXPECT_EQ(prev[2], "NVRM: nvAssertFailedNoLog: Assertion failed: NV_ERR_NO_MEMORY");
  // One boot only (the current one): nothing is the previous boot's.
  EXPECT_TRUE(PreviousBootKernLines("Nov 29 11:02:00" + k + "[    0.000000] Linux version 6\n" + "Nov 29 11:02:05" + k +
                                    "[    5.000000] x\n")
                  .empty());
  // Without timestamps a boot starts at "Linux version".
  auto plain = PreviousBootKernLines("Nov 29 09:00:00" + k + "Linux version 6\n" + "Nov 29 10:00:00" + k +
                                     "Out of memory: Killed process 4821 (python3)\n" + "Nov 29 11:00:00" + k +
                                     "Linux version 6\n");
  ASSERT_EQ(plain.size(), 2u);
  EXPECT_EQ(plain[1], "Out of memory: Killed process 4821 (python3)");
  EXPECT_TRUE(PreviousBootKernLines("").empty());
}

// logrotate moved the previous boot into kern.log.1: read before kern.log, a boot that began in one
// goes on in the next, and the boot before the last one is found across the two.
TEST(PreviousBootKernLines, AcrossARotation) {
  const std::string k = " spark-01 kernel: ";
  const std::string rotated = "Nov 29 09:30:00" + k + "[    0.000000] Linux version 6.17.0-1008-nvidia\n" +
                              "Nov 29 10:41:07" + k + "[ 4267.115022] NVRM: Xid (PCI:000f:01:00): 109, pid=1\n";
  const std::string current = "Nov 29 11:02:00" + k + "[    0.000000] Linux version 6.17.0-1008-nvidia\n" +
                              "Nov 29 11:02:05" + k + "[    5.000000] the current boot\n";
  EXPECT_TRUE(PreviousBootKernLines(current).empty()) << "kern.log alone starts in the current boot";
  const std::string_view both[] = {rotated, current};
  auto prev = PreviousBootKernLines(both);
  ASSERT_EQ(prev.size(), 2u);
  EXPECT_EQ(prev[1], "NVRM: Xid (PCI:000f:01:00): 109, pid=1");
  // Rotated in the middle of the previous boot: its lines from both files, in order.
  const std::string head = "Nov 29 09:30:00" + k + "[    0.000000] Linux version 6\n";
  const std::string rest = "Nov 29 10:41:07" + k + "[ 4267.000000] NVRM: nvAssertFailedNoLog: NV_ERR_NO_MEMORY\n" +
                           "Nov 29 11:02:00" + k + "[    0.000000] Linux version 6\n";
  const std::string_view split[] = {head, rest};
  prev = PreviousBootKernLines(split);
  ASSERT_EQ(prev.size(), 2u);
  EXPECT_EQ(prev[0], "Linux version 6");
  EXPECT_EQ(prev[1], "NVRM: nvAssertFailedNoLog: NV_ERR_NO_MEMORY");
}

}  // namespace
}  // namespace sparkops
