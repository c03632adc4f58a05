#pragma once
/// A run that ran out of memory (the log's OOM text) or that the memory guard stopped, told with its
/// numbers: what the job took from the pool at its peak, against which budget, and the OOM ladder
/// worked from there (memory/ladder.h). `analyze`, `run`'s end lines and the HTML report show it.
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "analysis/analyze.h"
#include "analysis/oom_signature.h"
#include "memory/ladder.h"
#include "memory/planner.h"

namespace sparkops {

struct RunMemory {
  std::string trigger;  ///< "oom" (the log's OOM text), "memory_guard" (the guard stopped the job)
  OomSignature oom;     ///< kind kNone when only the guard acted
  std::string stop_reason;  ///< the guard stop's reason (min_available, ..., kernel_nvrm_no_memory); "" without one
  /// From the thermal CSV, GiB; absent without two MemAvailable readings.
  std::optional<double> start_available_gib, lowest_available_gib, pool_peak_gib, gpu_peak_gib;
  /// From the plan of `run --plan-args` (plan.json's budget), GiB; absent without one.
  std::optional<double> budget_gib, planned_peak_gib;
  std::optional<double> guard_floor_gib;  ///< the floor the guard acted on
  /// The job's own memory, GiB (its cgroup's peak, else its resident size at the guard's stop;
  /// CPU-side pages, not the driver's GPU allocations), and where it came from; absent: not recorded.
  std::optional<double> job_own_gib;
  std::string job_own_source;
  memory::Ladder ladder;
  std::string plan_note;  ///< why the run's plan could not be rebuilt ("" when there was none or it was)
  std::string headline;  ///< "the job took 97.0 GiB of the pool at its peak, against a 90.0 GiB budget ..."
};

/// Pure: nullopt when the run neither printed an OOM (`oom` from the log's tail, else the `oom` event
/// `run` recorded) nor was stopped by the guard. `plan`: the run's plan at its recorded budget, when `run --plan-args`
/// gave one.
std::optional<RunMemory> DescribeRunMemory(const AnalysisResult& r, const OomSignature& oom,
                                           const std::optional<memory::Plan>& plan);

/// "memory   the job took ...\n  next: step N. title\n     detail\n  why: ...\n" (text output).
std::string RunMemoryText(const RunMemory& m);
/// Keys: trigger, advice ("oom": the OOM ladder; "driver_error" or "fragmentation": the advice after a
/// driver-side stop, memory::BuildDriverErrorLadder), stop_reason (null without a guard stop), oom (OomSignatureJson,
/// null for a guard stop), start_available_gib, lowest_available_gib, pool_peak_gib, gpu_peak_gib, budget_gib,
/// planned_peak_gib, guard_floor_gib, job_own_gib, job_own_source (null when absent), headline, next_step, why, steps
/// [{step, title, detail}].
nlohmann::json RunMemoryJson(const RunMemory& m);

/// [{step, title, detail}] of the ladder's four steps (`oom --json`, `analyze`'s memory).
nlohmann::json LadderStepsJson(const memory::Ladder& l);
/// {kind, phase, bitsandbytes, line, tried_gib, total_gib, free_gib, process_in_use_gib,
/// allocated_by_torch_gib, reserved_unallocated_gib (null when not printed), killed_pid, killed_name}.
nlohmann::json OomSignatureJson(const OomSignature& s);

/// How much of a log's end is searched for the OOM text (the message is printed last).
inline constexpr size_t kOomTailBytes = 8u << 20;

}  // namespace sparkops
