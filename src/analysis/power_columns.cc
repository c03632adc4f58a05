#include "analysis/power_columns.h"

namespace sparkops {

PowerField PowerColumnField(std::string_view name) {
  struct Col {
    std::string_view name;
    PowerField field;
  };
  // The names telemetry/power_csv.cc writes (PowerCsvColumns); a test checks both lists agree.
  static constexpr Col kCols[] = {
      {"cpu_temp_c", &PowerColumns::cpu_temp_c},
      {"soc_temp_c", &PowerColumns::soc_temp_c},
      {"sys_power_w", &PowerColumns::sys_power_w},
      {"soc_pkg_power_w", &PowerColumns::soc_pkg_power_w},
      {"cpu_power_w", &PowerColumns::cpu_power_w},
      {"dc_input_w", &PowerColumns::dc_input_w},
      {"pl1_w", &PowerColumns::pl1_w},
      {"pl1_cap_w", &PowerColumns::pl1_cap_w},
      {"syspl1_w", &PowerColumns::syspl1_w},
      {"syspl1_cap_w", &PowerColumns::syspl1_cap_w},
      {"prochot", &PowerColumns::prochot},
      {"pl_level", &PowerColumns::pl_level},
  };
  for (const Col& c : kCols)
    if (c.name == name) return c.field;
  return nullptr;
}

}  // namespace sparkops
