#pragma once
/// The thermal CSV (`sample`, `run`'s thermal.csv): the columns of docs/telemetry.md in that order, then the
/// extra readings, `event` last. Absent values are empty cells (never `[N/A]`, never 0).
#include <string>
#include <vector>

#include "telemetry/sample.h"

namespace sparkops {

/// Column names, in order: timestamp, gpu_temp_c, power_w, power_limit_w, sm_clock_mhz,
/// clock_event_reasons, throttle, mem_total_gib, mem_available_gib, page_cache_gib, swap_used_gib,
/// mem_pressure_some_avg10, sm_clock_max_mhz, gpu_util_pct, energy_j, gpu_attributed_gib,
/// mem_free_gib, event.
const std::vector<std::string>& CsvColumns();
/// The header line, with "\n".
std::string CsvHeader();
/// One row, with "\n". Units: degC, W, MHz, percent, J, GiB (2^30, 3 decimals).
std::string CsvRow(const Sample& s);

}  // namespace sparkops
