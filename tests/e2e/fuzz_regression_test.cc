// Inputs the fuzzers (fuzz/*_fuzz.cc) found crashing or breaking a contract, each named after
// what it was; docs/reliability.md lists them. Each test fails on the code before its fix.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>

#include "base/timefmt.h"
#include "guard/ledger.h"
#include "host/nvidia_smi.h"
#include "host/pressure.h"
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
    EXPECT_EQ(l.error().message.rfind("ds.json: not valid JSON", 0), 0u) << l.error().message;
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

// fuzz_pressure: "avg300=0587318" (and "inf") were accepted as a stall percentage and would have
// been exported as a reading.
TEST(FuzzRegression, PressureAveragesOutsideZeroToHundredAreErrors) {
  auto p = ParsePressure("some avg10=1.53 avg60=0.87 avg300=0587318 total=4187\n");
  ASSERT_FALSE(p);
  EXPECT_NE(p.error().message.find("avg300"), std::string::npos) << p.error().message;
  EXPECT_FALSE(ParsePressure("some avg10=inf avg60=0.87 avg300=0.2 total=4187\n"));
  EXPECT_FALSE(ParsePressure("some avg10=100.01 avg60=0 avg300=0 total=0\n"));
  EXPECT_TRUE(ParsePressure("some avg10=100.00 avg60=0 avg300=0 total=0\n"));
}

// fuzz_guard_ledger: a `dry_run` that is not a boolean made nlohmann's value() throw type_error
// (302), uncaught: one hostile ledger in a user's runtime directory ended the exporter.
TEST(FuzzRegression, GuardLedgerDryRunOfAnotherTypeIsAnInputError) {
  const std::string head =
      R"({"pid":4,"start_ticks":575,"mode":"run","min_available_bytes":8359549892,"max_pressure":43,)";
  const std::string tail = R"(,"actions":[{"action":"terminate","reason":"min_available","count":1}]})";
  for (const char* bad : {R"("dry_run":[1])", R"("dry_run":"yes")", R"("dry_run":1)", R"("dry_run":null)"}) {
    auto l = guard::ParseLedger(head + bad + tail);
    ASSERT_FALSE(l) << bad;
    EXPECT_NE(l.error().message.find("dry_run"), std::string::npos) << l.error().message;
  }
  auto ok = guard::ParseLedger(head + R"("dry_run":true)" + tail);
  ASSERT_TRUE(ok) << ok.error().message;
  EXPECT_TRUE(ok->dry_run);
}

// fuzz_nvidia_smi: memory.total "2222...2" (2.3e110 MiB) was converted to bytes with a
// double -> uint64 cast out of range (UB); a negative memory.used likewise.
TEST(FuzzRegression, NvidiaSmiMemoryOutOfRangeIsAnError) {
  NvidiaSmiRow row;
  for (const auto& f : NvidiaSmiFields()) row[f] = std::nullopt;
  row["index"] = "0";
  row["memory.total"] = std::string(111, '2');
  auto r = NvidiaSmiRowToReading(row);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("memory.total"), std::string::npos) << r.error().message;
  row["memory.total"] = "24564";
  row["memory.used"] = "-5";
  r = NvidiaSmiRowToReading(row);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("memory.used"), std::string::npos) << r.error().message;
  row["memory.used"] = "20480";
  r = NvidiaSmiRowToReading(row);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->mem_total_bytes, 24564ull << 20);
}

// Found writing the fuzz targets: analysis/thermal.h and telemetry/csv_read.h both defined a
// different `sparkops::ThermalRow` (an ODR violation: std::vector<ThermalRow>'s out-of-line
// destructor was emitted for both layouts and the linker kept one; main has since dropped the
// second reader). Guard the whole class of bug: no two headers define a type of the same name in
// the same namespace.
TEST(FuzzRegression, NoTwoHeadersDefineTheSameTypeInOneNamespace) {
  namespace fs = std::filesystem;
  const fs::path src = fs::path(SPARKOPS_TEST_SOURCE_DIR).parent_path() / "src";
  const std::regex ns_re(R"(^namespace ([A-Za-z_:]+) \{)");
  const std::regex def_re(R"(^(struct|class|enum class|enum) ([A-Za-z_][A-Za-z0-9_]*)\b[^;]*$)");
  std::map<std::string, std::string> seen;  // "ns::Name" -> file
  int headers = 0;
  for (const auto& e : fs::recursive_directory_iterator(src)) {
    if (!e.is_regular_file() || e.path().extension() != ".h") continue;
    ++headers;
    std::ifstream in(e.path());
    std::string line, ns;
    std::smatch m;
    while (std::getline(in, line)) {
      if (std::regex_search(line, m, ns_re)) ns = m[1];
      if (!std::regex_search(line, m, def_re)) continue;
      const std::string key = ns + "::" + m[2].str();
      auto [it, fresh] = seen.emplace(key, e.path().string());
      EXPECT_TRUE(fresh) << key << " defined in " << it->second << " and " << e.path().string();
    }
  }
  EXPECT_GT(headers, 30);
}

}  // namespace
}  // namespace sparkops
