// The I/O rate of the top consumers a host_contention event names (issue #24): the pure
// /proc/PID/io parser (table, malformed input), the rate between readings, and JobCpuTracker
// reading /proc/PID/io under a fixture root: a reading where the file is readable, the key
// absent (never 0) where it is not.
#include <gtest/gtest.h>

#include <chrono>

#include "host/proc_io.h"
#include "telemetry/job_tree.h"
#include "test_util.h"

namespace sparkops {
namespace {

using Clock = std::chrono::steady_clock;
using testing::TempDir;

std::string Io(uint64_t read, uint64_t write) {
  return "rchar: 9999\nwchar: 8888\nsyscr: 10\nsyscw: 20\nread_bytes: " + std::to_string(read) +
         "\nwrite_bytes: " + std::to_string(write) + "\ncancelled_write_bytes: 4096\n";
}

TEST(ProcIo, ParserTable) {
  struct Case {
    const char* text;
    bool ok;
    uint64_t read, write;
    const char* error;  // a word the error names
  };
  const Case cases[] = {
      {"rchar: 1\nwchar: 2\nsyscr: 3\nsyscw: 4\nread_bytes: 4096\nwrite_bytes: 8192\ncancelled_write_bytes: 0\n", true,
       4096, 8192, ""},
      {"write_bytes: 7\nread_bytes: 5", true, 5, 7, ""},                          // any order, no final newline
      {"read_bytes:   0\nwrite_bytes:\t0\n", true, 0, 0, ""},                       // a real 0 is a reading
      {"read_bytes: 18446744073709551615\nwrite_bytes: 0\n", true, UINT64_MAX, 0, ""},
      {"", false, 0, 0, "read_bytes"},
      {"rchar: 1\nwchar: 2\n", false, 0, 0, "read_bytes"},
      {"read_bytes: 1\n", false, 0, 0, "write_bytes"},
      {"read_bytes: -1\nwrite_bytes: 0\n", false, 0, 0, "read_bytes"},
      {"read_bytes: 1.5\nwrite_bytes: 0\n", false, 0, 0, "read_bytes"},
      {"read_bytes: 1\nwrite_bytes: 12x\n", false, 0, 0, "write_bytes"},
      {"read_bytes: 1\nwrite_bytes: \n", false, 0, 0, "write_bytes"},
      {"read_bytes: 18446744073709551616\nwrite_bytes: 0\n", false, 0, 0, "read_bytes"},  // past uint64
      {"read_bytes: 1\nread_bytes: 2\nwrite_bytes: 0\n", false, 0, 0, "twice"},
      {"read_bytes 1\nwrite_bytes 2\n", false, 0, 0, "read_bytes"},               // no colon: not the field
  };
  for (const Case& c : cases) {
    auto io = ParseProcIo(c.text);
    ASSERT_EQ(io.has_value(), c.ok) << c.text;
    if (c.ok) {
      EXPECT_EQ(io->read_bytes, c.read) << c.text;
      EXPECT_EQ(io->write_bytes, c.write) << c.text;
    } else {
      EXPECT_NE(io.error().message.find(c.error), std::string::npos) << c.text << " -> " << io.error().message;
    }
  }
}

TEST(ProcIo, RateBetweenReadings) {
  const auto t0 = Clock::now();
  EXPECT_DOUBLE_EQ(*IoBytesPerSecond({7, 1000, t0}, {7, 5000, t0 + std::chrono::seconds(2)}), 2000.0);
  EXPECT_DOUBLE_EQ(*IoBytesPerSecond({7, 1000, t0}, {7, 1000, t0 + std::chrono::seconds(1)}), 0.0);
  EXPECT_FALSE(IoBytesPerSecond({7, 1000, t0}, {8, 5000, t0 + std::chrono::seconds(1)}));  // a reused pid
  EXPECT_FALSE(IoBytesPerSecond({7, 5000, t0}, {7, 1000, t0 + std::chrono::seconds(1)}));  // went back
  EXPECT_FALSE(IoBytesPerSecond({7, 1000, t0}, {7, 5000, t0 + std::chrono::milliseconds(50)}));
}

std::string Stat(uint32_t pid, const std::string& comm, uint32_t ppid, uint64_t ticks, uint64_t start) {
  return std::to_string(pid) + " (" + comm + ") R " + std::to_string(ppid) + " 1 1 0 -1 4194304 10 0 0 0 " +
         std::to_string(ticks) + " 0 0 0 20 0 1 0 " + std::to_string(start) + " 1000 100 0\n";
}

// A fixture /proc: the job (10), a writer whose io is readable (20), a hog without a readable io
// file (21: another user's process) and one whose io file is malformed (22).
void WriteTree(const TempDir& root, uint64_t ticks, uint64_t written, uint64_t start20 = 500) {
  root.Write("proc/10/stat", Stat(10, "python", 1, ticks, 100));
  root.Write("proc/20/stat", Stat(20, "dd", 1, ticks * 2, start20));
  root.Write("proc/20/cmdline", std::string("dd\0if=/dev/zero\0of=big", 22));
  root.Write("proc/20/io", Io(0, written));
  root.Write("proc/21/stat", Stat(21, "sha256sum", 1, ticks * 3, 600));
  root.Write("proc/22/stat", Stat(22, "odd", 1, ticks, 700));
  root.Write("proc/22/io", "read_bytes: lots\nwrite_bytes: 1\n");
}

TEST(JobTreeIo, TopConsumersCarryTheirIoRateWhereReadable) {
  TempDir root;
  HostFs fs(root.path());
  JobCpuTracker tr(10, 0, 100.0);
  const auto t0 = Clock::now();
  WriteTree(root, 100, 0);
  EXPECT_FALSE(tr.Update(fs, t0));  // primes the CPU counters
  WriteTree(root, 200, 1'000'000);
  auto first = tr.Update(fs, t0 + std::chrono::seconds(1));
  ASSERT_TRUE(first);
  ASSERT_EQ(first->top_outside.size(), 3u);
  for (const Consumer& c : first->top_outside) EXPECT_FALSE(c.io_bytes_per_s) << c.pid << ": no earlier reading";
  WriteTree(root, 300, 9'000'000);
  auto s = tr.Update(fs, t0 + std::chrono::seconds(3));
  ASSERT_TRUE(s);
  ASSERT_EQ(s->top_outside.size(), 3u);
  EXPECT_EQ(s->top_outside[0].pid, 21u);  // highest cores first
  EXPECT_FALSE(s->top_outside[0].io_bytes_per_s);  // no io file
  EXPECT_EQ(s->top_outside[1].pid, 20u);
  EXPECT_EQ(s->top_outside[1].cmdline, "dd if=/dev/zero of=big");
  ASSERT_TRUE(s->top_outside[1].io_bytes_per_s);
  EXPECT_DOUBLE_EQ(*s->top_outside[1].io_bytes_per_s, 4'000'000.0);  // 8 MB over 2 s
  EXPECT_EQ(s->top_outside[2].pid, 22u);
  EXPECT_FALSE(s->top_outside[2].io_bytes_per_s);  // malformed: no reading

  HostPressure p;
  p.source = "psi";
  p.io_some = 40;
  std::optional<Clock::time_point> last;
  auto e = ContentionEvent(p, s, t0 + std::chrono::seconds(3), &last);
  ASSERT_TRUE(e);
  EXPECT_EQ((*e)["pressure"], "io");
  EXPECT_FALSE((*e)["top"][0].contains("io_bytes_per_s"));  // absent, not 0
  EXPECT_DOUBLE_EQ((*e)["top"][1]["io_bytes_per_s"].get<double>(), 4'000'000.0);
  EXPECT_FALSE((*e)["top"][2].contains("io_bytes_per_s"));

  // pid 20 reused by another process: its counter is not that process's, so no rate
  WriteTree(root, 400, 1'000, /*start20=*/9999);
  auto r = tr.Update(fs, t0 + std::chrono::seconds(4));
  ASSERT_TRUE(r);
  for (const Consumer& c : r->top_outside) EXPECT_FALSE(c.io_bytes_per_s) << c.pid;
}

TEST(JobTreeIo, EachListedConsumerGetsItsOwnRate) {
  // 40 busy processes outside the job, each with its own I/O counter; top_n 2 lists the two busiest.
  TempDir root;
  HostFs fs(root.path());
  JobCpuTracker tr(10, 0, 100.0);
  const auto t0 = Clock::now();
  auto write = [&](uint64_t k) {
    root.Write("proc/10/stat", Stat(10, "job", 1, k, 1));
    for (uint32_t pid = 100; pid < 140; ++pid) {
      root.Write("proc/" + std::to_string(pid) + "/stat", Stat(pid, "w", 1, k * (pid - 99), pid));
      root.Write("proc/" + std::to_string(pid) + "/io", Io(k * pid, 0));
    }
  };
  write(10);
  EXPECT_FALSE(tr.Update(fs, t0));
  write(20);
  ASSERT_TRUE(tr.Update(fs, t0 + std::chrono::seconds(1), 2));
  write(30);
  auto s = tr.Update(fs, t0 + std::chrono::seconds(2), 2);
  ASSERT_TRUE(s);
  ASSERT_EQ(s->top_outside.size(), 2u);
  EXPECT_EQ(s->top_outside[0].pid, 139u);
  EXPECT_DOUBLE_EQ(*s->top_outside[0].io_bytes_per_s, 10.0 * 139);
  EXPECT_EQ(s->top_outside[1].pid, 138u);
}

}  // namespace
}  // namespace sparkops
