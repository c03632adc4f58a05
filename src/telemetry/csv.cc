#include "telemetry/csv.h"

#include "base/csv_field.h"
#include "base/strings.h"
#include "telemetry/columns.h"

namespace sparkops {

const std::vector<std::string>& CsvColumns() {
  static const std::vector<std::string> c = [] {
    std::vector<std::string> names;
    for (const SampleColumn& col : SampleColumns()) names.emplace_back(col.name);
    return names;
  }();
  return c;
}

std::string CsvHeader() { return Join(CsvColumns(), ",") + "\n"; }

std::string CsvRow(const Sample& s) {
  std::vector<std::string> cells;
  cells.reserve(SampleColumns().size());
  for (const SampleColumn& col : SampleColumns()) cells.push_back(col.cell(s));
  return CsvJoin(cells) + "\n";  // RFC 4180: a cell with a comma, quote or line end is quoted
}

}  // namespace sparkops
