#pragma once
/// What the memory guard (and run's sentinel) did in a run, in words, from events.jsonl
/// (docs/memory-guard.md): shown by `analyze` with how the run ended, and on the report's plots.
#include <optional>
#include <string>
#include <vector>

#include "analysis/run_dir.h"

namespace sparkops {

/// Pure: "the memory guard stopped the job (SIGTERM, then SIGKILL after the grace): MemAvailable
/// 2.0 GiB under the 8.0 GiB floor; the job held 3.1 GiB resident" - or nullopt when it never acted.
/// Flushes that sufficed are counted; a killed `run` (supervisor_lost) is said too.
std::optional<std::string> DescribeGuard(const std::vector<RunEvent>& events);

/// Pure: the short label of one memory_guard / supervisor_lost event for a plot marker ("" for
/// other events): "guard: SIGTERM at 2.0 GiB free".
std::string GuardMarkerLabel(const RunEvent& e);

}  // namespace sparkops
