#include "host/power_rails.h"

#include <gtest/gtest.h>

#include "test_util.h"

namespace sparkops {
namespace {

using testing::Fixture;

TEST(ParseHwmonFiles, ChannelsByLabelWithUnitsAndGaps) {
  HwmonDevice d = ParseHwmonFiles({{"name", "spbm\n"},
                                   {"power7_label", "dc_input\n"},
                                   {"power7_input", "26000000\n"},
                                   {"power12_label", "pl1"},
                                   {"power12_input", "138000000"},
                                   {"power12_cap", "140000000"},
                                   {"power3_input", "5000000"},  // unlabeled: named power3
                                   {"power4_label", "gpu"},
                                   {"power4_input", "-EIO"},  // unreadable: skipped
                                   {"energy1_label", "pkg"},
                                   {"energy1_input", "123456"},
                                   {"temp2_label", "soc"},
                                   {"temp2_input", "-5000"},
                                   {"prochot", "1\n"},
                                   {"pl_level", "x"},
                                   {"uevent", "junk"}},
                                  {"prochot", "pl_level"});
  EXPECT_EQ(d.name, "spbm");
  ASSERT_NE(d.Find("power", "dc_input"), nullptr);
  EXPECT_EQ(d.Find("power", "dc_input")->input, 26000000);
  ASSERT_NE(d.Find("power", "pl1"), nullptr);
  EXPECT_EQ(d.Find("power", "pl1")->cap, 140000000);
  EXPECT_NE(d.Find("power", "power3"), nullptr);
  EXPECT_EQ(d.Find("power", "gpu"), nullptr);
  EXPECT_EQ(d.Find("energy", "pkg")->input, 123456);
  EXPECT_EQ(d.Find("temp", "soc")->input, -5000);
  EXPECT_EQ(d.attrs.count("prochot"), 1u);
  EXPECT_EQ(d.attrs.count("pl_level"), 0u);  // not an integer: absent, not 0
}

TEST(ParseThermalZone, Table) {
  struct Case {
    const char* type;
    const char* temp;
    bool ok;
    double c;
  };
  const Case cases[] = {
      {"acpitz\n", "41000\n", true, 41.0},
      {"cpu-thermal", "-2500", true, -2.5},
      {"x", "", false, 0},
      {"x", "hot", false, 0},
      {"x", "99999999999", false, 0},
      {"x", "-300000", false, 0},
  };
  for (const auto& c : cases) {
    auto z = ParseThermalZone(3, c.type, c.temp);
    EXPECT_EQ(z.has_value(), c.ok) << c.type << " " << c.temp;
    if (z && c.ok) {
      EXPECT_DOUBLE_EQ(z->temp_c, c.c);
    }
  }
}

TEST(EnergyDeltaUj, WrapResetAndPlainDelta) {
  struct Case {
    uint64_t prev, cur;
    double dt;
    std::optional<uint64_t> want;
    const char* what;
  };
  const Case cases[] = {
      {1000, 5000, 1, 4000, "plain"},
      {5000, 5000, 1, 0, "idle"},
      {kEnergyWrapUj - 30'000'000, 20'000'000, 1, 50'000'000, "32-bit mJ wrap: 50 J in 1 s"},
      {900'000'000, 1000, 1, std::nullopt, "reset: a wrap would mean ~4 GJ in 1 s"},
      {kEnergyWrapUj + 5, 1, 1, std::nullopt, "decrease from above the wrap point: reset"},
      {10, 5, 0, std::nullopt, "decrease with no time elapsed"},
  };
  for (const auto& c : cases) EXPECT_EQ(EnergyDeltaUj(c.prev, c.cur, c.dt), c.want) << c.what;
}

TEST(EnergyRates, AveragesFromCountersAcrossAWrap) {
  EnergyRates rates;
  PowerReading a;
  a.energy_uj = {{"pkg", kEnergyWrapUj - 10'000'000}, {"gpu", 100}};
  rates.Update(a, 100.0);
  EXPECT_TRUE(a.avg_w.empty());  // one reading: no average yet
  PowerReading b;
  b.energy_uj = {{"pkg", 30'000'000}, {"gpu", 10'000'100}};
  rates.Update(b, 102.0);
  EXPECT_DOUBLE_EQ(b.avg_w.at("pkg"), 20.0);  // 40 J over 2 s, across the wrap
  EXPECT_DOUBLE_EQ(b.avg_w.at("gpu"), 5.0);
  b.rails_w["soc_pkg"] = 99;
  EXPECT_DOUBLE_EQ(*b.SocPkgW(), 20.0);  // the energy average wins over the oscillating rail
}

TEST(EnergyRates, ACounterThatHasNotMovedIsNoAverage) {
  EnergyRates rates;
  PowerReading a;
  a.energy_uj = {{"pkg", 1'000'000}};
  rates.Update(a, 10.0);
  PowerReading same = a;  // read again within the firmware's ~100 ms update: not 0 W
  same.rails_w["soc_pkg"] = 17;
  rates.Update(same, 10.05);
  EXPECT_TRUE(same.avg_w.empty());
  EXPECT_DOUBLE_EQ(*same.SocPkgW(), 17.0);  // the instantaneous rail stands
  PowerReading moved;
  moved.energy_uj = {{"pkg", 3'000'000}};
  rates.Update(moved, 10.1);
  EXPECT_NEAR(moved.avg_w.at("pkg"), 20.0, 1e-9);  // 2 J since the last change, 0.1 s ago
}

TEST(ReadPowerReading, SpbmEwmaLayout) {
  PowerReading r = ReadPowerReading(HostFs(Fixture("power/spbm_ewma")));
  EXPECT_TRUE(r.spbm);
  EXPECT_EQ(r.spbm_layout, "ewma");
  EXPECT_DOUBLE_EQ(*r.Rail("dc_input"), 26);
  EXPECT_DOUBLE_EQ(*r.Rail("sys_total"), 25);
  EXPECT_DOUBLE_EQ(*r.SocPkgW(), 17);  // no second reading: the rail
  EXPECT_DOUBLE_EQ(*r.CpuW(), 11);  // cpu_p 9 + cpu_e 2
  EXPECT_DOUBLE_EQ(*r.Cap("syspl1"), 231);
  EXPECT_DOUBLE_EQ(*r.Ewma("syspl1"), 24);
  EXPECT_DOUBLE_EQ(*r.Cap("pl1"), 140);
  EXPECT_EQ(r.rails_w.count("pl1"), 0u);
  EXPECT_DOUBLE_EQ(r.budgets_w.at("gpu"), 170);
  EXPECT_EQ(r.energy_uj.at("pkg"), 4'294'960'000'000u);
  EXPECT_EQ(r.prochot, 0);
  EXPECT_EQ(r.pl_level, 0);
  EXPECT_DOUBLE_EQ(*r.cpu_temp_c, 53);
  EXPECT_EQ(r.cpu_temp_sensor, "cpu_p_clu0");
  EXPECT_DOUBLE_EQ(*r.soc_temp_c, 50);
  EXPECT_EQ(r.temps_c.count("tj_max_c"), 0u);  // headroom, not a temperature
  EXPECT_DOUBLE_EQ(r.temps_c.at("zone0_acpitz"), 41);
  EXPECT_EQ(r.temps_c.count("zone6_acpitz"), 0u);  // unreadable zone
  EXPECT_DOUBLE_EQ(r.temps_c.at("nvme_Composite"), 38.85);
}

TEST(ReadPowerReading, SpbmCapLayoutWithAcpiAttributes) {
  PowerReading r = ReadPowerReading(HostFs(Fixture("power/spbm_cap_acpi")));
  EXPECT_TRUE(r.spbm);
  EXPECT_EQ(r.spbm_layout, "cap");
  EXPECT_DOUBLE_EQ(*r.Ewma("pl1"), 138);
  EXPECT_DOUBLE_EQ(*r.Cap("pl1"), 140);
  EXPECT_DOUBLE_EQ(*r.Ewma("syspl1"), 117);
  EXPECT_DOUBLE_EQ(*r.Cap("syspl1"), 231);
  EXPECT_EQ(r.prochot, 1);  // from /sys/bus/platform/devices/NVDA8800:00
  EXPECT_EQ(r.pl_level, 1);
  EXPECT_FALSE(r.CpuW());  // cpu_p/cpu_e hidden by this driver: absent, not 0
  EXPECT_DOUBLE_EQ(*r.cpu_temp_c, 96.5);
}

TEST(ReadPowerReading, WithoutSpbmOnlyTemperatures) {
  PowerReading r = ReadPowerReading(HostFs(Fixture("power/nospbm")));
  EXPECT_FALSE(r.spbm);
  EXPECT_TRUE(r.rails_w.empty());
  EXPECT_FALSE(r.prochot);
  EXPECT_FALSE(r.pl_level);
  EXPECT_FALSE(r.cpu_temp_c);  // ACPI zones are board temperatures, not the CPU
  EXPECT_DOUBLE_EQ(r.temps_c.at("mlx5_asic"), 52);
  EXPECT_DOUBLE_EQ(r.temps_c.at("mlx5_asic#2"), 51);  // two devices, one name: both kept
  EXPECT_EQ(r.temps_c.size(), 4u + 6u);
}

TEST(ReadPowerReading, X86CoretempIsTheCpu) {
  PowerReading r = ReadPowerReading(HostFs(Fixture("power/x86")));
  ASSERT_TRUE(r.cpu_temp_c);
  EXPECT_DOUBLE_EQ(*r.cpu_temp_c, 63);
  EXPECT_FALSE(r.soc_temp_c);
}

TEST(ReadPowerReading, NothingUnderAnEmptyRoot) {
  PowerReading r = ReadPowerReading(HostFs(Fixture("discrete")));
  EXPECT_TRUE(r.empty());
}

}  // namespace
}  // namespace sparkops
