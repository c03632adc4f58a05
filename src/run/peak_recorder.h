#pragma once
/// `run --plan-args "..."`: the job's measured peak beside the plan it was given, for
/// `sparkops plan --calibrate RUN_DIR` (memory/calibrate.h reads the two files written here).
#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "analysis/thermal.h"
#include "base/error.h"
#include "host/host_view.h"
#include "run/run_recorder.h"

namespace sparkops {

/// Measured peaks in bytes; absent when the samples do not hold the reading.
struct MeasuredPeaks {
  std::optional<double> pool_drop;    ///< largest drop of MemAvailable below its first sample (GB10: the GPU's pool too)
  std::optional<double> gpu_process;  ///< largest GPU memory attributed to the job (NVML per-process, where reported)
};

/// Pure: the peaks of a thermal series (a drop needs two MemAvailable readings).
MeasuredPeaks PeaksFromThermal(const ThermalSeries& s);

/// `sparkops --json plan ARGS`: writes the plan to `out`, problems to `err`, returns the exit code.
/// The command layer supplies it (the plan command lives above this layer).
using PlanCommand = std::function<int(const std::vector<std::string>& args, std::ostream& out, std::ostream& err)>;

/// `plan` run on PLAN_ARGS (split on spaces): its JSON (exit 0 or 1: fits or not), or an Input
/// error with plan's message (a flag or model plan refuses). `run` calls this before the job starts,
/// so a mistyped --plan-args is exit 2 at once, not a note after hours.
Result<std::string> PlanFromArgs(const std::string& plan_args, const PlanCommand& plan);

/// Writes plan.json (`plan` run on PLAN_ARGS, args split on spaces) and peak.json (from
/// DIR/thermal.csv) into the run directory. Returns "" or what could not be recorded.
std::string RecordPlanAndPeak(const HostView& ctx, RunRecorder& rec, const std::string& dir, const std::string& plan_args,
                              const PlanCommand& plan);

}  // namespace sparkops
