#include "telemetry/power_csv.h"

#include "telemetry/columns.h"

namespace sparkops {

const std::vector<std::string>& PowerCsvColumns() {
  static const std::vector<std::string> c = [] {
    std::vector<std::string> names;
    for (const SampleColumn& col : SampleColumns())
      if (col.group == "power") names.emplace_back(col.name);
    return names;
  }();
  return c;
}

std::vector<std::string> PowerCsvCells(const PowerReading* p) {
  Sample s;
  if (p) s.power = *p;
  std::vector<std::string> cells;
  for (const SampleColumn& col : SampleColumns())
    if (col.group == "power") cells.push_back(col.cell(s));
  return cells;
}

}  // namespace sparkops
