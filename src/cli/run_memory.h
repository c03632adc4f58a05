#pragma once
/// The memory part of a run's analysis (report/run_memory.h) for `analyze` and `run`'s end: the OOM
/// text from the log's tail, and the run's plan rebuilt from meta.json's `plan_args` at the budget
/// plan.json recorded when the run started.
#include <optional>

#include "analysis/analyze.h"
#include "cli/context.h"
#include "report/run_memory.h"

namespace sparkops {

/// nullopt when the log holds no OOM and the guard did not stop the job (or the log is unreadable).
std::optional<RunMemory> RunMemoryOf(Context& ctx, const AnalysisResult& r);

}  // namespace sparkops
