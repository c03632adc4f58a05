#include "telemetry/reasons.h"

#include <fmt/format.h>

namespace sparkops {

const std::vector<ClockEventReason>& ClockEventReasons() {
  static const std::vector<ClockEventReason> kAll = {
      {kReasonGpuIdle, "gpu_idle", false},
      {kReasonAppClocks, "app_clocks", false},
      {kReasonSwPowerCap, "sw_power_cap", true},
      {kReasonHwSlowdown, "hw_slowdown", true},
      {kReasonSyncBoost, "sync_boost", false},
      {kReasonSwThermal, "sw_thermal", true},
      {kReasonHwThermal, "hw_thermal", true},
      {kReasonHwPowerBrake, "hw_power_brake", true},
      {kReasonDisplayClocks, "display_clocks", false},
  };
  return kAll;
}

std::vector<std::string> DecodeReasons(uint64_t mask) {
  std::vector<std::string> out;
  for (unsigned bit = 0; bit < 64; ++bit) {
    uint64_t b = 1ULL << bit;
    if (!(mask & b)) continue;
    std::string name = fmt::format("0x{:x}", b);
    for (const auto& r : ClockEventReasons())
      if (r.bit == b) name = r.name;
    out.push_back(name);
  }
  return out;
}

std::vector<std::string> ThrottleReasons(uint64_t mask) {
  static const std::pair<uint64_t, const char*> kOrder[] = {{kReasonSwThermal, "sw_thermal"},
                                                            {kReasonHwThermal, "hw_thermal"},
                                                            {kReasonSwPowerCap, "sw_power_cap"},
                                                            {kReasonHwSlowdown, "hw_slowdown"},
                                                            {kReasonHwPowerBrake, "hw_power_brake"}};
  std::vector<std::string> out;
  for (const auto& [bit, name] : kOrder)
    if (mask & bit) out.push_back(name);
  return out;
}

std::string FormatReasonMask(uint64_t mask) { return fmt::format("0x{:x}", mask); }

}  // namespace sparkops
