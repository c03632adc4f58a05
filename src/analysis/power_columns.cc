#include "analysis/power_columns.h"

#include "telemetry/power_csv.h"

namespace sparkops {

int PowerColumnIndex(std::string_view name) {
  const auto& cols = PowerCsvColumns();
  for (size_t i = 0; i < cols.size(); ++i)
    if (cols[i] == name) return static_cast<int>(i);
  return -1;
}

std::optional<double>* PowerColumnSlot(PowerColumns& p, int index) {
  std::optional<double>* slots[] = {&p.cpu_temp_c,  &p.soc_temp_c,   &p.sys_power_w, &p.soc_pkg_power_w,
                                    &p.cpu_power_w, &p.dc_input_w,   &p.pl1_w,       &p.pl1_cap_w,
                                    &p.syspl1_w,    &p.syspl1_cap_w, &p.prochot,     &p.pl_level};
  static_assert(sizeof(slots) / sizeof(slots[0]) == 12);
  return index >= 0 && index < 12 ? slots[index] : nullptr;
}

}  // namespace sparkops
