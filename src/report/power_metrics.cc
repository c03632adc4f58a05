#include "report/power_metrics.h"

#include "report/prometheus.h"

namespace sparkops {

const std::vector<MetricFamily>& PowerMetricFamilies() {
  static const std::vector<MetricFamily> f = {
      {"sparkops_power_watts", "gauge",
       "Power of a rail (sys_total, soc_pkg, dc_input, gpu, cpu_p, ...) from the spbm hwmon driver, watts."},
      {"sparkops_power_limit_watts", "gauge", "Cap of a firmware power limiter (pl1, pl2, syspl1, syspl2), watts."},
      {"sparkops_power_limiter_ewma_watts", "gauge",
       "The EWMA power a firmware power limiter compares with its cap (pl1, pl2, syspl1, syspl2), watts."},
      {"sparkops_energy_joules_total", "counter",
       "Energy counter of a rail from the spbm hwmon driver, joules (32-bit mJ in firmware: it wraps, read it with "
       "rate())."},
      {"sparkops_prochot", "gauge", "1 while PROCHOT (the hardware power/thermal brake) is asserted, else 0."},
      {"sparkops_power_limit_level", "gauge", "The firmware power-limit level in force (spbm pl_level)."},
      {"sparkops_temperature_celsius", "gauge",
       "Temperature of a sensor outside NVML: spbm channels, thermal zones (zone<N>_<type>), other hwmon devices."},
      {"sparkops_cpu_temperature_celsius", "gauge",
       "The hottest CPU temperature sensor (label sensor), degrees Celsius."},
  };
  return f;
}

std::vector<MetricPoint> PowerMetricPoints(const PowerReading& p) {
  std::vector<MetricPoint> out;
  for (const auto& [rail, w] : p.rails_w) out.push_back({"sparkops_power_watts", {{"rail", rail}}, w});
  for (const auto& [l, w] : p.caps_w) out.push_back({"sparkops_power_limit_watts", {{"limiter", l}}, w});
  for (const auto& [l, w] : p.ewma_w) out.push_back({"sparkops_power_limiter_ewma_watts", {{"limiter", l}}, w});
  for (const auto& [rail, uj] : p.energy_uj)
    out.push_back({"sparkops_energy_joules_total", {{"rail", rail}}, static_cast<double>(uj) / 1e6});
  if (p.prochot) out.push_back({"sparkops_prochot", {}, *p.prochot != 0 ? 1.0 : 0.0});
  if (p.pl_level) out.push_back({"sparkops_power_limit_level", {}, static_cast<double>(*p.pl_level)});
  for (const auto& [sensor, c] : p.temps_c) out.push_back({"sparkops_temperature_celsius", {{"sensor", sensor}}, c});
  if (p.cpu_temp_c) out.push_back({"sparkops_cpu_temperature_celsius", {{"sensor", p.cpu_temp_sensor}}, *p.cpu_temp_c});
  return out;
}

}  // namespace sparkops
