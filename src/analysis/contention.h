#pragma once
/// Host contention as a cause of a slowdown (issues #24, 30): who took the job's CPUs
/// (cpu_contention: others on its CPUs; job_processes: its own new processes), storage
/// (io_contention: I/O pressure, the job's own stalls told apart) and steal (cpu_steal), from the
/// sample columns `run`/`sample` write (telemetry/columns.cc) and the `host_contention` records of
/// the processes involved (analysis/culprits.h ranks them).
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
/// Others took the job's CPUs (cpu_contention) when, on the job's CPUs (or host-wide in runs
/// without others_on_job_cpus), they used at least kCoresRise more cores than before (or half of
/// what the job's share lost, at least 0.1, when that is less: a busy host) while the
/// job's share fell by kJobShareFall (a fraction) or the job's CPUs were ≥ 90 % busy. PSI is
/// evidence; it gates only where the shares were not recorded (`sample`).
inline constexpr double kCoresRise = 0.3;
/// ... and only when the job used at least this many cores before (an I/O-bound job's share falls
/// because it waits, not because others took its CPU).
inline constexpr double kJobCpuBound = 0.25;
inline constexpr double kJobShareFall = 0.15;
/// A process of the job's own whose CPU rose by this many cores is named (job_processes).
inline constexpr double kOwnRise = 0.2;
/// An outside process whose CPU rose by this many cores may be named (cpu_contention): a hog
/// pinned beside the job on a busy CPU gets a small share of it.
inline constexpr double kCulpritRise = 0.05;
/// cpu_steal: steal at or above kStealHighPct and kStealRisePct points above before.
inline constexpr double kStealHighPct = 5.0;
inline constexpr double kStealRisePct = 3.0;

/// Whether `lower_name` is one of the contention columns of the thermal CSV (ThermalCsvParser).
bool IsContentionColumn(std::string_view lower_name);
/// Stores cell `v` of the contention column named `lower_name` into `r`; "" on success, else what
/// is wrong with it.
std::string SetContentionCell(ThermalRow& r, std::string_view lower_name, std::string_view v);

struct ContentionFinding {
  std::string cause;  ///< "job_processes", "cpu_contention", "io_contention" or "cpu_steal"
  std::vector<std::string> evidence;
  bool weak = false;  ///< cpu_contention from PSI alone (the shares could not judge): ranks after io_contention
};

/// Findings over a span (`before`: the rows before it, `span`: its rows, as in Classify); for
/// each cause not found, a "<cause>: why not" line is added to `ruled`.
std::vector<ContentionFinding> FindHostContention(const std::vector<const ThermalRow*>& before,
                                                  const std::vector<const ThermalRow*>& span,
                                                  const std::vector<RunEvent>& events, int64_t t0, int64_t t1,
                                                  std::vector<std::string>* ruled);

}  // namespace sparkops
