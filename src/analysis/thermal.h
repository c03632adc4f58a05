#pragma once
/// Thermal input for `analyze`: the CSV written by `sparkops sample` / `run` (read by column
/// name, unknown columns ignored, empty cell = absent), or plain
/// `nvidia-smi --query-gpu=timestamp,... --format=csv -l N` output (units and `[N/A]` handled;
/// its zone-less timestamps are local time in the given zone).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/localtime.h"
#include "analysis/power_columns.h"
#include "base/error.h"
#include "telemetry/reasons.h"  // the NVML clock-event reason bits

namespace sparkops {

struct ThermalRow {
  int64_t t_ms = 0;  ///< UTC ms
  std::optional<double> temp_c, power_w, power_limit_w, sm_clock_mhz, sm_clock_max_mhz, util_pct, mem_total_gib,
      mem_available_gib, swap_used_gib, psi_some_avg10, gpu_attributed_gib;
  std::optional<double> page_cache_gib;  ///< Cached + Buffers - Shmem (reclaimable page cache)
  std::optional<double> mem_free_gib;    ///< MemFree (what a flush would add the page cache to)
  std::optional<double> energy_j;  ///< the GPU's total-energy counter (NVML, since driver load), J
  std::optional<uint64_t> reasons;  ///< clock-event reasons bitmask
  std::string throttle;             ///< "+"-joined active throttle reasons ("" when none or absent)
  std::string events;               ///< ";"-joined sampler events
  PowerColumns power;               ///< issue 18: rails, limits, PROCHOT, CPU/SoC temperatures
  // Host contention (issue #24, analysis/contention.h): percent, cores; absent when not sampled.
  std::optional<double> cpu_pressure, io_pressure_some, io_pressure_full, job_cores, other_cores;
  // Who took the job's CPUs (issue 30): a count, a count, cores, percent.
  std::optional<double> job_procs, job_cpus, others_on_job_cpus, cpu_steal_pct;
  std::string pressure_source;      ///< "psi" or "runnable" (what cpu_pressure is), "" when absent
};

struct ThermalSeries {
  std::string format;  ///< "sparkops" or "nvidia-smi"
  std::vector<ThermalRow> rows;
  /// Median spacing of the rows in ms (0 with fewer than two rows).
  int64_t interval_ms = 0;
};

/// Incremental parser: feed lines in order. Errors name `source`, the line and the column.
class ThermalCsvParser {
 public:
  ThermalCsvParser(std::string source, const LocalZone& zone) : source_(std::move(source)), zone_(zone) {}
  Result<bool> AddLine(std::string_view line, uint64_t lineno);
  Result<ThermalSeries> Finish();
  /// The header has been read (rows come next).
  bool has_header() const { return !cols_.empty(); }
  /// Capacity for `rows` rows in all: a hint (at most 4 million; ignored when refused).
  void Reserve(size_t rows);
  /// A record is open: a quoted field went on past the last line fed (a torn last row when no
  /// more lines come; DropPending forgets it).
  bool pending() const { return !pending_.empty(); }
  void DropPending() { pending_.clear(); }

  /// How a header column is read (found by its name; internal to the parser).
  enum Kind { kIgnore, kTime, kNumber, kPower, kContention, kReasons, kThrottle, kEvent, kBit };
  struct Column {
    Kind kind = kIgnore;
    std::optional<double> ThermalRow::*field = nullptr;  ///< kNumber
    PowerField power = nullptr;                          ///< kPower
    uint64_t bit = 0;                                    ///< kBit: the reason bit of an nvidia-smi column
    std::string lower_name;                              ///< kContention
  };

 private:
  Result<bool> AddRecord(std::string_view record, uint64_t lineno);
  std::string source_;
  const LocalZone& zone_;
  std::vector<Column> cols_;  // one per header field, in the header's order
  std::string pending_;       // a record continued by a quoted line end
  uint64_t pending_line_ = 0;
  std::vector<std::string> names_;
  std::string header_;
  bool nvidia_smi_ = false;
  ThermalSeries out_;
};

/// Pure: parses a whole CSV text. A last row without its newline that does not parse is a write
/// cut short (the writer was killed, or the file is still being written) and is ignored; any other
/// bad row is an error.
Result<ThermalSeries> ParseThermalCsv(std::string_view text, const std::string& source, const LocalZone& zone);
/// Streams a CSV file (a torn last row ignored, as above).
Result<ThermalSeries> ReadThermalCsv(const std::string& path, const LocalZone& zone);

/// Names of the throttle reasons set in `bits` among the throttling ones ("sw_thermal+sw_power_cap").
std::string ThrottleNames(uint64_t bits);

/// Measured peaks in bytes; absent when the samples do not hold the reading.
struct MeasuredPeaks {
  std::optional<double> pool_drop;  ///< largest drop of MemAvailable below its first sample (GB10: the GPU's pool too)
  std::optional<double> gpu_process;  ///< largest GPU memory attributed to the job (NVML per-process, where reported)
  std::optional<double> first_available, lowest_available;  ///< MemAvailable at the first sample, and its lowest
};

/// Pure: the peaks of a thermal series (a drop needs two MemAvailable readings).
MeasuredPeaks PeaksFromThermal(const ThermalSeries& s);

}  // namespace sparkops
