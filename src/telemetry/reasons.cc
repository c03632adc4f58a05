#include "telemetry/reasons.h"

#include <fmt/format.h>

namespace sparkops {

std::vector<std::string> DecodeReasons(uint64_t mask) {
  static const char* const kNames[] = {"gpu_idle",   "app_clocks", "sw_power_cap",   "hw_slowdown",   "sync_boost",
                                       "sw_thermal", "hw_thermal", "hw_power_brake", "display_clocks"};
  std::vector<std::string> out;
  for (unsigned bit = 0; bit < 64; ++bit) {
    if (!(mask & (1ULL << bit))) continue;
    out.push_back(bit < std::size(kNames) ? kNames[bit] : fmt::format("0x{:x}", 1ULL << bit));
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
