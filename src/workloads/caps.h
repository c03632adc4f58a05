#pragma once
/// Memory caps per workload kind, from flags and environment (docs/checks.md, G6: caps per server),
/// and the verdict rule. Pure.
#include <optional>
#include <string>
#include <vector>

#include "workloads/workload.h"

namespace sparkops {

/// The coexistence threshold (docs/checks.md, G6): a cap that leaves at least half the pool (vLLM at 0.5).
inline constexpr double kCappedFraction = 0.5;
/// vLLM's default --gpu-memory-utilization (vllm/config/cache.py; 0.9 in older releases).
inline constexpr double kVllmDefaultFraction = 0.92;
/// TGI's default --cuda-memory-fraction (launcher/src/main.rs).
inline constexpr double kTgiDefaultFraction = 1.0;

/// capped / near-capacity / uncapped from a cap alone (`reason` says why).
/// capped: fraction <= 0.5, or (no fraction) bytes <= mem_total / 2. A byte cap with MemTotal
/// unknown cannot be shown to leave half the pool: near-capacity.
Verdict JudgeCap(const Cap& cap, std::optional<uint64_t> mem_total, std::string& reason);

/// Sets w.cap, w.verdict, w.reason and w.notes from the main process's argv/env and the group's
/// processes (`members[0]` is the main process; Ollama's runners are among the others).
void SetCapAndVerdict(Workload& w, const std::vector<const ProcessInfo*>& members, std::optional<uint64_t> mem_total);

}  // namespace sparkops
