#include "telemetry/power_csv.h"

#include <fmt/format.h>

namespace sparkops {
namespace {
std::string Num(const std::optional<double>& v, const char* spec) {
  return v ? fmt::format(fmt::runtime(spec), *v) : std::string();
}
std::string Int(const std::optional<int64_t>& v) { return v ? std::to_string(*v) : std::string(); }
}  // namespace

const std::vector<std::string>& PowerCsvColumns() {
  static const std::vector<std::string> c = {"cpu_temp_c",  "soc_temp_c",   "sys_power_w", "soc_pkg_power_w",
                                             "cpu_power_w", "dc_input_w",   "pl1_w",       "pl1_cap_w",
                                             "syspl1_w",    "syspl1_cap_w", "prochot",     "pl_level"};
  return c;
}

std::vector<std::string> PowerCsvCells(const PowerReading* p) {
  if (!p) return std::vector<std::string>(PowerCsvColumns().size());
  return {Num(p->cpu_temp_c, "{:.1f}"),
          Num(p->soc_temp_c, "{:.1f}"),
          Num(p->Rail("sys_total"), "{:.2f}"),
          Num(p->SocPkgW(), "{:.2f}"),
          Num(p->CpuW(), "{:.2f}"),
          Num(p->Rail("dc_input"), "{:.2f}"),
          Num(p->Ewma("pl1"), "{:.2f}"),
          Num(p->Cap("pl1"), "{:.2f}"),
          Num(p->Ewma("syspl1"), "{:.2f}"),
          Num(p->Cap("syspl1"), "{:.2f}"),
          Int(p->prochot),
          Int(p->pl_level)};
}

}  // namespace sparkops
