#include "telemetry/power_events.h"

namespace sparkops {

std::optional<bool> PowerDeliveryLow(const Sample& s) {
  if (!s.power || !s.gpu || !s.gpu->error.empty()) return std::nullopt;
  auto dc = s.power->Rail("dc_input");
  auto cap = s.power->Cap("syspl1");
  const GpuReading& g = *s.gpu;
  if (!dc || !cap || !(*cap > 0) || !g.sm_clock_mhz || !g.util_pct) return std::nullopt;
  return *dc < kPowerDeliveryFraction * *cap && *g.util_pct >= kPowerDeliveryUtilPct &&
         *g.sm_clock_mhz < kPowerDeliveryClockMhz;
}

std::vector<std::string> PowerEventDetector::Update(const Sample& s) {
  std::vector<std::string> ev;
  const PowerReading* p = s.power ? &*s.power : nullptr;
  if (p && p->prochot) {
    bool on = *p->prochot != 0;
    if (on != (prochot_.value_or(0) != 0)) ev.push_back(on ? "prochot_on" : "prochot_off");
    prochot_ = p->prochot;
  }
  if (p && p->pl_level) {
    if (pl_level_ && *pl_level_ != *p->pl_level)
      ev.push_back("pl_level_change:" + std::to_string(*pl_level_) + "->" + std::to_string(*p->pl_level));
    pl_level_ = p->pl_level;
  }
  pd_run_ = PowerDeliveryLow(s).value_or(false) ? pd_run_ + 1 : 0;
  if (pd_run_ == kPowerDeliverySamples) ev.push_back("power_delivery_low");
  if (p && p->cpu_temp_c) {
    bool hot = *p->cpu_temp_c >= kCpuTempHighC;
    if (hot && !cpu_hot_) ev.push_back("cpu_temp_high");
    cpu_hot_ = hot;
  }
  return ev;
}

}  // namespace sparkops
