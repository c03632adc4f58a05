#pragma once
/// Host contention figures for each sample (issue #24): CPU and I/O pressure from PSI
/// (`/proc/pressure/cpu`, `/proc/pressure/io`), or, without PSI (kernel built without it, some
/// containers), an estimate from the runnable-task count in /proc/stat and the CPU count, with
/// /proc/loadavg. `source` says which the figures are.
#include <optional>
#include <string>
#include <string_view>

#include "base/error.h"
#include "host/hostfs.h"

namespace sparkops {

struct HostPressure {
  /// "psi": cpu/io figures are PSI `some`/`full` avg10, percent of wall time stalled.
  /// "runnable": cpu_some is 100 × (runnable - cpus) / runnable, clamped at 0: the share of
  /// runnable tasks that had no CPU at that moment (an estimate, one reading); io figures absent.
  std::string source;
  std::optional<double> cpu_some;  ///< percent
  std::optional<double> io_some;   ///< percent ("psi" only)
  std::optional<double> io_full;   ///< percent ("psi" only; absent on kernels without a full line)
  std::optional<double> load1;     ///< /proc/loadavg 1-minute load, when readable
  std::optional<unsigned> runnable;  ///< /proc/stat procs_running (includes sparkops itself)
  std::optional<unsigned> cpus;      ///< CPUs counted in /proc/stat ("cpuN" lines)
  /// PSI's cumulative stall times (`total=`, microseconds) in seconds ("psi" only): the exporter's
  /// counters, named like node_exporter's pressure collector.
  std::optional<double> cpu_some_total_s, io_some_total_s, io_full_total_s;
};

/// Pure: /proc/loadavg "0.52 0.58 0.59 3/1042 12345" -> 1-minute load. Error naming the field.
Result<double> ParseLoadAvg(std::string_view text);
/// Pure: /proc/stat "procs_running N" and the count of "cpuN" lines. Error when either is missing.
struct RunnableCount {
  unsigned running = 0, cpus = 0;
};
Result<RunnableCount> ParseRunnable(std::string_view text);
/// The runnable estimate of CPU pressure, percent (see HostPressure::source).
double RunnableWaitingPct(unsigned running, unsigned cpus);

/// Reads PSI cpu/io under the HostFs root; falls back to /proc/stat + /proc/loadavg when
/// /proc/pressure/cpu is absent or malformed (`note` then says why). NotFound when neither is
/// readable.
struct HostPressureReading {
  HostPressure p;
  std::string note;  ///< why PSI was not used ("" when it was)
};
Result<HostPressureReading> ReadHostPressure(const HostFs& fs);

}  // namespace sparkops
