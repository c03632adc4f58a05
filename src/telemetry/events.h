#pragma once
/// Turns a series of samples into explicit events (the `event` CSV column, stderr, events.jsonl).
/// Rules (issue 4; sources in docs/telemetry.md, "Events"):
///  - `throttle_start:<a+b>` when the set of active throttle reasons changes to a non-empty set,
///    `throttle_end` when it becomes empty (unknown reasons change nothing);
///  - `pd_degraded`: SM clock < 1400 MHz while utilization >= 80 % and no throttle reason, for 2
///    samples in a row (emitted once per stretch; spark-gpu-throttle-check's thresholds);
///  - `thermal_signature`: temperature rising (never falling) over >= 3 consecutive samples by
///    >= 3 degC in total while power stays within +-10 % of the stretch's first sample (the G4 signature,
///    docs/checks.md); once per stretch;
///  - `hot`: temperature reaches 86 degC (a reported GB10 trip point, 86-87 degC); once per
///    episode, re-armed when it drops below;
///  - issue 33: one event per kernel-log record the sampler found since the last sample:
///    `kernel_nvrm_no_memory`, `kernel_xid:<code>`, `kernel_oom_kill:<pid>`, `kernel_hung_task`,
///    `kernel_lockup` (host/kmsg.h's table), after every other event.
#include <optional>
#include <string>
#include <vector>

#include "telemetry/power_events.h"
#include "telemetry/sample.h"

namespace sparkops {

inline constexpr unsigned kPdClockMhz = 1400;
inline constexpr unsigned kPdUtilPct = 80;
inline constexpr int kPdSamples = 2;
inline constexpr int kThermalSamples = 3;
inline constexpr double kThermalRiseC = 3.0;
inline constexpr double kThermalPowerBand = 0.10;
inline constexpr double kHotC = 86.0;

/// The event string of one kernel-log sign ("kernel_xid:109", "kernel_oom_kill:48211").
std::string KernelEventName(const KernelSign& k);

class EventDetector {
 public:
  /// The events this sample starts, in a fixed order (throttle, pd_degraded, thermal_signature, hot).
  std::vector<std::string> Update(const Sample& s);

 private:
  std::optional<std::string> throttle_;  ///< last known throttle set, "+"-joined ("" = none)
  int pd_run_ = 0;
  std::vector<std::pair<double, double>> thermal_run_;  ///< (temp, power) of the current rising stretch
  bool thermal_fired_ = false;
  bool hot_ = false;
  PowerEventDetector power_;  ///< prochot_on/off, pl_level_change, power_delivery_low, cpu_temp_high
};

}  // namespace sparkops
