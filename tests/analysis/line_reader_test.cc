#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>
#include <random>
#include <thread>

#include "analysis/line_reader.h"
#include "analysis/parallel_lines.h"
#include "test_util.h"

namespace sparkops {
namespace {

using testing::TempDir;

std::vector<std::string> Collect(const std::string& path, size_t window, LineReadStats* st = nullptr) {
  std::vector<std::string> lines;
  auto r = ForEachLine(
      path,
      [&](std::string_view l, uint64_t) {
        lines.emplace_back(l);
        return true;
      },
      window);
  EXPECT_TRUE(r) << (r ? "" : r.error().message);
  if (r && st) *st = *r;
  return lines;
}

std::string Content() {
  std::string s;
  for (int i = 0; i < 3000; ++i)
    s += "line " + std::to_string(i) + std::string(static_cast<size_t>(i % 97), 'x') + "\n";
  s += std::string(kMaxLineBytes + 5000, 'L') + "\n";  // over-long: cut at kMaxLineBytes
  s += "after the long one\nno newline at the end";
  return s;
}

TEST(LineReader, MappedWindowsGiveTheSameLinesAsOneWindow) {
  TempDir d;
  std::string path = d.Write("log", Content());
  LineReadStats small{}, big{};
  auto a = Collect(path, 4096, &small);  // lines cross window boundaries
  auto b = Collect(path, 64u << 20, &big);
  ASSERT_EQ(a.size(), 3003u);
  EXPECT_EQ(a, b);
  EXPECT_EQ(a[0], "line 0");
  EXPECT_EQ(a[2999].substr(0, 9), "line 2999");
  EXPECT_EQ(a[3000].size(), kMaxLineBytes);
  EXPECT_EQ(a[3001], "after the long one");
  EXPECT_EQ(a[3002], "no newline at the end");
  EXPECT_EQ(small.truncated_lines, 1u);
  EXPECT_TRUE(small.last_unterminated && big.last_unterminated) << "the content ends without a newline";
  EXPECT_EQ(small.bytes, Content().size());
}

TEST(LineReader, PipesAreReadInBlocks) {
  TempDir d;
  std::string fifo = d.path() + "/fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::thread writer([&] { std::ofstream(fifo) << "a\nbb\r\nccc"; });
  auto lines = Collect(fifo, 4096);
  writer.join();
  EXPECT_EQ(lines, (std::vector<std::string>{"a", "bb\r", "ccc"}));
}

TEST(LineReader, MissingFileIsAnInputErrorNamingIt) {
  auto r = ForEachLine("/nonexistent/x.log", [](std::string_view, uint64_t) { return true; });
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("/nonexistent/x.log"), std::string::npos);
}

struct CollectSegment : LineSegment {
  void Line(std::string_view l, bool may_have_cr) override {
    lines.emplace_back(l);
    if (may_have_cr) return;
    ++said_no_cr;
    EXPECT_EQ(l.find('\r'), std::string_view::npos) << "the hint promised no '\\r' in: " << l;
  }
  void Clear() override {
    lines.clear();
    said_no_cr = 0;
  }
  std::vector<std::string> lines;
  size_t said_no_cr = 0;
};

std::vector<std::string> CollectParallel(const std::string& path, ParallelLineOptions opt, LineReadStats* st,
                                         size_t* segments = nullptr) {
  std::vector<std::string> lines;
  size_t n = 0;
  auto r = ForEachLineParallel(
      path, [] { return std::make_unique<CollectSegment>(); },
      [&](LineSegment& s) {
        ++n;
        for (auto& l : static_cast<CollectSegment&>(s).lines) lines.push_back(std::move(l));
      },
      opt);
  EXPECT_TRUE(r) << (r ? "" : r.error().message);
  if (r && st) *st = *r;
  if (segments) *segments = n;
  return lines;
}

TEST(ParallelLines, SameLinesInTheSameOrderAsTheSequentialReader) {
  TempDir d;
  std::string content = Content();
  std::string path = d.Write("log", content);
  LineReadStats seq{};
  auto expected = Collect(path, 64u << 20, &seq);
  // Segment sizes that put boundaries inside lines, right after a '\n', and inside the over-long
  // line (which then spans several segments); thread counts above and below the segment count.
  // (a segment ending right after line 100's '\n'; thousands of tiny segments would test the
  // hand-over between threads, not the cutting, and cost minutes under qemu).
  size_t line_100_end = 0;
  for (int i = 0; i < 100; ++i) line_100_end = content.find('\n', line_100_end) + 1;
  for (size_t seg : {size_t{4096}, size_t{4097}, line_100_end, size_t{100000}, size_t{300000}}) {
    for (unsigned threads : {2u, 3u, 8u}) {
      LineReadStats st{};
      size_t segments = 0;
      auto got = CollectParallel(path, {threads, seg}, &st, &segments);
      EXPECT_EQ(got, expected) << "segment " << seg << " threads " << threads;
      EXPECT_EQ(st.lines, seq.lines);
      EXPECT_EQ(st.bytes, seq.bytes);
      EXPECT_EQ(st.truncated_lines, 1u);
      EXPECT_EQ(segments, (content.size() + seg - 1) / seg) << "one merge per segment";
    }
  }
}

TEST(ParallelLines, RandomFilesGiveTheSequentialReadersLines) {
  // Random line lengths around the 64-byte blocks the scan works in (empty lines, runs of
  // '\n', '\r' anywhere, bytes with the high bit set, with or without a final newline), cut into
  // segments of odd sizes: the same lines in the same order as the sequential reader, and no
  // line told "no '\r'" that has one (CollectSegment checks).
  std::mt19937 rng(21);
  TempDir d;
  for (int trial = 0; trial < 8; ++trial) {
    std::string content;
    while (content.size() < 40000) {
      const size_t len = rng() % 4 == 0 ? rng() % 3 : rng() % 200;
      for (size_t i = 0; i < len; ++i) {
        const unsigned r = rng() % 64;
        content += r == 0 ? '\r' : r == 1 ? '\xff' : static_cast<char>('a' + r % 26);
      }
      content += '\n';
    }
    if (trial % 2) content += "tail without a newline";
    const std::string path = d.Write("random" + std::to_string(trial), content);
    LineReadStats seq{};
    const auto expected = Collect(path, 64u << 20, &seq);
    for (size_t seg : {size_t{63}, size_t{64}, size_t{65}, size_t{1000 + rng() % 3000}}) {
      LineReadStats st{};
      EXPECT_EQ(CollectParallel(path, {3, seg}, &st), expected) << "trial " << trial << " segment " << seg;
      EXPECT_EQ(st.lines, seq.lines) << "trial " << trial << " segment " << seg;
      EXPECT_EQ(st.bytes, seq.bytes);
    }
  }
}

TEST(ParallelLines, NoCarriageReturnHintIsTrueAndUsedWhereTheBytesHaveNone) {
  // '\r's in the first and last few lines only: lines far from them get the hint (most of the
  // file), and no line that has a '\r' ever does (checked in CollectSegment).
  TempDir d;
  std::string content = "a\rb\n";
  for (int i = 0; i < 200000; ++i) content += "plain line " + std::to_string(i) + "\n";
  content += "x\ry\n  1%|  | 1/100 [00:00<00:50,  2.00it/s]\r  2%|  | 2/100\n";
  std::string path = d.Write("log", content);
  size_t hinted = 0, lines = 0;
  auto r = ForEachLineParallel(
      path, [] { return std::make_unique<CollectSegment>(); },
      [&](LineSegment& s) {
        auto& c = static_cast<CollectSegment&>(s);
        hinted += c.said_no_cr;
        lines += c.lines.size();
      },
      {2, 1u << 20});
  ASSERT_TRUE(r);
  EXPECT_EQ(lines, 200003u);
  EXPECT_GT(hinted, 150000u);
}

TEST(ParallelLines, OverLongLineInsideOneSegment) {
  TempDir d;
  std::string content;
  while (content.size() < 1500000) content += "short line " + std::to_string(content.size()) + "\n";
  content += std::string(kMaxLineBytes + 100, 'L') + "\n";
  while (content.size() < 6000000) content += "after " + std::to_string(content.size()) + "\n";
  std::string path = d.Write("log", content);
  LineReadStats seq{}, par{};
  auto expected = Collect(path, 64u << 20, &seq);
  auto got = CollectParallel(path, {2, 3u << 20}, &par);
  EXPECT_EQ(got, expected);
  EXPECT_EQ(par.lines, seq.lines);
  EXPECT_EQ(par.truncated_lines, 1u);
}

TEST(ParallelLines, FileEndingWithNewlineAndSingleThreadFallback) {
  TempDir d;
  std::string content;
  for (int i = 0; i < 100000; ++i) content += std::to_string(i) + "\n";
  std::string path = d.Write("log", content);
  LineReadStats st{};
  auto par = CollectParallel(path, {4, 1000}, &st);
  ASSERT_EQ(par.size(), 100000u);
  EXPECT_EQ(par.front(), "0");
  EXPECT_EQ(par.back(), "99999");
  EXPECT_EQ(st.bytes, content.size());
  size_t segments = 0;
  auto one = CollectParallel(path, {1, 1000}, &st, &segments);  // one thread: sequential, batched
  EXPECT_EQ(one, par);
  EXPECT_EQ(segments, 2u) << "65,536 lines per batch";
}

TEST(ParallelLines, PipesAndMissingFilesGoThroughTheSequentialReader) {
  TempDir d;
  std::string fifo = d.path() + "/fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::thread writer([&] { std::ofstream(fifo) << "a\nbb\nccc"; });
  auto lines = CollectParallel(fifo, {4, 1}, nullptr);
  writer.join();
  EXPECT_EQ(lines, (std::vector<std::string>{"a", "bb", "ccc"}));
  auto r = ForEachLineParallel(
      "/nonexistent/y.log", [] { return std::make_unique<CollectSegment>(); }, [](LineSegment&) {});
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("/nonexistent/y.log"), std::string::npos);
}

}  // namespace
}  // namespace sparkops
