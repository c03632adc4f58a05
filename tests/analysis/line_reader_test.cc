#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>
#include <thread>

#include "analysis/line_reader.h"
#include "test_util.h"

namespace sparkops {
namespace {

using testing::TempDir;

std::vector<std::string> Collect(const std::string& path, size_t window, LineReadStats* st = nullptr) {
  std::vector<std::string> lines;
  auto r = ForEachLine(path, [&](std::string_view l, uint64_t) {
    lines.emplace_back(l);
    return true;
  }, window);
  EXPECT_TRUE(r) << (r ? "" : r.error().message);
  if (r && st) *st = *r;
  return lines;
}

std::string Content() {
  std::string s;
  for (int i = 0; i < 3000; ++i) s += "line " + std::to_string(i) + std::string(static_cast<size_t>(i % 97), 'x') + "\n";
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

}  // namespace
}  // namespace sparkops
