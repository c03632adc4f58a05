#include "checks/g4_power.h"

#include <fmt/format.h>

#include "telemetry/power_events.h"

namespace sparkops {

std::vector<std::string> G4PowerLines(const PowerReading& p, bool spark) {
  std::vector<std::string> out;
  if (p.spbm) {
    std::string prochot =
        p.prochot ? (*p.prochot ? "ON (the hardware brake is slowing the SoC)" : "off") : "not reported";
    std::string level = p.pl_level ? std::to_string(*p.pl_level) : "not reported";
    auto dc = p.Rail("dc_input");
    std::string line = fmt::format("spbm: PROCHOT {}, power-limit level {}, DC input {}", prochot, level,
                                   dc ? fmt::format("{:.1f} W", *dc) : "not reported");
    for (const char* l : {"pl1", "syspl1"}) {
      auto e = p.Ewma(l), c = p.Cap(l);
      if (e && c) line += fmt::format(", {} EWMA {:.0f} of {:.0f} W", l, *e, *c);
      else if (c) line += fmt::format(", {} cap {:.0f} W", l, *c);
    }
    out.push_back(line);
  } else if (spark) {
    out.push_back(
        "PROCHOT, power-limit level, DC input and the firmware power limits are not readable: they come from "
        "`spbm`, an optional third-party hwmon kernel module (github.com/antheas/spark_hwmon, installed with "
        "DKMS) that reads the firmware's power budget; NVML does not report them");
  }
  if (p.cpu_temp_c || p.soc_temp_c) {
    std::string t;
    if (p.cpu_temp_c) t = fmt::format("CPU {:.1f} degC ({})", *p.cpu_temp_c, p.cpu_temp_sensor);
    if (p.soc_temp_c)
      t += fmt::format("{}SoC {:.1f} degC ({})", t.empty() ? "" : ", ", *p.soc_temp_c, p.soc_temp_sensor);
    if (p.cpu_temp_c && *p.cpu_temp_c >= kCpuTempHighC) t += "; at or above 95 degC: the OS shuts down at 104.8 degC";
    out.push_back(t);
  }
  return out;
}

}  // namespace sparkops
