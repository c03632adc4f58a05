// Inputs the fuzzers (fuzz/*_fuzz.cc) found crashing or breaking a contract, each named after
// what it was; docs/reliability.md lists them. Each test fails on the code before its fix.
#include <gtest/gtest.h>

#include "base/timefmt.h"
#include "workloads/parallelism.h"

namespace sparkops {
namespace {

// fuzz_deepspeed_json: a number beyond double's range made nlohmann throw out_of_range (406), which
// the parser did not catch: `preflight --config ds.json` ended in std::terminate.
TEST(FuzzRegression, DeepSpeedJsonNumberOverflowIsAnInputError) {
  for (const char* text : {R"({"zero_optimization": 1E400})", R"({"zero_optimization": {"stage": -1e999}})",
                           "{\n  \"zero_,ptimization\": 500000001371241251636915417E36915417E-5}"}) {
    auto l = ParseDeepSpeedJson(text, "ds.json");
    ASSERT_FALSE(l) << text;
    EXPECT_EQ(l.error().kind, Error::Kind::kInput);
    EXPECT_EQ(l.error().message.rfind("ds.json: JSON", 0), 0u) << l.error().message;
  }
}

// fuzz_timestamp: year 0001 overflowed system_clock's nanosecond count (signed overflow, UB).
TEST(FuzzRegression, TimestampYearOutsideClockRangeIsRejected) {
  EXPECT_FALSE(ParseTimestamp("0001-01-01T00:00:00Z"));
  EXPECT_FALSE(ParseTimestamp("9999-12-31T23:59:59.999Z"));
  EXPECT_FALSE(ParseTimestamp("1699-12-31T23:59:59Z"));
  ASSERT_TRUE(ParseTimestamp("1700-01-01T00:00:00Z"));
  EXPECT_EQ(ToUnixMillis(*ParseTimestamp("1700-01-01T00:00:00Z")), -8520336000000LL);
  ASSERT_TRUE(ParseTimestamp("2200-12-31T23:59:59.999Z"));
  EXPECT_EQ(ToUnixMillis(*ParseTimestamp("2200-12-31T23:59:59.999Z")), 7289654399999LL);
}

// Found reading ParseTimestamp while writing its fuzzer: "-1" parsed as an hour, minute or second.
TEST(FuzzRegression, TimestampNegativeClockFieldsAreRejected) {
  EXPECT_FALSE(ParseTimestamp("2026-11-29T-1:02:29Z"));
  EXPECT_FALSE(ParseTimestamp("2026-11-29T13:-2:29Z"));
  EXPECT_FALSE(ParseTimestamp("2026-11-29T13:02:-9Z"));
  EXPECT_TRUE(ParseTimestamp("2026-11-29T13:02:29Z"));
}

}  // namespace
}  // namespace sparkops
