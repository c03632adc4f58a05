#pragma once
/// Events from the power/thermal readings (issue 18), added to the `event` column after the GPU
/// ones, in this order:
///  - `prochot_on` / `prochot_off` when PROCHOT (the hardware brake) changes (`prochot_on` also
///    when the first reading finds it on);
///  - `pl_level_change:<old>-><new>` when the power-limit level in force changes;
///  - `power_delivery_low`: DC input below kPowerDeliveryFraction of the SysPL1 cap while the GPU
///    is busy (>= 80 % util) with the SM clock under 900 MHz, for 2 samples in a row; once per
///    stretch (the degraded power-delivery state: clocks stuck at 500-850 MHz, fixed by a power cycle);
///  - `cpu_temp_high`: CPU temperature reaches 95 °C (the OS shuts down at 104.8 °C); once per
///    episode, re-armed when it drops below.
#include <optional>
#include <string>
#include <vector>

#include "telemetry/sample.h"

namespace sparkops {

inline constexpr double kPowerDeliveryFraction = 0.25;
inline constexpr double kPowerDeliveryClockMhz = 900;
inline constexpr double kPowerDeliveryUtilPct = 80;
inline constexpr int kPowerDeliverySamples = 2;
inline constexpr double kCpuTempHighC = 95.0;

/// Pure: the degraded-power-delivery condition for one sample (absent when a reading it needs is
/// missing: no spbm DC input or SysPL1 cap, or no GPU clock/utilization).
std::optional<bool> PowerDeliveryLow(const Sample& s);

class PowerEventDetector {
 public:
  std::vector<std::string> Update(const Sample& s);

 private:
  std::optional<int64_t> prochot_, pl_level_;
  int pd_run_ = 0;
  bool cpu_hot_ = false;
};

}  // namespace sparkops
