#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "base/bytescan.h"
#include "base/strings.h"
#include "base/timefmt.h"

namespace sparkops {
namespace {

TEST(Strings, SplitKeepsEmptyFields) {
  auto v = Split("a,,b", ',');
  ASSERT_EQ(v.size(), 3u);
  EXPECT_EQ(v[1], "");
}

TEST(Strings, NumbersAreWholeString) {
  EXPECT_EQ(ParseInt(" 42 "), 42);
  EXPECT_FALSE(ParseInt("42x"));
  EXPECT_FALSE(ParseInt(""));
  EXPECT_EQ(ParseDouble("1.5"), 1.5);
  EXPECT_FALSE(ParseDouble("nan"));
  EXPECT_FALSE(ParseUint("-1"));
}

TEST(Strings, EditDistance) {
  EXPECT_EQ(EditDistance("preflight", "prefligth"), 2u);
  EXPECT_EQ(EditDistance("", "abc"), 3u);
}

TEST(Strings, EditDistanceAtMostIsEditDistanceCappedAtLimitPlusOne) {
  const char* words[] = {"",
                         "a",
                         "ab",
                         "ba",
                         "abc",
                         "llama-3.1-8b",
                         "llama-3.1-8",
                         "lama-3.1-8b",
                         "gemma-2-9b",
                         "qwen3-30b-a3b",
                         "prefligth",
                         "preflight",
                         "xxxxxxxxxxxxxxxxxxxxxxxxxxx"};
  for (const char* a : words)
    for (const char* b : words)
      for (size_t limit : {0u, 1u, 2u, 3u, 10u}) {
        size_t d = EditDistance(a, b);
        EXPECT_EQ(EditDistanceAtMost(a, b, limit), d <= limit ? d : limit + 1) << a << " / " << b << " / " << limit;
      }
  // Lengths further apart than the limit: answered without the table.
  EXPECT_EQ(EditDistanceAtMost(std::string(1'000'000, 'x'), "llama", 3), 4u);
}

TEST(Time, FormatsUtcWithMillis) {
  EXPECT_EQ(FormatUtcMillis(FromUnixMillis(0)), "1970-01-01T00:00:00.000Z");
  EXPECT_EQ(FormatUtcMillis(FromUnixMillis(1795957349123)), "2026-11-29T13:02:29.123Z");
}

TEST(Time, ParsesWhatItWrites) {
  auto t = ParseTimestamp("2026-11-29T13:02:29.123Z");
  ASSERT_TRUE(t);
  EXPECT_EQ(ToUnixMillis(*t), 1795957349123);
}

TEST(Time, ZonelessIsLocalWhenOffsetGiven) {
  auto utc = ParseTimestamp("2026/11/29 13:02:29.500");
  auto cet = ParseTimestamp("2026/11/29 13:02:29.500", 3600);
  ASSERT_TRUE(utc && cet);
  EXPECT_EQ(ToUnixMillis(*utc) - ToUnixMillis(*cet), 3600 * 1000);
  auto off = ParseTimestamp("2026-11-29T14:02:29+01:00");
  ASSERT_TRUE(off);
  EXPECT_EQ(ToUnixMillis(*off), 1795957349000);
}

TEST(Time, RejectsGarbage) {
  EXPECT_FALSE(ParseTimestamp("yesterday"));
  EXPECT_FALSE(ParseTimestamp("2026-13-01T00:00:00Z"));
  EXPECT_FALSE(ParseTimestamp("2026-11-29T13:02:29.Z"));
}

TEST(ByteScan, VisitsEveryPlaceOfTheByteInOrderAndStopsWhereAsked) {
  // Lengths around the 16-byte blocks, hits in blocks and in the tail, bytes with the high bit
  // set (signed char), against a plain loop. Runs the SSE2 or NEON path of the build.
  std::mt19937 rng(11);
  const char alphabet[] = {'/', 'a', '\xff', '\x80', '/', 'p', '\0'};
  for (size_t n = 0; n < 70; ++n)
    for (int rep = 0; rep < 20; ++rep) {
      std::string s(n, 'x');
      for (char& ch : s) ch = alphabet[rng() % sizeof alphabet];
      for (char c : {'/', '\xff', '\0', 'q'}) {
        std::vector<size_t> want, got;
        for (size_t i = 0; i < n; ++i)
          if (s[i] == c) want.push_back(i);
        EXPECT_EQ(FindByteWhere(s, c,
                                [&](size_t i) {
                                  got.push_back(i);
                                  return false;
                                }),
                  std::string_view::npos);
        EXPECT_EQ(got, want) << "n " << n;
        if (want.size() >= 2) {  // stop at the second hit
          size_t calls = 0;
          EXPECT_EQ(FindByteWhere(s, c, [&](size_t) { return ++calls == 2; }), want[1]);
          EXPECT_EQ(calls, 2u);
        }
      }
    }
  // Never reads past the view: a view into the middle of a buffer of the same byte.
  std::string buf(64, '/');
  std::vector<size_t> got;
  FindByteWhere(std::string_view(buf).substr(5, 20), '/', [&](size_t i) {
    got.push_back(i);
    return false;
  });
  ASSERT_EQ(got.size(), 20u);
  EXPECT_EQ(got.front(), 0u);
  EXPECT_EQ(got.back(), 19u);
}

TEST(ByteScan, LineBreakMasksMarkEveryNewlineAndCarriageReturnOfTheBlock) {
  // Against a plain loop: every length up to past one block (only `avail` bytes may be read:
  // the view sits at the end of its buffer), bytes with the high bit set, runs of breaks.
  std::mt19937 rng(12);
  const char alphabet[] = {'\n', '\r', 'a', '\xff', '\x80', '\0', '\x8a'};
  for (size_t avail = 0; avail <= 70; ++avail)
    for (int rep = 0; rep < 50; ++rep) {
      std::string buf(avail, 'x');
      for (char& ch : buf) ch = alphabet[rng() % sizeof alphabet];
      uint64_t nl = 1, cr = 1, want_nl = 0, want_cr = 0;
      for (size_t i = 0; i < std::min<size_t>(avail, 64); ++i) {
        want_nl |= static_cast<uint64_t>(buf[i] == '\n') << i;
        want_cr |= static_cast<uint64_t>(buf[i] == '\r') << i;
      }
      std::vector<char> exact(buf.begin(), buf.end());  // no byte after `avail` to read
      LineBreakMasks(exact.data(), avail, &nl, &cr);
      EXPECT_EQ(nl, want_nl) << "avail " << avail;
      EXPECT_EQ(cr, want_cr) << "avail " << avail;
    }
}

}  // namespace
}  // namespace sparkops
