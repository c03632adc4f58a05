#pragma once
/// Why a slowdown happened: the telemetry over the same time span against the telemetry before
/// it. The causes, their priorities and the finder of each are the table in analysis/causes.h
/// (Causes()); the spbm power causes are found by power_causes.h, host contention by contention.h.
/// Every verdict carries the evidence used and what was ruled out (and why). Thresholds and their
/// sources: docs/analyze.md.
#include <cstdint>
#include <string>
#include <vector>

#include "analysis/run_dir.h"
#include "analysis/thermal.h"

namespace sparkops {

/// Thresholds, with the sources named in docs/analyze.md.
inline constexpr double kTripPointC = 86.0;       ///< GB10 chassis trip point 86-87 °C (inference-atlas PR #225)
inline constexpr double kPdClockMhz = 850.0;      ///< PD-degraded: "below 850 MHz" (spark-gpu-throttle-check)
inline constexpr double kPdBusyUtilPct = 80.0;    ///< "at >= 80% util" (same source)
inline constexpr double kClockDropFactor = 0.9;   ///< clocks "fall": span median < 90% of before
inline constexpr double kMemDropGib = 4.0;        ///< MemAvailable collapsing: down >= 4 GiB and >= 25%
inline constexpr double kSwapRiseGib = 1.0;
inline constexpr double kPsiSomeHigh = 10.0;      ///< /proc/pressure/memory some avg10, percent

struct Classification {
  std::string cause = "unknown";      ///< a name from Causes()
  std::vector<std::string> evidence;   ///< what supports the cause
  std::vector<std::string> ruled_out;  ///< "<cause>: why not" for every other cause
  std::vector<std::string> also;       ///< other causes whose signs were present too
};

/// `t0..t1`: the slowdown's span (UTC ms). `thermal` may be null (no CSV), `events` empty.
Classification Classify(const ThermalSeries* thermal, const std::vector<RunEvent>& events, int64_t t0, int64_t t1);

}  // namespace sparkops
