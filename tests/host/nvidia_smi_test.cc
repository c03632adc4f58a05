// nvidia-smi CSV parsing (real samples as GB10 and discrete GPUs print them; docs/telemetry.md) and the
// fallback through fake nvidia-smi scripts.
#include <gtest/gtest.h>

#include "host/nvidia_smi.h"

namespace sparkops {
namespace {

std::string Fake(const std::string& name) { return std::string(SPARKOPS_TEST_SOURCE_DIR) + "/fake/" + name; }

struct ParseCase {
  const char* source;
  const char* text;
  std::vector<std::string> fields;
  std::vector<std::optional<std::string>> want;  // first row, in field order
};

TEST(NvidiaSmiCsv, RealSamplesMapUnsupportedToAbsent) {
  const ParseCase cases[] = {
      {"marimo PR #6822, GB10, driver 580.95.05",
       "0, NVIDIA GB10, [N/A], [N/A], [N/A]\n",
       {"index", "name", "memory.total", "memory.used", "memory.free"},
       {"0", "NVIDIA GB10", std::nullopt, std::nullopt, std::nullopt}},
      {"nvitop PR #208, GB10, driver 580.173.02 (nounits)",
       "[N/A], [N/A], [N/A], 0, 11.17, 35\n",
       {"memory.total", "memory.used", "memory.free", "utilization.gpu", "power.draw", "temperature.gpu"},
       {std::nullopt, std::nullopt, std::nullopt, "0", "11.17", "35"}},
      {"sensor report, GB10, driver 580.126.09",
       "NVIDIA GB10, 38, 4.00, 0, 208\n",
       {"name", "temperature.gpu", "power.draw", "utilization.gpu", "clocks.gr"},
       {"NVIDIA GB10", "38", "4.00", "0", "208"}},
      {"i3pystatus #776, older driver",
       "2004, 2004, 0, 44, [Not Supported], 0, 0\n",
       {"a", "b", "c", "d", "fan.speed", "f", "g"},
       {"2004", "2004", "0", "44", std::nullopt, "0", "0"}},
      {"plain N/A and empty cells", "N/A, ,x\n", {"a", "b", "c"}, {std::nullopt, std::nullopt, "x"}},
      {"names with spaces are not split",
       "NVIDIA GeForce RTX 2080 Ti, 61\n",
       {"name", "temperature.gpu"},
       {"NVIDIA GeForce RTX 2080 Ti", "61"}},
  };
  for (const auto& c : cases) {
    auto rows = ParseNvidiaSmiCsv(c.text, c.fields);
    ASSERT_TRUE(rows) << c.source << ": " << rows.error().message;
    ASSERT_EQ(rows->size(), 1u) << c.source;
    for (size_t i = 0; i < c.fields.size(); ++i)
      EXPECT_EQ(rows->front().at(c.fields[i]), c.want[i]) << c.source << " " << c.fields[i];
  }
}

TEST(NvidiaSmiCsv, WrongColumnCountIsAnErrorNamingTheLine) {
  auto rows = ParseNvidiaSmiCsv("0, a, b\n0, a\n", {"index", "name", "x"});
  ASSERT_FALSE(rows);
  EXPECT_NE(rows.error().message.find("line 2"), std::string::npos) << rows.error().message;
  EXPECT_TRUE(ParseNvidiaSmiCsv("\n\n", {"a"})->empty());
}

TEST(NvidiaSmiCsv, RowToReadingGb10) {
  auto rows = ParseNvidiaSmiCsv(
      "0, NVIDIA GB10, GPU-x, 580.95.05, 12.1, 38, 4.00, [N/A], 208, 3003, 0, 0x0000000000000020, [N/A], [N/A]\n",
      NvidiaSmiFields());
  ASSERT_TRUE(rows);
  auto r = NvidiaSmiRowToReading(rows->front());
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->name, "NVIDIA GB10");
  EXPECT_EQ(r->cc_major, 12);
  EXPECT_EQ(r->cc_minor, 1);
  EXPECT_EQ(r->temp_c, 38.0);
  EXPECT_EQ(r->power_w, 4.0);
  EXPECT_FALSE(r->power_limit_w);
  EXPECT_EQ(r->sm_clock_mhz, 208u);
  EXPECT_EQ(r->sm_clock_max_mhz, 3003u);
  EXPECT_EQ(r->util_pct, 0u);  // a real 0 stays 0
  EXPECT_EQ(r->clock_event_reasons, 0x20u);
  EXPECT_FALSE(r->mem_total_bytes);
  EXPECT_TRUE(r->unified_memory);
}

TEST(NvidiaSmiCsv, RowToReadingRejectsGarbageNumbers) {
  for (const char* bad : {"hot", "4.0.0", "-"}) {
    NvidiaSmiRow row{{"index", "0"}, {"temperature.gpu", std::string(bad)}};
    auto r = NvidiaSmiRowToReading(row);
    ASSERT_FALSE(r) << bad;
    EXPECT_NE(r.error().message.find("temperature.gpu"), std::string::npos);
  }
  NvidiaSmiRow mask{{"index", "0"}, {"clocks_event_reasons.active", std::string("0xZZ")}};
  EXPECT_FALSE(NvidiaSmiRowToReading(mask));
}

TEST(NvidiaSmiQuery, FakeGb10AndDiscrete) {
  auto gb10 = QueryNvidiaSmi(Fake("nvidia-smi-gb10"));
  ASSERT_TRUE(gb10) << gb10.error().message;
  ASSERT_EQ(gb10->size(), 1u);
  EXPECT_EQ(gb10->front().clock_event_reasons, 0x1u);
  EXPECT_TRUE(gb10->front().unified_memory);
  auto d = QueryNvidiaSmi(Fake("nvidia-smi-discrete"));
  ASSERT_TRUE(d) << d.error().message;
  EXPECT_EQ(d->front().mem_total_bytes, 24564ull << 20);
  EXPECT_EQ(d->front().power_limit_w, 450.0);
  EXPECT_FALSE(d->front().unified_memory);
}

TEST(NvidiaSmiQuery, LegacyFieldNameIsRetriedOnce) {
  auto r = QueryNvidiaSmi(Fake("nvidia-smi-legacy"));
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->front().clock_event_reasons, 0x20u);
}

TEST(NvidiaSmiQuery, FailuresAreReasonsNotReadings) {
  auto garbage = QueryNvidiaSmi(Fake("nvidia-smi-garbage"));
  ASSERT_FALSE(garbage);
  EXPECT_NE(garbage.error().message.find("line 1"), std::string::npos) << garbage.error().message;
  auto fail = QueryNvidiaSmi(Fake("nvidia-smi-fail"));
  ASSERT_FALSE(fail);
  EXPECT_NE(fail.error().message.find("status 9"), std::string::npos) << fail.error().message;
  EXPECT_NE(fail.error().message.find("couldn't communicate"), std::string::npos);
  auto missing = QueryNvidiaSmi("/nonexistent/nvidia-smi");
  ASSERT_FALSE(missing);
  auto t0 = std::chrono::steady_clock::now();
  auto hang = QueryNvidiaSmi(Fake("nvidia-smi-hang"), std::chrono::milliseconds(300));
  ASSERT_FALSE(hang);
  EXPECT_NE(hang.error().message.find("did not answer"), std::string::npos) << hang.error().message;
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(3));
}

}  // namespace
}  // namespace sparkops
