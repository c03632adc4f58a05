#pragma once
/// What the memory guard (and run's sentinel) did in a run, in words, from events.jsonl
/// (docs/memory-guard.md): shown by `analyze` with how the run ended, and on the report's plots.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analysis/run_dir.h"

namespace sparkops {

/// Pure: "the memory guard stopped the job (SIGTERM, then SIGKILL after the grace): MemAvailable
/// 2.0 GiB under the 8.0 GiB floor; the job held 3.1 GiB resident" - or nullopt when it never acted.
/// Flushes that sufficed are counted; a killed `run` (supervisor_lost) is said too.
std::optional<std::string> DescribeGuard(const std::vector<RunEvent>& events);

/// What run's sentinel recorded after `sparkops run` itself died (`supervisor_lost` stages,
/// docs/memory-guard.md). Times are UTC ms. The job's exit status is never among them: only run,
/// its parent, could read it.
struct SentinelEnd {
  int64_t lost_ms = 0;              ///< `terminate`: run found gone, SIGTERM sent to the job's group
  std::optional<int64_t> kill_ms;   ///< `kill`: SIGKILL after the grace (absent: not needed or not yet)
  std::optional<int64_t> done_ms;   ///< `done`: the job's output ended / its group was gone
  std::optional<double> grace_s;    ///< the grace the sentinel waited before SIGKILL
  std::string detail;               ///< analyze's end line
};

/// Pure: the end of a run whose `sparkops run` was killed, from the sentinel's records; nullopt
/// without a `supervisor_lost` `terminate` record.
std::optional<SentinelEnd> DescribeSupervisorLost(const std::vector<RunEvent>& events);

/// Pure: the short label of one memory_guard / supervisor_lost event for a plot marker ("" for
/// other events): "guard: SIGTERM at 2.0 GiB free".
std::string GuardMarkerLabel(const RunEvent& e);

}  // namespace sparkops
