#pragma once
/// The power/thermal columns of the thermal CSV (issue 18), appended before `event`. Sources: the
/// optional spbm hwmon driver and thermal zones (host/power_rails.h). Absent = empty cell.
#include <string>
#include <vector>

#include "host/power_rails.h"

namespace sparkops {

/// cpu_temp_c, soc_temp_c, sys_power_w, soc_pkg_power_w, cpu_power_w, dc_input_w, pl1_w,
/// pl1_cap_w, syspl1_w, syspl1_cap_w, prochot, pl_level: the registry's "power" group
/// (telemetry/columns.h).
const std::vector<std::string>& PowerCsvColumns();
/// The cells for those columns, in order (°C with 1 decimal, W with 2 decimals, integers);
/// all empty when `p` is null.
std::vector<std::string> PowerCsvCells(const PowerReading* p);

}  // namespace sparkops
