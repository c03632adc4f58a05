#pragma once
/// Host contention as a cause of a slowdown (issue #24): CPU pressure (cpu_contention) and I/O
/// pressure (io_contention) from the sample columns `run`/`sample` write (cpu_pressure_pct,
/// io_pressure_some_pct, ... see telemetry/csv.cc), the job's CPU share, and the top consumers
/// outside the job that `run` recorded as `host_contention` events.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/run_dir.h"
#include "analysis/thermal.h"

namespace sparkops {

/// A span's pressure is high at or above this median (percent of wall time, PSI some avg10, or
/// the runnable-task estimate) and at least kPressureRise points above the stretch before it.
inline constexpr double kPressureHighPct = 20.0;
inline constexpr double kPressureRisePct = 10.0;

/// Whether `lower_name` is one of the contention columns of the thermal CSV (ThermalCsvParser).
bool IsContentionColumn(std::string_view lower_name);
/// Stores cell `v` of the contention column named `lower_name` into `r`; "" on success, else what
/// is wrong with it.
std::string SetContentionCell(ThermalRow& r, std::string_view lower_name, std::string_view v);

struct ContentionFinding {
  std::string cause;  ///< "cpu_contention" or "io_contention"
  std::vector<std::string> evidence;
};

/// Findings over a span (`before`: the rows before it, `span`: its rows, as in Classify); for
/// each cause not found, a "<cause>: why not" line is added to `ruled`.
std::vector<ContentionFinding> FindHostContention(const std::vector<const ThermalRow*>& before,
                                                  const std::vector<const ThermalRow*>& span,
                                                  const std::vector<RunEvent>& events, int64_t t0, int64_t t1,
                                                  std::vector<std::string>* ruled);

}  // namespace sparkops
