// Issue 18 in `analyze`: prochot, power_cap (limiter named) and power_delivery from the power columns.
#include "analysis/classify.h"

#include <gtest/gtest.h>

#include "analysis/power_causes.h"

namespace sparkops {
namespace {

/// 20 rows before t=100 s at full clocks, then 10 rows of the slowdown at `clock` with `span_power`.
ThermalSeries Series(double clock, const PowerColumns& before_power, const PowerColumns& span_power) {
  ThermalSeries t;
  t.format = "sparkops";
  t.interval_ms = 5000;
  for (int i = 0; i < 30; ++i) {
    ThermalRow r;
    r.t_ms = 5000LL * i;
    bool in_span = r.t_ms >= 100000;
    r.temp_c = 70, r.power_w = 60, r.util_pct = 97, r.reasons = 0;
    r.sm_clock_mhz = in_span ? clock : 2400;
    r.power = in_span ? span_power : before_power;
    t.rows.push_back(r);
  }
  return t;
}

PowerColumns Normal() {
  PowerColumns p;
  p.dc_input_w = 150, p.syspl1_w = 140, p.syspl1_cap_w = 231, p.pl1_w = 90, p.pl1_cap_w = 140, p.prochot = 0,
  p.pl_level = 0, p.cpu_temp_c = 70;
  return p;
}

bool Has(const std::vector<std::string>& v, const std::string& prefix) {
  for (const auto& s : v)
    if (s.rfind(prefix, 0) == 0) return true;
  return false;
}

TEST(PowerCauses, ProchotWinsWhenTheBrakeComesOn) {
  PowerColumns on = Normal();
  on.prochot = 1, on.cpu_temp_c = 97;
  ThermalSeries t = Series(611, Normal(), on);
  Classification c = Classify(&t, {}, 100000, 145000);
  EXPECT_EQ(c.cause, "prochot");
  ASSERT_FALSE(c.evidence.empty());
  EXPECT_NE(c.evidence[0].find("10 of 10"), std::string::npos) << c.evidence[0];
  EXPECT_NE(c.evidence[1].find("97"), std::string::npos);
}

TEST(PowerCauses, PowerCapNamesTheLimiter) {
  PowerColumns capped = Normal();
  capped.pl1_w = 139.5;  // PL1 EWMA at its 140 W cap
  ThermalSeries t = Series(1800, Normal(), capped);
  Classification c = Classify(&t, {}, 100000, 145000);
  EXPECT_EQ(c.cause, "power_cap");
  ASSERT_FALSE(c.evidence.empty());
  EXPECT_NE(c.evidence[0].find("limiter PL1"), std::string::npos) << c.evidence[0];
  EXPECT_TRUE(Has(c.ruled_out, "prochot: PROCHOT off")) << testing::PrintToString(c.ruled_out);
}

TEST(PowerCauses, PowerDeliveryWithEvidenceBeatsTheClockOnlyGuess) {
  PowerColumns low = Normal();
  low.dc_input_w = 28, low.syspl1_w = 27;
  ThermalSeries t = Series(611, Normal(), low);
  Classification c = Classify(&t, {}, 100000, 145000);
  EXPECT_EQ(c.cause, "power_delivery");
  EXPECT_NE(c.evidence[0].find("DC input 28 W"), std::string::npos) << c.evidence[0];
  EXPECT_TRUE(Has(c.also, "pd_degraded")) << testing::PrintToString(c.also);
}

TEST(PowerCauses, WithoutPowerColumnsEachIsNotRecorded) {
  ThermalSeries t = Series(611, PowerColumns{}, PowerColumns{});
  Classification c = Classify(&t, {}, 100000, 145000);
  EXPECT_EQ(c.cause, "pd_degraded");  // the clock-only guess, as before
  EXPECT_TRUE(Has(c.ruled_out, "prochot: PROCHOT not recorded"));
  EXPECT_TRUE(Has(c.ruled_out, "power_delivery: DC input not recorded"));
  EXPECT_TRUE(Has(c.ruled_out, "power_cap (firmware limiters PL1/SysPL1): not recorded"));
}

TEST(PowerCauses, SteadyStateIsNotACause) {
  // Normal power, clocks fall for another reason: none of the three claims it.
  ThermalSeries t = Series(1800, Normal(), Normal());
  std::vector<PowerFinding> found;
  std::vector<std::string> ruled;
  std::vector<const ThermalRow*> before, span;
  for (const auto& r : t.rows) (r.t_ms < 100000 ? before : span).push_back(&r);
  ClassifyPower(before, span, true, &found, &ruled);
  EXPECT_TRUE(found.empty());
  EXPECT_EQ(ruled.size(), 3u);
  // PROCHOT on all along and the clocks steady: not new, not the cause.
  PowerColumns on = Normal();
  on.prochot = 1;
  ThermalSeries s = Series(2400, on, on);
  before.clear(), span.clear(), found.clear();
  for (const auto& r : s.rows) (r.t_ms < 100000 ? before : span).push_back(&r);
  ClassifyPower(before, span, false, &found, &ruled);
  EXPECT_TRUE(found.empty());
}

}  // namespace
}  // namespace sparkops

#include "report/html.h"

namespace sparkops {
namespace {

TEST(PowerReport, RailsPlottedBesideStepTimeOnlyWhenRecorded) {
  AnalysisResult r;
  for (int i = 0; i < 30; ++i) {
    StepPoint p;
    p.step = i, p.t_ms = 5000LL * i, p.cost = 1.0f;
    r.series.points.push_back(p);
  }
  PowerColumns low = Normal();
  low.dc_input_w = 28;
  r.thermal = Series(611, Normal(), low);
  std::string html = RenderHtmlReport(r);
  EXPECT_NE(html.find("DC input (spbm)"), std::string::npos);
  EXPECT_NE(html.find("CPU temperature"), std::string::npos);
  r.thermal = Series(611, PowerColumns{}, PowerColumns{});
  html = RenderHtmlReport(r);
  EXPECT_EQ(html.find("DC input (spbm)"), std::string::npos);  // no spbm columns: no empty panel
}

}  // namespace
}  // namespace sparkops
