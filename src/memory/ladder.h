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

/// Which advice a ladder is: the OOM ladder, or the advice after a stop for a driver-side sign
/// (issue 33), where the host itself may wedge and the flush is not the first step.
enum class LadderKind { kOom, kDriverNoMemory, kFragmentation };

struct Ladder {
  LadderKind kind = LadderKind::kOom;
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
  /// MemFree and MemAvailable read with it (GiB), when known: MemAvailable already counts most
  /// of the page cache, so a flush lifts it only by AvailableLift (issue 30).
  std::optional<double> free_gib, available_gib;
  /// How far dropping the cache would lift MemAvailable: MemFree + cache - MemAvailable, at least
  /// 0; absent when either reading is.
  std::optional<double> AvailableLift() const;
  /// The stop was judged on MemAvailable: the memory guard's floor (the kernel's OOM killer is
  /// known from the signature). Then only a lift of MemAvailable makes the flush worth it.
  bool judged_on_available = false;
};

/// Step 1 (the flush) needs at least 1 GiB of cache. After a guard stop or the kernel's OOM killer
/// (judged on MemAvailable, which already counts most of the cache) it is the step to take only
/// when it would lift MemAvailable by at least 1 GiB; otherwise (a CUDA allocation failed, or the
/// kind is not known: what CUDA reports free on GB10 leaves the page cache out) it stays first.
/// `plan` absent: only step 1 has numbers. `oom` absent or kNone: no log was given / no OOM text.
/// Step 2 starts with gradient checkpointing when the plan has it off (saves activations, changes no
/// result, costs about one more forward pass per step).
Ladder BuildLadder(const PageCacheReading& cache, const std::optional<Plan>& plan,
                   const std::optional<OomSignature>& oom);
/// The same, with the page cache read from `meminfo` now.
Ladder BuildLadder(const Result<MemInfo>& meminfo, const std::optional<Plan>& plan,
                   const std::optional<OomSignature>& oom);

/// What the driver-error advice works from (all absent when not known).
struct DriverStopFacts {
  LadderKind kind = LadderKind::kDriverNoMemory;  ///< kDriverNoMemory or kFragmentation
  std::optional<double> lowest_available_gib;     ///< MemAvailable at its lowest during the run
  std::optional<double> floor_gib;                ///< the guard's floor
};

/// The advice after the driver logged NVRM NV_ERR_NO_MEMORY (or the guard stopped the job for a lack of
/// free 2 MiB blocks): 1 save and stop (the host may wedge: NVIDIA/open-gpu-kernel-modules #1358), 2 reboot
/// before the next run if the kernel log repeats the record, 3 reduce the job's memory (the OOM
/// ladder's steps 2-4, worked from `plan` when given), 4 flush the page cache only when it would lift
/// MemAvailable (at least 1 GiB reclaimable; for fragmentation also compaction). Next is always 1.
/// Pure (docs/memory-guard.md).
Ladder BuildDriverErrorLadder(const PageCacheReading& cache, const DriverStopFacts& f, const std::optional<Plan>& plan);

const char* ToString(LadderKind k);

}  // namespace sparkops::memory
