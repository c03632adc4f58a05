#pragma once
/// The OOM ladder (docs/formulas.md), computed: 1 flush the page cache, 2 shorter packing then smaller batch,
/// 3 method downgrade (full -> bf16 LoRA -> QLoRA; a QLoRA OOM at load/dequantisation -> bf16
/// LoRA when it fits), 4 smaller model or two Sparks (DDP/FSDP, never TP for training).
#include <optional>
#include <string>
#include <vector>

#include "analysis/oom_signature.h"
#include "host/meminfo.h"
#include "memory/planner.h"

namespace sparkops::memory {

struct LadderStep {
  int number = 0;
  std::string title;
  std::string detail;  ///< with the numbers, or why the step does not apply
};

struct Ladder {
  std::vector<LadderStep> steps;  ///< always 4, in the ladder's order
  int next = 1;                   ///< the step to take now
  std::string why_next;
  std::optional<double> page_cache_gib;  ///< reclaimable page cache now (meminfo)
};

/// Reclaimable page cache for step 1 and when it was read: "now" (meminfo) or "at the run's start"
/// (the first sample of a run's thermal CSV, for `analyze`).
struct PageCacheReading {
  std::optional<double> gib;  ///< absent: not reported
  std::string when = "now";
};

/// `plan` absent: only step 1 has numbers. `oom` absent or kNone: no log was given / no OOM text.
/// Step 2 starts with gradient checkpointing when the plan has it off (saves activations, changes no
/// result, costs about one more forward pass per step).
Ladder BuildLadder(const PageCacheReading& cache, const std::optional<Plan>& plan,
                   const std::optional<OomSignature>& oom);
/// The same, with the page cache read from `meminfo` now.
Ladder BuildLadder(const Result<MemInfo>& meminfo, const std::optional<Plan>& plan,
                   const std::optional<OomSignature>& oom);

}  // namespace sparkops::memory
