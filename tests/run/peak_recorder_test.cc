// run --plan-args: the measured peaks written beside the plan (run/peak_recorder.h).
#include <gtest/gtest.h>

#include "run/peak_recorder.h"

namespace sparkops {
namespace {

ThermalRow Row(std::optional<double> avail, std::optional<double> gpu = std::nullopt) {
  ThermalRow r;
  r.mem_available_gib = avail;
  r.gpu_attributed_gib = gpu;
  return r;
}

TEST(PeakRecorder, PoolDropIsTheLargestFallBelowTheFirstSample) {
  ThermalSeries s;
  s.rows = {Row(100), Row(std::nullopt), Row(70, 12.5), Row(80, 20), Row(95)};
  auto p = PeaksFromThermal(s);
  ASSERT_TRUE(p.pool_drop);
  EXPECT_DOUBLE_EQ(*p.pool_drop, 30.0 * 1073741824.0);
  ASSERT_TRUE(p.gpu_process);
  EXPECT_DOUBLE_EQ(*p.gpu_process, 20.0 * 1073741824.0);
  // One reading is no drop; no GPU attribution is absent, not 0; a rise is a drop of 0.
  ThermalSeries one;
  one.rows = {Row(100)};
  EXPECT_FALSE(PeaksFromThermal(one).pool_drop);
  EXPECT_FALSE(PeaksFromThermal(one).gpu_process);
  ThermalSeries up;
  up.rows = {Row(50), Row(60)};
  EXPECT_EQ(*PeaksFromThermal(up).pool_drop, 0);
}

}  // namespace
}  // namespace sparkops
