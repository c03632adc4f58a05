#pragma once
/// The thermal CSV (`sample`, `run`'s thermal.csv): the columns of the registry in telemetry/columns.h,
/// in its order (docs/telemetry.md). Absent values are empty cells (never `[N/A]`, never 0).
#include <string>
#include <vector>

#include "telemetry/sample.h"

namespace sparkops {

/// Column names, in order (SampleColumns()' names; the header only grows at the end).
const std::vector<std::string>& CsvColumns();
/// The header line, with "\n".
std::string CsvHeader();
/// One row, with "\n", fields quoted per RFC 4180 where they must be (base/csv_field.h). Units: degC, W, MHz, percent,
/// J, GiB (2^30, 3 decimals).
std::string CsvRow(const Sample& s);

}  // namespace sparkops
