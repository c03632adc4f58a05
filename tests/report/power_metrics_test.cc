// Issue 18 in `exporter` and preflight G4: the power/thermal series and lines.
#include <gtest/gtest.h>

#include "checks/g4_power.h"
#include "report/power_metrics.h"
#include "report/prometheus.h"
#include "test_util.h"

namespace sparkops {
namespace {

PowerReading Fixture(const char* name) {
  return ReadPowerReading(HostFs(testing::Fixture(std::string("power/") + name)));
}

std::string Render(const PowerReading& p) {
  ExporterInputs in;
  Sample s;
  s.time = FromUnixMillis(1795957349123);
  s.power = p;
  in.sample = s;
  return RenderMetrics(in);
}

bool Has(const std::string& body, const std::string& line) { return body.find(line + "\n") != std::string::npos; }

TEST(PowerMetrics, SpbmSeriesInBaseUnits) {
  std::string m = Render(Fixture("spbm_ewma"));
  EXPECT_TRUE(Has(m, "sparkops_power_watts{rail=\"dc_input\"} 26")) << m;
  EXPECT_TRUE(Has(m, "sparkops_power_limit_watts{limiter=\"syspl1\"} 231"));
  EXPECT_TRUE(Has(m, "sparkops_power_limiter_ewma_watts{limiter=\"syspl1\"} 24"));
  EXPECT_TRUE(Has(m, "sparkops_energy_joules_total{rail=\"pkg\"} 4294960"));
  EXPECT_TRUE(Has(m, "sparkops_prochot 0"));
  EXPECT_TRUE(Has(m, "sparkops_power_limit_level 0"));
  EXPECT_TRUE(Has(m, "sparkops_temperature_celsius{sensor=\"cpu_p_clu0\"} 53"));
  EXPECT_TRUE(Has(m, "sparkops_temperature_celsius{sensor=\"zone0_acpitz\"} 41"));
  EXPECT_TRUE(Has(m, "sparkops_cpu_temperature_celsius{sensor=\"cpu_p_clu0\"} 53"));
  EXPECT_TRUE(Has(m, "# TYPE sparkops_energy_joules_total counter"));
  EXPECT_EQ(m.find("limiter=\"budget"), std::string::npos);  // budgets are not limiters
  std::string acpi = Render(Fixture("spbm_cap_acpi"));
  EXPECT_TRUE(Has(acpi, "sparkops_prochot 1"));
  EXPECT_TRUE(Has(acpi, "sparkops_power_limiter_ewma_watts{limiter=\"pl1\"} 138"));
}

TEST(PowerMetrics, WithoutSpbmNoPowerSeriesAtAll) {
  std::string m = Render(Fixture("nospbm"));
  for (const char* absent : {"sparkops_power_watts{", "sparkops_prochot ", "sparkops_power_limit_level ",
                             "sparkops_energy_joules_total{", "sparkops_cpu_temperature_celsius{"})
    EXPECT_EQ(m.find(absent), std::string::npos) << absent;
  EXPECT_TRUE(Has(m, "sparkops_temperature_celsius{sensor=\"nvme_Composite\"} 38.85"));
}

TEST(PowerMetrics, FamiliesAreListedForTheDeployChecks) {
  std::set<std::string> names;
  for (const MetricFamily& f : MetricFamilies()) names.insert(f.name);
  for (const MetricFamily& f : PowerMetricFamilies()) EXPECT_EQ(names.count(f.name), 1u) << f.name;
}

TEST(G4Power, LinesFromEachLayout) {
  auto ewma = G4PowerLines(Fixture("spbm_ewma"), true);
  ASSERT_EQ(ewma.size(), 2u);
  EXPECT_EQ(ewma[0],
            "spbm: PROCHOT off, power-limit level 0, DC input 26.0 W, pl1 EWMA 17 of 140 W, syspl1 EWMA 24 of 231 W");
  EXPECT_EQ(ewma[1], "CPU 53.0 degC (cpu_p_clu0), SoC 50.0 degC (soc)");
  auto hot = G4PowerLines(Fixture("spbm_cap_acpi"), true);
  EXPECT_NE(hot[0].find("PROCHOT ON"), std::string::npos);
  EXPECT_NE(hot[1].find("104.8"), std::string::npos);
  auto missing = G4PowerLines(Fixture("nospbm"), true);
  ASSERT_EQ(missing.size(), 1u);
  EXPECT_NE(missing[0].find("optional third-party"), std::string::npos);
  EXPECT_TRUE(G4PowerLines(Fixture("nospbm"), false).empty());  // not a Spark: nothing to install
  auto x86 = G4PowerLines(Fixture("x86"), false);
  ASSERT_EQ(x86.size(), 1u);
  EXPECT_EQ(x86[0], "CPU 63.0 degC (coretemp_Core 1)");
}

}  // namespace
}  // namespace sparkops
