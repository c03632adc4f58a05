#pragma once
/// `run --limit-from-plan`: the job cgroup's memory.high and memory.max from the plan recorded for
/// the run (plan.json, what `sparkops --json plan` printed). A second line of defence behind the
/// guard (docs/memory-guard.md): cgroup memory counts the pages charged to the job's processes
/// (anonymous, page cache, kernel), not what the NVIDIA driver allocates for the GPU, so on a GB10's
/// unified pool it bounds the job's CPU-side memory only.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/error.h"

namespace sparkops {

/// memory.max is memory.high plus this share of it ...
inline constexpr double kLimitMarginShare = 0.10;
/// ... and at least this many bytes (1 GiB).
inline constexpr uint64_t kLimitMarginMin = uint64_t{1} << 30;

struct PlanLimits {
  uint64_t high = 0;    ///< memory.high, bytes: the plan's high end (verdict_peak_gib)
  uint64_t max = 0;     ///< memory.max, bytes: high + max(10% of high, 1 GiB), never above MemTotal
  bool capped = false;  ///< max (and high, if it was above) lowered to MemTotal
};

/// Pure: the levels from plan.json's text. memory.high = `verdict_peak_gib` (the high end of the
/// process and load peaks), else `range.process_peak_gib.high`, else `process_peak_gib`; both
/// rounded down to 4 KiB pages. `mem_total` (bytes, absent when unknown) caps both. An Input error
/// names the field when the plan has no positive peak.
Result<PlanLimits> LimitsFromPlan(std::string_view plan_json, std::optional<uint64_t> mem_total);

/// Writes memory.high and memory.max in the cgroup directory `dir` (each file must exist: the memory
/// controller is enabled there). An error names the file and why.
Result<void> WriteMemoryLimits(const std::string& dir, std::optional<uint64_t> high, std::optional<uint64_t> max);

}  // namespace sparkops
