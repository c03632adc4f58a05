// Classification rules, one synthetic telemetry table per cause: rows every 10 s, the slowdown
// span is t in [1000 s, 1300 s]; the rows before it are the comparison.
#include <gtest/gtest.h>

#include <functional>

#include "analysis/classify.h"

namespace sparkops {
namespace {

constexpr int64_t kT0 = 1000'000, kT1 = 1300'000;

ThermalSeries Make(const std::function<void(ThermalRow&, bool in_span)>& fill) {
  ThermalSeries t;
  t.format = "sparkops";
  t.interval_ms = 10000;
  for (int64_t ms = 700'000; ms <= 1400'000; ms += 10000) {
    ThermalRow r;
    r.t_ms = ms;
    r.temp_c = 70;
    r.power_w = 85;
    r.sm_clock_mhz = 2400;
    r.util_pct = 97;
    r.mem_available_gib = 95;
    r.swap_used_gib = 0;
    r.psi_some_avg10 = 0.1;
    r.reasons = 0;
    fill(r, ms >= kT0 && ms <= kT1);
    t.rows.push_back(r);
  }
  return t;
}

bool Has(const std::vector<std::string>& v, const std::string& needle) {
  for (auto& s : v)
    if (s.find(needle) != std::string::npos) return true;
  return false;
}

TEST(Classify, PowerCapReasonBit) {
  auto t = Make([](ThermalRow& r, bool in) {
    if (in) {
      r.reasons = kReasonSwPowerCap;
      r.throttle = "sw_power_cap";
      r.sm_clock_mhz = 1900;
    }
  });
  auto c = Classify(&t, {}, kT0, kT1);
  EXPECT_EQ(c.cause, "power_cap");
  EXPECT_TRUE(Has(c.ruled_out, "thermal: no thermal reason bit"));
}

// Seen on a real H200 (scripts/gpu-check.sh): a steady bf16 job holds the GPU at its 700 W limit,
// so sw_power_cap is on in every sample; a second job then halves the step rate while power and
// clocks stay put. The bit was there before the slowdown: it is not the cause, contention is.
TEST(Classify, PowerCapBitOnAllAlongIsNotTheCause) {
  auto t = Make([](ThermalRow& r, bool in) {
    r.reasons = kReasonSwPowerCap;
    r.throttle = "sw_power_cap";
    r.power_w = 692;
    r.power_limit_w = 700;
    r.sm_clock_mhz = in ? 1590 : 1530;
  });
  RunEvent e;
  e.t_ms = kT0 - 1000;
  e.type = "process_start";
  e.record = {
      {"pid", 537}, {"name", "python"}, {"kind", "trainer"}, {"verdict", "uncapped"}, {"pool_gib", 0.4856224060058594}};
  auto c = Classify(&t, {e}, kT0, kT1);
  EXPECT_EQ(c.cause, "contention");
  EXPECT_TRUE(Has(c.evidence, "uncapped python process started (pid 537, 0.5 GiB in the pool)"))
      << ::testing::PrintToString(c.evidence);
  EXPECT_TRUE(
      Has(c.ruled_out, "power_cap: the power-cap reason was already on in 20 of 20 samples before the slowdown"))
      << ::testing::PrintToString(c.ruled_out);
  EXPECT_TRUE(Has(c.ruled_out, "SM clock 1530 → 1590 MHz"));
  EXPECT_EQ(Classify(&t, {}, kT0, kT1).cause, "unknown");
  // The same bit on all along, but the clocks fall in the span: the cap did bite harder.
  auto fell = Make([](ThermalRow& r, bool in) {
    r.reasons = kReasonSwPowerCap;
    r.sm_clock_mhz = in ? 1200 : 1530;
  });
  EXPECT_EQ(Classify(&fell, {}, kT0, kT1).cause, "power_cap");
  // Thermal: a bit on in a few samples before and in most of the span is new enough.
  int k = 0;
  auto more = Make([&k](ThermalRow& r, bool in) { r.reasons = (in || ++k % 10 == 0) ? kReasonSwThermal : 0; });
  EXPECT_EQ(Classify(&more, {}, kT0, kT1).cause, "thermal");
}

TEST(Classify, PdDegradedClocksFarDownBusyNoBit) {
  auto t = Make([](ThermalRow& r, bool in) {
    if (in) {
      r.sm_clock_mhz = 507;  // spark-gpu-throttle-check sample row: 507 MHz at 11.1 W
      r.power_w = 11.1;
    }
  });
  auto c = Classify(&t, {}, kT0, kT1);
  EXPECT_EQ(c.cause, "pd_degraded");
  EXPECT_TRUE(Has(c.evidence, "SM clock 2400 → 507 MHz"));
  // the same clocks with the GPU idle are not PD-degraded
  auto idle = Make([](ThermalRow& r, bool in) {
    if (in) {
      r.sm_clock_mhz = 507;
      r.util_pct = 5;
    }
  });
  EXPECT_NE(Classify(&idle, {}, kT0, kT1).cause, "pd_degraded");
}

TEST(Classify, MemoryPressureFromMemAvailableSwapAndPsi) {
  auto t = Make([](ThermalRow& r, bool in) {
    if (in) {
      r.mem_available_gib = 3.5;
      r.swap_used_gib = 6;
      r.psi_some_avg10 = 42;
    }
  });
  auto c = Classify(&t, {}, kT0, kT1);
  EXPECT_EQ(c.cause, "memory_pressure");
  EXPECT_TRUE(Has(c.evidence, "MemAvailable 95.0 → 3.5 GiB"));
  EXPECT_TRUE(Has(c.evidence, "swap used"));
  EXPECT_TRUE(Has(c.evidence, "pressure stall"));
}

TEST(Classify, ThermalSignatureWithoutABit) {
  auto t = Make([](ThermalRow& r, bool in) {
    if (in) {
      r.temp_c = 87;
      r.sm_clock_mhz = 2000;
    }
  });
  auto c = Classify(&t, {}, kT0, kT1);
  EXPECT_EQ(c.cause, "thermal");
  EXPECT_TRUE(Has(c.evidence, "no thermal reason bit, but the G4 signature"));
}

TEST(Classify, NothingChangedIsUnknownWithEverythingRuledOut) {
  auto t = Make([](ThermalRow&, bool) {});
  auto c = Classify(&t, {}, kT0, kT1);
  EXPECT_EQ(c.cause, "unknown");
  for (const char* cause : {"thermal:", "power_cap:", "pd_degraded:", "memory_pressure:", "contention:"})
    EXPECT_TRUE(Has(c.ruled_out, cause)) << cause;
}

TEST(Classify, ContentionNeedsAnUncappedOrNearCapacityProcessNearTheSpan) {
  auto t = Make([](ThermalRow&, bool) {});
  auto ev = [](int64_t ms, const char* verdict) {
    RunEvent e;
    e.t_ms = ms;
    e.type = "process_start";
    e.record = {{"pid", 7}, {"name", "ollama"}, {"verdict", verdict}};
    return e;
  };
  EXPECT_EQ(Classify(&t, {ev(kT0 - 20'000, "near-capacity")}, kT0, kT1).cause, "contention");
  EXPECT_EQ(Classify(&t, {ev(kT0 + 50'000, "uncapped")}, kT0, kT1).cause, "contention");
  EXPECT_EQ(Classify(&t, {ev(kT0 + 50'000, "capped")}, kT0, kT1).cause, "unknown");
  EXPECT_EQ(Classify(&t, {ev(kT0 - 600'000, "uncapped")}, kT0, kT1).cause, "unknown");  // long before
}

TEST(Classify, NoTelemetrySaysWhatIsMissing) {
  auto c = Classify(nullptr, {}, kT0, kT1);
  EXPECT_EQ(c.cause, "unknown");
  EXPECT_TRUE(Has(c.ruled_out, "no thermal CSV"));
  ThermalSeries empty;
  auto d = Classify(&empty, {}, kT0, kT1);
  EXPECT_TRUE(Has(d.ruled_out, "no thermal samples over this span"));
}

TEST(Classify, IoContentionFromIoPressure) {
  ThermalSeries t;
  t.format = "sparkops";
  t.interval_ms = 10000;
  for (int64_t ms = 700'000; ms <= 1400'000; ms += 10000) {
    ThermalRow r;
    r.t_ms = ms;
    r.temp_c = 70, r.sm_clock_mhz = 2400, r.util_pct = 97, r.reasons = 0;
    const bool span = ms >= 1000'000 && ms <= 1300'000;
    r.cpu_pressure = 3;
    r.io_pressure_some = span ? 64 : 2;
    r.pressure_source = "psi";
    t.rows.push_back(r);
  }
  Classification c = Classify(&t, {}, 1000'000, 1300'000);
  EXPECT_EQ(c.cause, "io_contention");
  ASSERT_FALSE(c.evidence.empty());
  EXPECT_NE(c.evidence[0].find("I/O pressure 64 %"), std::string::npos) << c.evidence[0];
}

}  // namespace
}  // namespace sparkops
