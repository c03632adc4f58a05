#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "analysis/line_reader.h"
#include "analysis/mapped_range.h"
#include "analysis/parallel_lines.h"
#include "test_util.h"

namespace sparkops {
namespace {

using testing::TempDir;

/// `lines` lines of ~60 bytes: "line N ...\n".
std::string Lines(int lines) {
  std::string s;
  for (int i = 0; i < lines; ++i) s += "line " + std::to_string(i) + " " + std::string(50, 'x') + "\n";
  return s;
}

TEST(MappedRange, PagesLostToATruncationReadAsZerosAndMarkTheRangeDamaged) {
  TempDir d;
  std::string path = d.Write("f", std::string(3 * 65536, 'a'));
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  auto m = MappedRange::Map(fd, 100, 3 * 65536 - 100);  // not page-aligned: data() is offset 100
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(m->data()[0], 'a');
  EXPECT_FALSE(m->Damaged());
  ASSERT_EQ(::truncate(path.c_str(), 65536), 0);
  EXPECT_EQ(m->data()[65536 - 101], 'a') << "still inside the file";
  EXPECT_FALSE(m->Damaged());
  EXPECT_EQ(m->data()[2 * 65536], 0) << "past the new end: a page of zeros, not a SIGBUS";
  EXPECT_TRUE(m->Damaged());
  auto other = MappedRange::Map(fd, 0, 4096);
  ASSERT_TRUE(other);
  EXPECT_FALSE(other->Damaged()) << "damage belongs to the range that saw it";
  ::close(fd);
}

TEST(MappedRange, ASigbusThatIsNotOursStillEndsTheProcess) {
  TempDir d;
  std::string path = d.Write("f", std::string(65536, 'a'));
  for (bool sent : {false, true}) {
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      int fd = ::open(path.c_str(), O_RDWR);
      auto guard = MappedRange::Map(fd, 0, 4096);  // installs the handler
      if (!guard) ::_exit(3);
      if (sent) {
        ::raise(SIGBUS);
      } else {  // a mapping of someone else's, past the end of its file
        auto* p = static_cast<volatile char*>(::mmap(nullptr, 65536, PROT_READ, MAP_PRIVATE, fd, 0));
        if (::ftruncate(fd, 0) != 0) ::_exit(4);
        (void)p[8192];
      }
      ::_exit(0);  // survived: the handler swallowed a SIGBUS that was not its own
    }
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    // Killed by SIGBUS, or (under ASan, whose handler was there before) reported and exited 1.
    EXPECT_FALSE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << (sent ? "raised" : "a fault") << " was swallowed";
    EXPECT_FALSE(WIFEXITED(status) && WEXITSTATUS(status) > 1) << "setup failed in the child";
  }
}

TEST(MappedRange, TooManyLiveRangesIsAnErrorNotAnUnguardedMapping) {
  TempDir d;
  std::string path = d.Write("f", "abc");
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  std::vector<MappedRange> live;
  for (size_t i = 0; i < MappedRange::kMaxLive; ++i) {
    auto m = MappedRange::Map(fd, 0, 3);
    ASSERT_TRUE(m) << i;
    live.push_back(std::move(*m));
  }
  auto extra = MappedRange::Map(fd, 0, 3);
  ASSERT_FALSE(extra);
  EXPECT_NE(extra.error().message.find("too many"), std::string::npos);
  live.pop_back();
  EXPECT_TRUE(MappedRange::Map(fd, 0, 3)) << "a released slot is reused";
  ::close(fd);
}

TEST(LineReader, FileTruncatedWhileReadIsAnErrorNamingIt) {
  TempDir d;
  std::string path = d.Write("log", Lines(100000));
  size_t seen = 0;
  auto r = ForEachLine(path, [&](std::string_view, uint64_t) {
    if (++seen == 10) {
      EXPECT_EQ(::truncate(path.c_str(), 0), 0);
    }
    return true;
  });
  ASSERT_FALSE(r) << "lines after the truncation were read as zeros: the result is not complete";
  EXPECT_NE(r.error().message.find(path), std::string::npos);
  EXPECT_NE(r.error().message.find("shrank"), std::string::npos);
}

struct TruncatingSegment : LineSegment {
  explicit TruncatingSegment(const std::string& p) : path(p) {}
  void Line(std::string_view, bool) override {
    if (++seen == 10) {
      EXPECT_EQ(::truncate(path.c_str(), 0), 0);
    }
  }
  void Clear() override {}
  std::string path;
  size_t seen = 0;
};

TEST(ParallelLines, FileTruncatedWhileReadIsAnErrorNamingIt) {
  TempDir d;
  std::string path = d.Write("log", Lines(100000));  // ~6 MB: 6 segments of 1 MiB
  auto r = ForEachLineParallel(
      path, [&] { return std::make_unique<TruncatingSegment>(path); }, [](LineSegment&) {}, {2, 1u << 20});
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find(path), std::string::npos);
  EXPECT_NE(r.error().message.find("shrank"), std::string::npos);
}

}  // namespace
}  // namespace sparkops
