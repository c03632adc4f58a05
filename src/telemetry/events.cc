#include "telemetry/events.h"

#include <cmath>

#include "base/strings.h"
#include "telemetry/reasons.h"

namespace sparkops {

std::string KernelEventName(const KernelSign& k) {
  std::string e = KernelSignInfo(k.kind).event;
  if (k.xid) e += ":" + std::to_string(*k.xid);
  else if (k.kind == KernelSignKind::kOomKill && k.pid) e += ":" + std::to_string(*k.pid);
  return e;
}

std::vector<std::string> EventDetector::Update(const Sample& s) {
  std::vector<std::string> ev;
  const GpuReading* g = s.gpu && s.gpu->error.empty() ? &*s.gpu : nullptr;

  std::optional<std::string> throttle;
  if (g && g->clock_event_reasons) throttle = Join(ThrottleReasons(*g->clock_event_reasons), "+");
  if (throttle) {
    if (throttle != throttle_.value_or(""))
      ev.push_back(throttle->empty() ? "throttle_end" : "throttle_start:" + *throttle);
    throttle_ = throttle;
  }

  bool pd = g && g->sm_clock_mhz && g->util_pct && throttle && throttle->empty() && *g->sm_clock_mhz < kPdClockMhz &&
            *g->util_pct >= kPdUtilPct;
  pd_run_ = pd ? pd_run_ + 1 : 0;
  if (pd_run_ == kPdSamples) ev.push_back("pd_degraded");

  if (g && g->temp_c && g->power_w) {
    double t = *g->temp_c, p = *g->power_w;
    bool extends = !thermal_run_.empty() && t >= thermal_run_.back().first &&
                   std::fabs(p - thermal_run_.front().second) <= kThermalPowerBand * thermal_run_.front().second;
    if (!extends) thermal_run_.clear(), thermal_fired_ = false;
    thermal_run_.emplace_back(t, p);
    if (!thermal_fired_ && static_cast<int>(thermal_run_.size()) >= kThermalSamples &&
        t - thermal_run_.front().first >= kThermalRiseC) {
      ev.push_back("thermal_signature");
      thermal_fired_ = true;
    }
  } else {
    thermal_run_.clear(), thermal_fired_ = false;
  }

  if (g && g->temp_c) {
    bool hot = *g->temp_c >= kHotC;
    if (hot && !hot_) ev.push_back("hot");
    hot_ = hot;
  }
  auto power = power_.Update(s);  // issue 18: after the GPU events
  ev.insert(ev.end(), power.begin(), power.end());
  for (const KernelSign& k : s.kernel) ev.push_back(KernelEventName(k));  // issue 33: kernel log, last
  return ev;
}

}  // namespace sparkops
