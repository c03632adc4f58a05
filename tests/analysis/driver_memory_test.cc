// issue 33: `driver_memory_error`, the driver's NVRM NV_ERR_NO_MEMORY records in a run's events:
// the cause of a slowdown whose span they fall in, and of the run's end when the guard stopped the
// job on one or they came near the end.
#include "analysis/driver_memory.h"

#include <gtest/gtest.h>

#include "analysis/classify.h"

namespace sparkops {
namespace {

constexpr int64_t kT0 = 1000'000, kT1 = 1300'000;
constexpr const char* kLine = "NVRM: nvAssertFailedNoLog: Assertion failed: NV_ERR_NO_MEMORY";

RunEvent Ev(int64_t t_ms, const char* type, nlohmann::json record) {
  RunEvent e;
  e.t_ms = t_ms, e.type = type, e.record = std::move(record);
  return e;
}
RunEvent NoMem(int64_t t_ms) { return Ev(t_ms, "kernel_nvrm_no_memory", {{"seq", 1600}, {"line", kLine}}); }

ThermalSeries Steady() {
  ThermalSeries t;
  t.format = "sparkops";
  t.interval_ms = 10000;
  for (int64_t ms = 700'000; ms <= 1400'000; ms += 10000) {
    ThermalRow r;
    r.t_ms = ms, r.temp_c = 70, r.power_w = 85, r.sm_clock_mhz = 2400, r.util_pct = 97, r.mem_available_gib = 95;
    r.reasons = 0;
    t.rows.push_back(r);
  }
  return t;
}

TEST(Classify, DriverNoMemoryRecordInTheSpan) {
  auto t = Steady();
  auto c = Classify(&t, {NoMem(kT0 + 5000)}, kT0, kT1);
  EXPECT_EQ(c.cause, "driver_memory_error");
  ASSERT_FALSE(c.evidence.empty());
  EXPECT_NE(c.evidence[0].find(kLine), std::string::npos) << c.evidence[0];
  EXPECT_EQ(c.evidence[0].rfind("kernel 00:16:45Z: ", 0), 0u) << c.evidence[0];
  // Far outside the span (and its lookback): ruled out, with why.
  auto far = Classify(&t, {NoMem(kT1 + 600'000)}, kT0, kT1);
  EXPECT_EQ(far.cause, "unknown");
  bool said = false;
  for (auto& r : far.ruled_out) said |= r.rfind("driver_memory_error: no NVRM NV_ERR_NO_MEMORY record", 0) == 0;
  EXPECT_TRUE(said) << ::testing::PrintToString(far.ruled_out);
}

TEST(DriverMemoryEndEvidence, Table) {
  const RunEvent exit = Ev(kT1, "exit", {{"code", 0}});
  const RunEvent stop = Ev(kT1 - 1000, "memory_guard",
                           {{"action", "terminate"}, {"reason", "kernel_nvrm_no_memory"}, {"kernel_line", kLine}});
  const RunEvent floor_stop = Ev(kT1 - 1000, "memory_guard", {{"action", "terminate"}, {"reason", "min_available"}});
  struct Case {
    const char* name;
    std::vector<RunEvent> events;
    size_t lines;
    const char* first;  ///< start of the first evidence line
  } cases[] = {
      {"guard stop on the record", {NoMem(kT1 - 1500), stop, exit}, 2, "the memory guard stopped the job at"},
      {"records near the end", {NoMem(kT1 - 60'000), exit}, 1, "kernel "},
      {"records long before the end", {NoMem(kT1 - 600'000), exit}, 0, ""},
      {"a floor stop", {floor_stop, exit}, 0, ""},
      {"six records: four and a count",
       {NoMem(kT1 - 6), NoMem(kT1 - 5), NoMem(kT1 - 4), NoMem(kT1 - 3), NoMem(kT1 - 2), NoMem(kT1 - 1), exit},
       5,
       "kernel "},
      {"no events", {}, 0, ""},
  };
  for (const auto& c : cases) {
    auto ev = DriverMemoryEndEvidence(c.events);
    ASSERT_EQ(ev.size(), c.lines) << c.name << ": " << ::testing::PrintToString(ev);
    if (!ev.empty()) EXPECT_EQ(ev[0].rfind(c.first, 0), 0u) << c.name << ": " << ev[0];
  }
  auto ev = DriverMemoryEndEvidence({NoMem(kT1 - 1500), stop, exit});
  EXPECT_NE(ev[0].find(kLine), std::string::npos) << ev[0];
}

}  // namespace
}  // namespace sparkops
