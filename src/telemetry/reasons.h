#pragma once
/// NVML clock-event reasons (nvmlClocksEventReason* bits, nvml.h 13.3.29; the same bits as DCGM's
/// DCGM_CLOCKS_THROTTLE_REASON_*). Five of them slow the GPU down against its will ("throttle");
/// idle, application clocks, sync boost and display clock are not throttling (docs/telemetry.md).
#include <cstdint>
#include <string>
#include <vector>

namespace sparkops {

inline constexpr uint64_t kReasonGpuIdle = 0x1;
inline constexpr uint64_t kReasonAppClocks = 0x2;
inline constexpr uint64_t kReasonSwPowerCap = 0x4;
inline constexpr uint64_t kReasonHwSlowdown = 0x8;
inline constexpr uint64_t kReasonSyncBoost = 0x10;
inline constexpr uint64_t kReasonSwThermal = 0x20;
inline constexpr uint64_t kReasonHwThermal = 0x40;
inline constexpr uint64_t kReasonHwPowerBrake = 0x80;
inline constexpr uint64_t kReasonDisplayClocks = 0x100;
inline constexpr uint64_t kThrottleMask =
    kReasonSwPowerCap | kReasonHwSlowdown | kReasonSwThermal | kReasonHwThermal | kReasonHwPowerBrake;

/// One clock-event reason bit: its name and whether it counts as throttling.
struct ClockEventReason {
  uint64_t bit;
  const char* name;  ///< gpu_idle, app_clocks, sw_power_cap, hw_slowdown, sync_boost, sw_thermal, ...
  bool throttling;   ///< one of the five throttle reasons (kThrottleMask)
};
/// The nine known reasons in bit order (the one table: CSV, events, metrics).
const std::vector<ClockEventReason>& ClockEventReasons();

/// Every set bit by name (`gpu_idle`, `app_clocks`, `sw_power_cap`, `hw_slowdown`, `sync_boost`,
/// `sw_thermal`, `hw_thermal`, `hw_power_brake`, `display_clocks`; unknown bits as `0x200`), in
/// bit order.
std::vector<std::string> DecodeReasons(uint64_t mask);
/// The active throttle reasons, thermal first then power: `sw_thermal`, `hw_thermal`,
/// `sw_power_cap`, `hw_slowdown`, `hw_power_brake` (DESIGN's example: `sw_thermal+sw_power_cap`).
std::vector<std::string> ThrottleReasons(uint64_t mask);
/// `"0x20"` (lower-case hex, no padding).
std::string FormatReasonMask(uint64_t mask);

}  // namespace sparkops
