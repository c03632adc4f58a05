// Issue 18 in `sample`: the power columns, their events, and `analyze` reading them back.
#include <gtest/gtest.h>

#include "analysis/power_columns.h"
#include "analysis/thermal.h"
#include "base/strings.h"
#include "telemetry/csv.h"
#include "telemetry/events.h"
#include "telemetry/power_csv.h"
#include "telemetry/power_events.h"
#include "test_util.h"

namespace sparkops {
namespace {

PowerReading Fixture(const char* name) {
  return ReadPowerReading(HostFs(testing::Fixture(std::string("power/") + name)));
}

Sample Busy(unsigned clock_mhz, PowerReading p) {
  Sample s;
  GpuReading g;
  g.sm_clock_mhz = clock_mhz, g.util_pct = 97, g.clock_event_reasons = 0;
  s.gpu = g;
  s.power = std::move(p);
  return s;
}

TEST(PowerCsv, ColumnsBeforeEventAndCellsFromTheFixture) {
  const auto& cols = CsvColumns();
  auto event = std::find(cols.begin(), cols.end(), "event");  // host contention columns follow it
  ASSERT_NE(event, cols.end());
  auto it = std::find(cols.begin(), cols.end(), "cpu_temp_c");
  ASSERT_NE(it, cols.end());
  EXPECT_EQ(std::vector<std::string>(it, event), PowerCsvColumns());
  EXPECT_EQ(Join(PowerCsvCells(nullptr), ","), std::string(11, ','));
  PowerReading p = Fixture("spbm_ewma");
  EXPECT_EQ(Join(PowerCsvCells(&p), ","), "53.0,50.0,25.00,17.00,11.00,26.00,17.00,140.00,24.00,231.00,0,0");
  PowerReading q = Fixture("nospbm");  // no spbm: no rails, no limits, no PROCHOT; only temperatures
  EXPECT_EQ(Join(PowerCsvCells(&q), ","), std::string(11, ','));
}

TEST(PowerEvents, ProchotPlLevelAndCpuTemperature) {
  PowerEventDetector d;
  PowerReading p = Fixture("spbm_ewma");
  Sample s;
  s.power = p;
  EXPECT_TRUE(d.Update(s).empty());  // PROCHOT off at the first reading: nothing happened
  s.power->prochot = 1, s.power->pl_level = 2, s.power->cpu_temp_c = 95.0;
  EXPECT_EQ(d.Update(s), (std::vector<std::string>{"prochot_on", "pl_level_change:0->2", "cpu_temp_high"}));
  EXPECT_TRUE(d.Update(s).empty());  // still on: no repeat
  s.power->prochot.reset();          // unreadable: no change claimed
  EXPECT_TRUE(d.Update(s).empty());
  s.power->prochot = 0, s.power->cpu_temp_c = 90;
  EXPECT_EQ(d.Update(s), std::vector<std::string>{"prochot_off"});
  s.power->cpu_temp_c = 96;
  EXPECT_EQ(d.Update(s), std::vector<std::string>{"cpu_temp_high"});  // re-armed below 95 °C
  PowerEventDetector first;
  Sample on;
  on.power = Fixture("spbm_cap_acpi");  // PROCHOT already on at the first reading
  auto ev = first.Update(on);
  EXPECT_EQ(ev.front(), "prochot_on");
  EXPECT_EQ(ev.back(), "cpu_temp_high");  // 96.5 °C
}

TEST(PowerEvents, PowerDeliveryLowNeedsLowDcInputBusyGpuAndLowClocks) {
  PowerReading pd = Fixture("pd_degraded"), ok = Fixture("spbm_ewma");
  EXPECT_EQ(PowerDeliveryLow(Busy(611, pd)), true);
  EXPECT_EQ(PowerDeliveryLow(Busy(2400, pd)), false);   // full clocks: a light load, not a brake
  ok.rails_w["dc_input"] = 180;
  EXPECT_EQ(PowerDeliveryLow(Busy(611, ok)), false);    // the brick delivers
  Sample no_gpu;
  no_gpu.power = pd;
  EXPECT_EQ(PowerDeliveryLow(no_gpu), std::nullopt);    // cannot tell without clocks
  EXPECT_EQ(PowerDeliveryLow(Busy(611, Fixture("nospbm"))), std::nullopt);
  EventDetector d;  // through the sampler's detector: after 2 samples, once per stretch
  std::vector<std::string> seen;
  for (unsigned clock : {611u, 600u, 590u, 2400u, 611u, 611u}) {
    auto ev = d.Update(Busy(clock, pd));
    for (auto& e : ev)
      if (e == "power_delivery_low") seen.push_back(std::to_string(clock));
  }
  EXPECT_EQ(seen, (std::vector<std::string>{"600", "611"}));
}

TEST(PowerCsv, AnalyzeReadsTheColumnsBack) {
  Sample s = Busy(611, Fixture("pd_degraded"));
  s.time = FromUnixMillis(1795957349123);
  std::string csv = CsvHeader() + CsvRow(s);
  Sample none;
  none.time = FromUnixMillis(1795957359123);
  csv += CsvRow(none);
  auto z = *LocalZone::Make("UTC");
  auto t = ParseThermalCsv(csv, "t.csv", z);
  ASSERT_TRUE(t) << t.error().message;
  ASSERT_EQ(t->rows.size(), 2u);
  const PowerColumns& p = t->rows[0].power;
  EXPECT_DOUBLE_EQ(*p.dc_input_w, 28);
  EXPECT_DOUBLE_EQ(*p.syspl1_cap_w, 231);
  EXPECT_DOUBLE_EQ(*p.syspl1_w, 27);
  EXPECT_DOUBLE_EQ(*p.pl_level, 2);
  EXPECT_DOUBLE_EQ(*p.prochot, 0);
  EXPECT_FALSE(t->rows[1].power.dc_input_w);  // empty cell: absent
  auto bad = ParseThermalCsv("timestamp,dc_input_w\n2026-11-29T13:02:29.123Z,lots\n", "b.csv", z);
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("dc_input_w"), std::string::npos);
}

TEST(PowerCsv, EveryWrittenColumnIsReadBackByName) {
  for (const auto& c : PowerCsvColumns()) EXPECT_TRUE(PowerColumnField(c) != nullptr) << c;
  EXPECT_TRUE(PowerColumnField("event") == nullptr);
}

}  // namespace
}  // namespace sparkops
