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

/// The column's index among PowerColumns' fields (the CSV order), or -1 for another column.
int PowerColumnIndex(std::string_view name);
/// The field for that index (0..11).
std::optional<double>* PowerColumnSlot(PowerColumns& p, int index);

}  // namespace sparkops
