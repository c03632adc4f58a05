#pragma once
/// The power/thermal columns of the thermal CSV as `analyze` reads them back (issue 18; written by
/// telemetry/power_csv.h). Empty cell = absent.
#include <optional>
#include <string_view>

namespace sparkops {

struct PowerColumns {
  std::optional<double> cpu_temp_c, soc_temp_c, sys_power_w, soc_pkg_power_w, cpu_power_w, dc_input_w, pl1_w, pl1_cap_w,
      syspl1_w, syspl1_cap_w, prochot, pl_level;
};

using PowerField = std::optional<double> PowerColumns::*;
/// The field a power column (telemetry/power_csv.h) is read into, by the column's name; null for
/// another column.
PowerField PowerColumnField(std::string_view name);

}  // namespace sparkops
