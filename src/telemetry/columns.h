#pragma once
/// The one registry of sample columns: every column of the thermal CSV, in header order, with its
/// unit, type, source, how its cell is written, its Prometheus family (if the exporter serves the
/// same reading) and the analyze report's panel (if one draws it). The CSV writer (csv.h,
/// power_csv.h) iterates it; analyze's reader looks the same names up (analysis/thermal.cc); tests
/// check the exporter's families and the report's panels against it. New columns are appended
/// (docs/architecture.md, "How to add a column").
#include <string>
#include <string_view>
#include <vector>

#include "telemetry/sample.h"

namespace sparkops {

struct SampleColumn {
  std::string_view name;        ///< the CSV header name
  std::string_view unit;        ///< "degC", "W", "MHz", "percent", "J", "GiB", "cores", "" (none)
  std::string_view type;        ///< "timestamp", "number", "integer", "hex", "text"
  std::string_view group;       ///< "gpu", "memory", "power" (spbm/thermal zones), "event", "host"
  std::string_view source;      ///< where the reading comes from (docs/telemetry.md has the detail)
  std::string (*cell)(const Sample&);  ///< the cell, "" when absent (never 0 for a missing reading)
  std::string_view prometheus;  ///< the exporter's family for the same reading, "" if none
  std::string_view panel;       ///< the analyze report's panel title, "" if none
};

/// Every column, in header order.
const std::vector<SampleColumn>& SampleColumns();
/// The column named `name`, or null.
const SampleColumn* FindSampleColumn(std::string_view name);

}  // namespace sparkops
