#pragma once
/// Reading a thermal CSV back (`analyze`, `run`'s report): the file `sample` writes, located by
/// header names, so older files with fewer columns and files with extra columns still read.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/error.h"
#include "base/timefmt.h"

namespace sparkops {

/// One row as written (units as in the column names); an empty cell is absent.
// Named SampleCsvRow, not ThermalRow: analysis/thermal.h defines sparkops::ThermalRow, and two
// different classes of one name broke the ODR (std::vector<ThermalRow>'s out-of-line members were
// shared between them at link time). Found while writing the fuzz targets.
struct SampleCsvRow {
  SysTime time{};
  std::optional<double> gpu_temp_c, power_w, power_limit_w, sm_clock_mhz, sm_clock_max_mhz, gpu_util_pct, energy_j;
  std::optional<uint64_t> clock_event_reasons;
  std::vector<std::string> throttle;  ///< split on '+'
  std::optional<double> mem_total_gib, mem_available_gib, mem_free_gib, page_cache_gib, swap_used_gib,
      mem_pressure_some_avg10, gpu_attributed_gib;
  std::vector<std::string> events;  ///< split on ';'
};

struct ThermalCsv {
  std::vector<SampleCsvRow> rows;
  /// A last line without its newline that does not parse (power lost mid-write) is dropped and
  /// counted here rather than failing the whole file.
  size_t torn_rows = 0;
};

/// Pure. Input error naming `name`, the line and the column when the header lacks `timestamp`, a
/// row has a different number of cells than the header, or a cell is not a number / timestamp.
Result<ThermalCsv> ParseThermalCsv(std::string_view text, std::string_view name = "thermal CSV");

}  // namespace sparkops
