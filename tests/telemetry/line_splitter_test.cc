#include "telemetry/line_splitter.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace sparkops {
namespace {

std::vector<std::string> SplitAll(const std::vector<std::string>& chunks, size_t max_line = 1u << 20) {
  LineSplitter s(max_line);
  std::vector<std::string> out;
  auto emit = [&](std::string_view v) { out.emplace_back(v); };
  for (const auto& c : chunks) s.Feed(c, emit);
  s.Finish(emit);
  return out;
}

TEST(LineSplitter, Table) {
  struct Case {
    std::vector<std::string> chunks;
    std::vector<std::string> want;
  } cases[] = {
      {{"a\nb\n"}, {"a", "b"}},
      {{"a\r\nb"}, {"a", "b"}},
      {{"a\r", "\nb\n"}, {"a", "b"}},                           // CRLF split across reads
      {{" 10%|#  \r 20%|## \r 30%|###\n"}, {" 10%|#  ", " 20%|## ", " 30%|###"}},  // tqdm updates
      {{"\n\n"}, {"", ""}},
      {{"no newline"}, {"no newline"}},
      {{std::string("bin\0ary\n", 8)}, {std::string("bin\0ary", 7)}},
  };
  for (const auto& c : cases) EXPECT_EQ(SplitAll(c.chunks), c.want);
}

TEST(LineSplitter, LongLinesAreCutNotBuffered) {
  auto out = SplitAll({std::string(10, 'x') + "\n"}, 4);
  EXPECT_EQ(out, (std::vector<std::string>{"xxxx", "xxxx", "xx"}));
}

}  // namespace
}  // namespace sparkops
