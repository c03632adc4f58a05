#include "host/meminfo.h"

#include <gtest/gtest.h>

#include "test_util.h"

namespace sparkops {
namespace {

struct MemInfoCase {
  const char* name;
  const char* text;
  bool ok;
  uint64_t total, available;
};

TEST(ParseMemInfo, Table) {
  const MemInfoCase cases[] = {
      {"minimal", "MemTotal: 1024 kB\nMemAvailable: 512 kB\n", true, 1024 * 1024, 512 * 1024},
      {"no trailing newline", "MemTotal: 2 kB\nMemAvailable: 1 kB", true, 2048, 1024},
      {"missing total", "MemAvailable: 512 kB\n", false, 0, 0},
      {"garbage number", "MemTotal: lots kB\n", false, 0, 0},
      {"line without colon", "MemTotal 12 kB\n", false, 0, 0},
      {"empty", "", false, 0, 0},
  };
  for (const auto& c : cases) {
    auto m = ParseMemInfo(c.text);
    EXPECT_EQ(m.has_value(), c.ok) << c.name;
    if (m && c.ok) {
      EXPECT_EQ(*m->total, c.total) << c.name;
      EXPECT_EQ(*m->available, c.available) << c.name;
    }
  }
}

TEST(ParseMemInfo, ErrorNamesFileAndField) {
  auto m = ParseMemInfo("MemTotal: 10 kB\nMemFree: x kB\n");
  ASSERT_FALSE(m);
  EXPECT_NE(m.error().message.find("/proc/meminfo"), std::string::npos);
  EXPECT_NE(m.error().message.find("MemFree"), std::string::npos);
}

TEST(ParseMemInfo, AbsentFieldsStayAbsent) {
  auto m = ParseMemInfo("MemTotal: 10 kB\n");
  ASSERT_TRUE(m);
  EXPECT_FALSE(m->available.has_value());
  EXPECT_FALSE(m->PageCache().has_value());
  EXPECT_FALSE(m->SwapUsed().has_value());
}

TEST(ReadMemInfo, Gb10Fixture) {
  HostFs fs(testing::Fixture("gb10"));
  auto m = ReadMemInfo(fs);
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(*m->total, 127600748ull * 1024);
  EXPECT_EQ(*m->available, 118566368ull * 1024);
  // page cache = Cached + Buffers - Shmem
  EXPECT_EQ(*m->PageCache(), (54839112ull + 412344 - 389212) * 1024);
  EXPECT_EQ(*m->SwapUsed(), 0u);
  EXPECT_EQ(*m->hugepages_total, 0u);
  EXPECT_EQ(*m->hugepage_size, 2048u * 1024);
}

}  // namespace
}  // namespace sparkops
