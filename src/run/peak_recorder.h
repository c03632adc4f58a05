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

/// `sparkops --json plan ARGS`: writes the plan to `out`, problems to `err`, returns the exit code.
/// The command layer supplies it (the plan command lives above this layer).
using PlanCommand = std::function<int(const std::vector<std::string>& args, std::ostream& out, std::ostream& err)>;

/// `plan` run on PLAN_ARGS (split on spaces): its JSON (exit 0 or 1: fits or not), or an Input
/// error with plan's message (a flag or model plan refuses). `run` calls this before the job starts,
/// so a mistyped --plan-args is exit 2 at once, not a note after hours.
Result<std::string> PlanFromArgs(const std::string& plan_args, const PlanCommand& plan);

/// The job cgroup's peak: memory.peak (Linux 5.19), else the largest memory.current sampled.
/// Pages charged to the job's processes; on a GB10 not the driver's GPU allocations.
struct CgroupPeak {
  uint64_t bytes = 0;
  std::string source;  ///< "memory.peak" or "memory.current"
};

/// Writes peak.json (from DIR/thermal.csv, and the job cgroup's peak where there was one) into the
/// run directory; plan.json is written when the run starts (the budget as the pool was before the
/// job took it). Returns "" or what could not be recorded.
std::string RecordPeak(const HostView& ctx, RunRecorder& rec, const std::string& dir,
                       const std::optional<CgroupPeak>& cgroup = std::nullopt);

}  // namespace sparkops
