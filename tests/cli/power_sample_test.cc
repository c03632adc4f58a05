// Issue 18 end to end: the built `sparkops sample --root tests/fixtures/power/<layout>` writes the
// fixture's power readings in their CSV columns (empty cells where absent) and their events.
#include <gtest/gtest.h>

#include <map>

#include "base/strings.h"
#include "telemetry/power_csv.h"
#include "test_util.h"

namespace sparkops {
namespace {

using testing::BuildArtifact;
using testing::Fixture;

struct Sampled {
  std::vector<std::map<std::string, std::string>> rows;  ///< column -> cell
  std::string err;
};

/// Runs the binary for `count` rows on one power layout; without `scenario`, no GPU is read.
Sampled Sample(const std::string& layout, int count, const std::string& scenario = "") {
  std::vector<std::string> args = {"--root",
                                   Fixture("power/" + layout),
                                   "--nvidia-smi",
                                   "none",
                                   "--nvml",
                                   scenario.empty() ? "none" : BuildArtifact("libnvidia-ml-stub.so"),
                                   "sample",
                                   "--count",
                                   std::to_string(count),
                                   "--interval",
                                   "0.02"};
  std::map<std::string, std::string> env;
  if (!scenario.empty()) env["SPARKOPS_STUB_NVML_SCENARIO"] = scenario;
  auto r = testing::RunBinary(args, env);
  EXPECT_EQ(r.rc, 0) << r.err;
  Sampled s{{}, r.err};
  std::string out = r.out;  // bound before splitting: the views point into it
  auto lines = SplitLines(out);
  if (lines.empty()) return s;
  auto header = Split(lines[0], ',');
  for (size_t i = 1; i < lines.size(); ++i) {
    auto cells = Split(lines[i], ',');
    EXPECT_EQ(cells.size(), header.size()) << lines[i];
    std::map<std::string, std::string> row;
    for (size_t c = 0; c < header.size() && c < cells.size(); ++c) row[std::string(header[c])] = std::string(cells[c]);
    s.rows.push_back(std::move(row));
  }
  return s;
}

/// The power columns of a row, in PowerCsvColumns() order, joined by ','.
std::string PowerCells(const std::map<std::string, std::string>& row) {
  std::vector<std::string> v;
  for (const auto& c : PowerCsvColumns()) v.push_back(row.count(c) ? row.at(c) : "<missing column>");
  return Join(v, ",");
}

/// The row's events without missed_slots (a loaded test machine may miss a 20 ms slot).
std::string Events(const std::map<std::string, std::string>& row) {
  std::vector<std::string> kept;
  for (auto e : Split(row.at("event"), ';'))
    if (!e.empty() && !StartsWith(e, "missed_slots")) kept.emplace_back(e);
  return Join(kept, ";");
}

TEST(PowerSampleCli, ColumnsHoldEachLayoutsValues) {
  ASSERT_EQ(Join(PowerCsvColumns(), ","),
            "cpu_temp_c,soc_temp_c,sys_power_w,soc_pkg_power_w,cpu_power_w,dc_input_w,"
            "pl1_w,pl1_cap_w,syspl1_w,syspl1_cap_w,prochot,pl_level");
  struct Case {
    const char* layout;
    const char* cells;
  };
  const Case cases[] = {
      // v0.3.0 layout: limits as channels, ewma_* the EWMAs; prochot/pl_level in the hwmon directory.
      {"spbm_ewma", "53.0,50.0,25.00,17.00,11.00,26.00,17.00,140.00,24.00,231.00,0,0"},
      // original driver: pl1.. are the EWMAs with powerK_cap; prochot/pl_level under NVDA8800:00; no cpu_p/cpu_e.
      {"spbm_cap_acpi", "96.5,84.0,118.00,96.00,,121.00,138.00,140.00,117.00,231.00,1,1"},
      // no module: acpitz, nvme and mlx5 temperatures name no CPU or SoC sensor: every cell empty, never 0.
      {"nospbm", ",,,,,,,,,,,"},
      {"pd_degraded", "53.0,50.0,27.00,22.00,11.00,28.00,22.00,140.00,27.00,231.00,0,2"},
      {"x86", "63.0,,,,,,,,,,,"},  // coretemp: the hottest of package and cores
  };
  for (const auto& c : cases) {
    Sampled s = Sample(c.layout, 3);
    ASSERT_EQ(s.rows.size(), 3u) << c.layout << "\n" << s.err;
    for (const auto& row : s.rows) EXPECT_EQ(PowerCells(row), c.cells) << c.layout;  // every row, not only the first
  }
}

TEST(PowerSampleCli, EventsOfEachLayout) {
  Sampled quiet = Sample("spbm_ewma", 3);
  for (const auto& row : quiet.rows) EXPECT_EQ(Events(row), "");  // PROCHOT off, 53 °C: nothing to say
  EXPECT_EQ(quiet.err.find(" event prochot"), std::string::npos);
  for (const auto& row : Sample("nospbm", 3).rows) EXPECT_EQ(Events(row), "");

  Sampled brake = Sample("spbm_cap_acpi", 3);  // PROCHOT on and 96.5 °C from the first reading, said once
  ASSERT_EQ(brake.rows.size(), 3u);
  EXPECT_EQ(Events(brake.rows[0]), "prochot_on;cpu_temp_high");
  EXPECT_EQ(Events(brake.rows[1]), "");
  EXPECT_EQ(Events(brake.rows[2]), "");
  for (const char* e : {" event prochot_on\n", " event cpu_temp_high\n"})
    EXPECT_NE(brake.err.find(e), std::string::npos) << e;

  // Degraded power delivery: DC input 28 W against SysPL1 231 W, the GPU busy at 611 MHz (stub NVML).
  testing::TempDir d;
  std::string scenario = d.Write("pd.txt",
                                 "step temp=70 power=15 sm=611 util=97 reasons=0x0 energy=1000000\n"
                                 "step energy=1015000\nstep energy=1030000\nstep energy=1045000\n");
  Sampled pd = Sample("pd_degraded", 4, scenario);
  ASSERT_EQ(pd.rows.size(), 4u) << pd.err;
  EXPECT_EQ(pd.rows[0].at("sm_clock_mhz"), "611");
  EXPECT_EQ(Events(pd.rows[0]), "");  // one busy, slow sample is not yet a stretch
  EXPECT_NE(Events(pd.rows[1]).find("power_delivery_low"), std::string::npos) << Events(pd.rows[1]);
  EXPECT_EQ(PowerCells(pd.rows[1]), "53.0,50.0,27.00,22.00,11.00,28.00,22.00,140.00,27.00,231.00,0,2");
  EXPECT_EQ(Events(pd.rows[3]).find("power_delivery_low"), std::string::npos);  // once per stretch
  EXPECT_NE(pd.err.find(" event power_delivery_low\n"), std::string::npos) << pd.err;
  // The same busy, slow GPU on a host without the module: no power evidence, no power_delivery_low.
  Sampled blind = Sample("nospbm", 3, scenario);
  for (const auto& row : blind.rows) EXPECT_EQ(Events(row).find("power_delivery_low"), std::string::npos);
}

}  // namespace
}  // namespace sparkops
